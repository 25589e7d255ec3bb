// Matrix products: MatMul, Gemm, MatMulInteger (+ com.onnxlens MatMulIntegerToFloat),
// QLinearMatMul, Einsum, Det, com.onnxlens FusedMatMul and PackedMatMul, and ONNX Runtime's
// com.microsoft FusedMatMul (scale and transposes folded) and FusedGemm (Gemm + activation).
//
// Every product goes through one batched GEMM on Eigen row-major maps, split over the thread
// pool by batch and row blocks. Types Eigen has no fast path for compute in a wider type:
// float16/bfloat16 in float, 8/16-bit integers in 32-bit integers (wrap-around results agree).
// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's AVX-512 double GEMM packing, and
// -Wuninitialized inside its own intrinsics when Eigen's vectorised exp (the GELU epilogue's erf
// on doubles) is inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "DnnlInt8MatMul.h"
#include "DnnlMatMul.h"
#include "DnnlPackedMatMul.h"
#include "GeluOp.h"
#include "OpFamilies.h"
#include "PackedMatMulWeights.h"
#include "ReduceNumeric.h"
#include "ShapeManipulationCopy.h"
#include "onnxlens/engine/GraphOptimizer.h"

namespace onnxlens::engine::ops {
namespace {

template <class T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

DataType computeTypeOf(DataType t) {
    switch (t) {
        case DataType::Float16:
        case DataType::BFloat16:
            return DataType::Float;
        case DataType::Int8:
        case DataType::Int16:
            return DataType::Int32;
        case DataType::UInt8:
        case DataType::UInt16:
            return DataType::UInt32;
        default:
            return t;
    }
}

template <class F>
decltype(auto) dispatchCompute(DataType type, F&& f) {
    switch (type) {
        case DataType::Float:
            return f.template operator()<float>();
        case DataType::Double:
            return f.template operator()<double>();
        case DataType::Int32:
            return f.template operator()<std::int32_t>();
        case DataType::Int64:
            return f.template operator()<std::int64_t>();
        case DataType::UInt32:
            return f.template operator()<std::uint32_t>();
        case DataType::UInt64:
            return f.template operator()<std::uint64_t>();
        default:
            throwUnsupportedType(type, "matrix product");
    }
}

Tensor toComputeType(const Tensor& t) {
    DataType c = computeTypeOf(t.dtype());
    return c == t.dtype() ? t : t.castTo(c);
}

// One GEMM per batch entry: C[i] (M x N) = alpha * op(A[i]) * op(B[i]) (+ C[i] when
// `accumulate`), with A[i] at a + aOffsets[i] and B[i] at b + bOffsets[i]; C is contiguous.
struct GemmProblem {
    std::int64_t m = 0, k = 0, n = 0;
    bool transA = false, transB = false;
    std::vector<std::int64_t> aOffsets, bOffsets;  // one per batch entry
};

template <class T>
void runGemm(KernelContext& ctx, const GemmProblem& p, const T* a, const T* b, T* c, T alpha,
             bool accumulate) {
    auto batch = static_cast<std::int64_t>(p.aOffsets.size());
    if (batch == 0 || p.m == 0 || p.n == 0) return;
    std::int64_t threads = ctx.pool().threads();
    std::int64_t rowBlocks = batch >= threads ? 1 : std::min<std::int64_t>(p.m, threads);
    std::int64_t rowsPerBlock = (p.m + rowBlocks - 1) / rowBlocks;
    double cost = 2.0 * static_cast<double>(rowsPerBlock) * static_cast<double>(p.k * p.n);
    ctx.pool().parallelFor(batch * rowBlocks, cost, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t task = begin; task < end; ++task) {
            std::int64_t i = task / rowBlocks;
            std::int64_t r0 = (task % rowBlocks) * rowsPerBlock;
            std::int64_t rows = std::min(rowsPerBlock, p.m - r0);
            if (rows <= 0) continue;
            auto ai = static_cast<std::size_t>(i);
            Eigen::Map<RowMajorMatrix<T>> out(c + i * p.m * p.n + r0 * p.n, rows, p.n);
            if (p.k == 0) {
                if (!accumulate) out.setZero();
                continue;
            }
            // Stored shapes: A is (M x K) or (K x M) when transposed; B likewise.
            Eigen::Map<const RowMajorMatrix<T>> aStored(a + p.aOffsets[ai], p.transA ? p.k : p.m,
                                                        p.transA ? p.m : p.k);
            Eigen::Map<const RowMajorMatrix<T>> bStored(b + p.bOffsets[ai], p.transB ? p.n : p.k,
                                                        p.transB ? p.k : p.n);
            auto compute = [&](const auto& lhs, const auto& rhs) {
                if (accumulate)
                    out.noalias() += alpha * (lhs * rhs);
                else if (alpha == T(1))
                    out.noalias() = lhs * rhs;
                else
                    out.noalias() = alpha * (lhs * rhs);
            };
            auto withRhs = [&](const auto& lhs) {
                if (p.transB)
                    compute(lhs, bStored.transpose());
                else
                    compute(lhs, bStored);
            };
            if (p.transA)
                withRhs(aStored.transpose().middleRows(r0, rows));
            else
                withRhs(aStored.middleRows(r0, rows));
        }
    });
}

// MatMul's numpy semantics: 1-D operands gain (and lose) a dimension, batch dims broadcast.
struct MatMulPlan {
    GemmProblem gemm;
    Shape outputShape;
};

MatMulPlan planMatMul(const Shape& a, const Shape& b, const char* op) {
    require(!a.empty() && !b.empty(), [&] {
        return std::string(op) + ": operands must have rank >= 1, got " + shapeToString(a) +
               " and " + shapeToString(b);
    });
    Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
    Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
    MatMulPlan plan;
    GemmProblem& g = plan.gemm;
    g.m = a2[a2.size() - 2];
    g.k = a2.back();
    g.n = b2.back();
    require(b2[b2.size() - 2] == g.k, [&] {
        return std::string(op) + ": inner dimensions differ: " + shapeToString(a) + " x " +
               shapeToString(b);
    });
    Shape batchA(a2.begin(), a2.end() - 2), batchB(b2.begin(), b2.end() - 2);
    Shape batch = broadcastShapes(batchA, batchB);
    auto stridesA = broadcastStrides(batchA, batch);
    auto stridesB = broadcastStrides(batchB, batch);
    std::int64_t count = shapeElementCount(batch);
    std::vector<std::int64_t> index(batch.size(), 0);
    std::int64_t offA = 0, offB = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        g.aOffsets.push_back(offA * g.m * g.k);
        g.bOffsets.push_back(offB * g.k * g.n);
        for (std::size_t d = batch.size(); d-- > 0;) {
            offA += stridesA[d];
            offB += stridesB[d];
            if (++index[d] < batch[d]) break;
            offA -= stridesA[d] * batch[d];
            offB -= stridesB[d] * batch[d];
            index[d] = 0;
        }
    }
    plan.outputShape = batch;
    if (a.size() > 1) plan.outputShape.push_back(g.m);
    if (b.size() > 1) plan.outputShape.push_back(g.n);
    return plan;
}

// A * B with MatMul semantics in the compute type of the operands (which must match).
Tensor matMulTensors(KernelContext& ctx, const Tensor& a, const Tensor& b, const char* op) {
    require(a.dtype() == b.dtype(), [&] {
        return std::string(op) + ": operand types differ (" + dataTypeName(a.dtype()) + " and " +
               dataTypeName(b.dtype()) + ")";
    });
    MatMulPlan plan = planMatMul(a.shape(), b.shape(), op);
    Tensor ca = toComputeType(a), cb = toComputeType(b);
    Tensor y(ca.dtype(), plan.outputShape);
    dispatchCompute(ca.dtype(), [&]<class T>() {
        runGemm<T>(ctx, plan.gemm, ca.data<T>(), cb.data<T>(), y.data<T>(), T(1), false);
    });
    return y;
}

// Adds the bias (N values, or null) to every row of y and applies the activation, in y's compute
// type: FusedMatMul's epilogue where the product did not fold it in.
void applyMatMulEpilogue(KernelContext& ctx, const Tensor* bias, MatMulActivation activation,
                         Tensor& y) {
    require(isFloatingPoint(y.dtype()) || activation == MatMulActivation::None,
            "FusedMatMul: Gelu needs floating-point operands");
    dispatchCompute(y.dtype(), [&]<class T>() {
        T* out = y.data<T>();
        const std::int64_t n = y.rank() == 0 ? 1 : y.dim(y.rank() - 1);
        if (bias) {
            Tensor cb = toComputeType(*bias);
            const T* pb = cb.data<T>();
            ctx.pool().parallelFor(y.numel() / std::max<std::int64_t>(n, 1), static_cast<double>(n),
                                   [&](std::int64_t r0, std::int64_t r1) {
                                       for (std::int64_t r = r0; r < r1; ++r)
                                           for (std::int64_t j = 0; j < n; ++j)
                                               out[r * n + j] += pb[j];
                                   });
        }
        if constexpr (std::is_floating_point_v<T>) {
            if (activation == MatMulActivation::Gelu)
                ctx.pool().parallelFor(y.numel(), 12.0, [&](std::int64_t begin, std::int64_t end) {
                    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> v(out + begin, end - begin);
                    v = geluErfArray(v).eval();
                });
        }
    });
}

MatMulActivation matMulActivationOf(const NodeInfo& node, const char* op) {
    const std::string activation = node.getString("activation", "");
    require(activation.empty() || activation == "Gelu",
            [&] { return std::string(op) + ": unsupported activation \"" + activation + "\""; });
    return activation == "Gelu" ? MatMulActivation::Gelu : MatMulActivation::None;
}

// MatMul, and com.onnxlens FusedMatMul (the optimizer's MatMul + Add(bias) [+ Gelu]):
// Y = activation(A x B + bias), bias a constant of N values added to every row.
class MatMulKernel : public Kernel {
  public:
    explicit MatMulKernel(const NodeInfo& node)
        : activation_(matMulActivationOf(node, "FusedMatMul")) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        if (bias) {
            require(bias->dtype() == a.dtype(), "FusedMatMul: the bias has another type than A");
            require(bias->rank() == 1 && b.rank() >= 1 && bias->dim(0) == b.dim(b.rank() - 1), [&] {
                return "FusedMatMul: the bias must have one value per column of B, got " +
                       shapeToString(bias->shape());
            });
        }
        if (a.dtype() == DataType::Float && b.dtype() == DataType::Float) {
            MatMulPlan plan = planMatMul(a.shape(), b.shape(), "MatMul");
            Tensor y(DataType::Float, plan.outputShape);
            if (dnnl_.run(a, b, bias ? bias->data<float>() : nullptr, activation_, y)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        Tensor y = matMulTensors(ctx, a, b, "MatMul");
        if (bias || activation_ != MatMulActivation::None)
            applyMatMulEpilogue(ctx, bias, activation_, y);
        outputs[0] = Value(y.dtype() == a.dtype() ? y : y.castTo(a.dtype()));
    }

  private:
    MatMulActivation activation_ = MatMulActivation::None;
    DnnlMatMul dnnl_;
};

// com.onnxlens PackedMatMul (the optimizer's pack-matmul-weights pass): a float MatMul or
// FusedMatMul whose constant weights B [K, N] are stored in the packed layout of
// PackedMatMulWeights.h. Inputs A [..., K], the packed B, optional bias [N]; attributes k, n
// and activation ("" or "Gelu"). Y [..., N] = activation(A x B + bias).
class PackedMatMulKernel : public Kernel {
  public:
    explicit PackedMatMulKernel(const NodeInfo& node)
        : k_(node.getInt("k")),
          n_(node.getInt("n")),
          activation_(matMulActivationOf(node, "PackedMatMul")) {
        require(k_ >= 1 && n_ >= 1, "PackedMatMul: k and n must be positive");
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& packed = inputTensor(inputs, 1);
        const Tensor* bias = optionalInputTensor(inputs, 2);
        require(a.dtype() == DataType::Float && a.rank() >= 1 && a.dim(a.rank() - 1) == k_, [&] {
            return "PackedMatMul: A must be float [..., " + std::to_string(k_) + "], got " +
                   std::string(dataTypeName(a.dtype())) + " " + shapeToString(a.shape());
        });
        require(packed.dtype() == DataType::Float &&
                    packedMatMulBlocksOf(packed.shape(), k_, n_).has_value(),
                [&] {
                    return "PackedMatMul: the packed weights " + shapeToString(packed.shape()) +
                           " do not hold K = " + std::to_string(k_) + ", N = " + std::to_string(n_);
                });
        require(
            !bias || (bias->dtype() == DataType::Float && bias->rank() == 1 && bias->dim(0) == n_),
            [&] { return "PackedMatMul: the bias must be float [" + std::to_string(n_) + "]"; });
        Shape shape = a.shape();
        shape.back() = n_;
        const std::int64_t rows = a.numel() / k_;
        Tensor y(DataType::Float, shape);
        if (rows == 0 ||
            dnnl_.run(a.data<float>(), rows, k_, n_, packed, bias ? bias->data<float>() : nullptr,
                      activation_, y.data<float>(), &ctx.pool())) {
            outputs[0] = Value(std::move(y));
            return;
        }
        const Tensor plain = unpacked_.of(packed, k_, n_);
        Tensor product = matMulTensors(ctx, a.reshaped({rows, k_}), plain, "PackedMatMul");
        if (bias || activation_ != MatMulActivation::None)
            applyMatMulEpilogue(ctx, bias, activation_, product);
        outputs[0] = Value(product.reshaped(shape));
    }

  private:
    std::int64_t k_, n_;
    MatMulActivation activation_;
    DnnlPackedMatMul dnnl_;
    UnpackedMatMulWeights unpacked_;  // without oneDNN
};

class GemmKernel : public Kernel {
  public:
    explicit GemmKernel(const NodeInfo& node)
        : alpha_(node.getFloat("alpha", 1.0f)),
          beta_(node.getFloat("beta", 1.0f)),
          transA_(node.getInt("transA", 0) != 0),
          transB_(node.getInt("transB", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 1);
        const Tensor* c = optionalInputTensor(inputs, 2);
        require(a.rank() == 2 && b.rank() == 2, [&] {
            return "Gemm: A and B must be 2-D, got " + shapeToString(a.shape()) + " and " +
                   shapeToString(b.shape());
        });
        require(a.dtype() == b.dtype(), "Gemm: A and B types differ");
        GemmProblem g;
        g.transA = transA_;
        g.transB = transB_;
        g.m = transA_ ? a.dim(1) : a.dim(0);
        g.k = transA_ ? a.dim(0) : a.dim(1);
        g.n = transB_ ? b.dim(0) : b.dim(1);
        std::int64_t kb = transB_ ? b.dim(1) : b.dim(0);
        require(kb == g.k, [&] {
            return "Gemm: inner dimensions differ: A " + shapeToString(a.shape()) +
                   (transA_ ? " (transposed)" : "") + ", B " + shapeToString(b.shape()) +
                   (transB_ ? " (transposed)" : "");
        });
        g.aOffsets = {0};
        g.bOffsets = {0};
        Shape outShape{g.m, g.n};
        bool withC = c != nullptr && beta_ != 0.0;
        // The Linear form (alpha 1, C a row of N values added with beta 1) runs on oneDNN.
        if (a.dtype() == DataType::Float && b.dtype() == DataType::Float && alpha_ == 1.0 &&
            (!withC || (beta_ == 1.0 && c->dtype() == DataType::Float && c->numel() == g.n &&
                        c->numel() > 1 && c->dim(c->rank() - 1) == g.n))) {
            Tensor y(DataType::Float, outShape);
            if (dnnl_.run(a, b, withC ? c->data<float>() : nullptr, MatMulActivation::None, y,
                          transA_, transB_)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        Tensor ca = toComputeType(a), cb = toComputeType(b);
        Tensor y = Tensor::zeros(ca.dtype(), outShape);
        if (withC) {
            require(c->rank() <= 2 && broadcastShapes(c->shape(), outShape) == outShape, [&] {
                return "Gemm: C of shape " + shapeToString(c->shape()) + " does not broadcast to " +
                       shapeToString(outShape);
            });
            fillBroadcastC(toComputeType(*c), y);
        }
        dispatchCompute(ca.dtype(), [&]<class T>() {
            runGemm<T>(ctx, g, ca.data<T>(), cb.data<T>(), y.data<T>(), static_cast<T>(alpha_),
                       withC);
        });
        outputs[0] = Value(y.dtype() == a.dtype() ? y : y.castTo(a.dtype()));
    }

  private:
    // y = beta * C broadcast to y's [M, N] shape.
    void fillBroadcastC(const Tensor& c, Tensor& y) const {
        require(c.dtype() == y.dtype(), "Gemm: C type differs from A and B");
        auto strides = broadcastStrides(c.shape(), y.shape());
        std::int64_t m = y.dim(0), n = y.dim(1);
        dispatchCompute(y.dtype(), [&]<class T>() {
            const T* src = c.data<T>();
            T* dst = y.data<T>();
            auto beta = static_cast<T>(beta_);
            for (std::int64_t i = 0; i < m; ++i)
                for (std::int64_t j = 0; j < n; ++j)
                    dst[i * n + j] = beta * src[i * strides[0] + j * strides[1]];
        });
    }

    double alpha_, beta_;
    bool transA_, transB_;
    DnnlMatMul dnnl_;
};

// com.microsoft FusedMatMul (ONNX Runtime's MatMul with a folded scale and transposes):
// Y = alpha * op(A) x op(B) with MatMul's broadcasting. transA/transB swap the last two dims of
// an operand of rank >= 2 (ignored for vectors, as ONNX Runtime does); transBatchA/transBatchB
// (both operands of the same rank >= 3) read the operand as [d0, b..., last] holding
// [b..., d0, last], i.e. its first dim moved behind the batch dims, before the swap.
class MsFusedMatMulKernel : public Kernel {
  public:
    explicit MsFusedMatMulKernel(const NodeInfo& node)
        : alpha_(node.getFloat("alpha", 1.0f)),
          transA_(node.getInt("transA", 0) != 0),
          transB_(node.getInt("transB", 0) != 0),
          transBatchA_(node.getInt("transBatchA", 0) != 0),
          transBatchB_(node.getInt("transBatchB", 0) != 0) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& a = inputTensor(inputs, 0);
        const Tensor& b = inputTensor(inputs, 1);
        require(isFloatingPoint(a.dtype()) && a.dtype() == b.dtype(), [&] {
            return std::string(
                       "FusedMatMul: A and B must be floating-point tensors of one type, got ") +
                   dataTypeName(a.dtype()) + " and " + dataTypeName(b.dtype());
        });
        if (transBatchA_ || transBatchB_)
            require(a.rank() >= 3 && a.rank() == b.rank(), [&] {
                return "FusedMatMul: transBatchA/transBatchB need A and B of one rank >= 3, got " +
                       shapeToString(a.shape()) + " and " + shapeToString(b.shape());
            });
        const Tensor la = transBatchA_ ? batchDimsFirst(ctx, a) : a;
        const Tensor lb = transBatchB_ ? batchDimsFirst(ctx, b) : b;
        const bool ta = transA_ && la.rank() >= 2, tb = transB_ && lb.rank() >= 2;
        MatMulPlan plan =
            planMatMul(logicalShape(la.shape(), ta), logicalShape(lb.shape(), tb), "FusedMatMul");
        plan.gemm.transA = ta;
        plan.gemm.transB = tb;
        if (la.dtype() == DataType::Float) {
            Tensor y(DataType::Float, plan.outputShape);
            if (dnnl_.run(la, lb, nullptr, MatMulActivation::None, y, ta, tb, alpha_)) {
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        Tensor ca = toComputeType(la), cb = toComputeType(lb);
        Tensor y(ca.dtype(), plan.outputShape);
        dispatchCompute(ca.dtype(), [&]<class T>() {
            if (plan.gemm.k == 0) std::fill_n(y.data<T>(), y.numel(), T(0));
            runGemm<T>(ctx, plan.gemm, ca.data<T>(), cb.data<T>(), y.data<T>(),
                       static_cast<T>(alpha_), false);
        });
        outputs[0] = Value(y.dtype() == a.dtype() ? y : y.castTo(a.dtype()));
    }

  private:
    static Shape logicalShape(Shape shape, bool transposed) {
        if (transposed) std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
        return shape;
    }

    // [d0, d1, ..., d(r-2), d(r-1)] read as [d1, ..., d(r-2), d0, d(r-1)] (a copy).
    static Tensor batchDimsFirst(KernelContext& ctx, const Tensor& t) {
        const auto strides = shapeStrides(t.shape());
        const std::size_t r = strides.size();
        StridedView view;
        for (std::size_t d = 1; d + 1 < r; ++d) {
            view.shape.push_back(t.shape()[d]);
            view.strides.push_back(strides[d]);
        }
        view.shape.push_back(t.shape()[0]);
        view.strides.push_back(strides[0]);
        view.shape.push_back(t.shape()[r - 1]);
        view.strides.push_back(strides[r - 1]);
        return copyStridedView(t, view, &ctx.pool());
    }

    float alpha_;
    bool transA_, transB_, transBatchA_, transBatchB_;
    DnnlMatMul dnnl_;
};

// The activation of com.microsoft FusedGemm: attribute `activation` (one of ONNX Runtime's
// element-wise functors) with its parameters in activation_alpha / activation_beta /
// activation_gamma. Parameters the activation reads are required (ONNX Runtime leaves them
// unset otherwise).
struct GemmActivation {
    enum class Kind {
        Relu,
        Tanh,
        Sigmoid,
        LeakyRelu,
        HardSigmoid,
        Elu,
        Selu,
        Softplus,
        Softsign,
        ThresholdedRelu,
        ParametricSoftplus,
        ScaledTanh
    };
    Kind kind = Kind::Relu;
    double alpha = 0, beta = 0, gamma = 0;

    static GemmActivation fromNode(const NodeInfo& node) {
        require(node.hasAttribute("activation"), "FusedGemm: the attribute activation is missing");
        const std::string name = node.getString("activation");
        struct Entry {
            const char* name;
            Kind kind;
            bool alpha, beta, gamma;
        };
        static constexpr Entry kTable[] = {
            {"Relu", Kind::Relu, false, false, false},
            {"Tanh", Kind::Tanh, false, false, false},
            {"Sigmoid", Kind::Sigmoid, false, false, false},
            {"LeakyRelu", Kind::LeakyRelu, true, false, false},
            {"HardSigmoid", Kind::HardSigmoid, true, true, false},
            {"Elu", Kind::Elu, true, false, false},
            {"Selu", Kind::Selu, true, false, true},
            {"Softplus", Kind::Softplus, false, false, false},
            {"Softsign", Kind::Softsign, false, false, false},
            {"ThresholdedRelu", Kind::ThresholdedRelu, true, false, false},
            {"ParametricSoftplus", Kind::ParametricSoftplus, true, true, false},
            {"ScaledTanh", Kind::ScaledTanh, true, true, false},
        };
        for (const Entry& e : kTable) {
            if (name != e.name) continue;
            GemmActivation a;
            a.kind = e.kind;
            auto param = [&](bool needed, const char* attr) -> double {
                if (!needed) return 0;
                require(node.hasAttribute(attr), [&] {
                    return "FusedGemm: activation " + name + " needs the attribute " + attr;
                });
                return node.getFloat(attr);
            };
            a.alpha = param(e.alpha, "activation_alpha");
            a.beta = param(e.beta, "activation_beta");
            a.gamma = param(e.gamma, "activation_gamma");
            return a;
        }
        throw EngineError("FusedGemm: unknown activation '" + name + "'");
    }

    template <class T>
    T apply(T x) const {
        const T a = static_cast<T>(alpha), b = static_cast<T>(beta), g = static_cast<T>(gamma);
        switch (kind) {
            case Kind::Relu:
                return x > T(0) ? x : T(0);
            case Kind::Tanh:
                return std::tanh(x);
            case Kind::Sigmoid:
                return T(1) / (T(1) + std::exp(-x));
            case Kind::LeakyRelu:
                return x >= T(0) ? x : a * x;
            case Kind::HardSigmoid:
                return std::max(T(0), std::min(T(1), a * x + b));
            case Kind::Elu:
                return x >= T(0) ? x : a * (std::exp(x) - T(1));
            case Kind::Selu:  // as ONNX Runtime writes it (a negative alpha included)
                return g * (std::max(x, T(0)) + std::min(a * (std::exp(x) - T(1)), T(0)));
            case Kind::Softplus:
                return softplus(x);
            case Kind::Softsign:
                return x / (T(1) + std::abs(x));
            case Kind::ThresholdedRelu:
                return x > a ? x : T(0);
            case Kind::ParametricSoftplus:
                return a * softplus(b * x);
            case Kind::ScaledTanh:
                return a * std::tanh(b * x);
        }
        return x;
    }

    template <class T>
    static T softplus(T x) {  // log(1 + exp(x)) without overflow
        return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    }
};

// com.microsoft FusedGemm (ONNX Runtime's Gemm + activation): Y = activation(Gemm(A, B, C)) with
// Gemm's attributes and inputs; the product is Gemm's kernel, the activation one pass after it.
class MsFusedGemmKernel : public Kernel {
  public:
    explicit MsFusedGemmKernel(const NodeInfo& node)
        : gemm_(node), activation_(GemmActivation::fromNode(node)) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(isFloatingPoint(inputTensor(inputs, 0).dtype()), [&] {
            return std::string("FusedGemm: A must be a floating-point tensor, got ") +
                   dataTypeName(inputTensor(inputs, 0).dtype());
        });
        gemm_.run(ctx, inputs, outputs);
        const Tensor y = outputs[0].tensor();
        // The product's own fresh buffer (float, double), or a float copy of a 16-bit one.
        Tensor cy = toComputeType(y);
        auto activate = [&]<class T>() {
            T* v = cy.data<T>();
            ctx.pool().parallelFor(cy.numel(), 8.0, [&](std::int64_t begin, std::int64_t end) {
                for (std::int64_t i = begin; i < end; ++i) v[i] = activation_.apply(v[i]);
            });
        };
        if (cy.dtype() == DataType::Double)
            activate.template operator()<double>();
        else
            activate.template operator()<float>();
        outputs[0] = Value(cy.dtype() == y.dtype() ? cy : cy.castTo(y.dtype()));
    }

  private:
    GemmKernel gemm_;
    GemmActivation activation_;
};

// (x - zeroPoint) as int32 for an 8-bit quantized operand. The zero point is a scalar or one
// value per row (axis -2, for A) or per column (axis -1, for B) of the matrices.
Tensor subtractZeroPoint(const Tensor& x, const Tensor* zeroPoint, bool perRow, const char* op,
                         const char* name) {
    require(x.dtype() == DataType::UInt8 || x.dtype() == DataType::Int8, [&] {
        return std::string(op) + ": " + name + " must be int8 or uint8, got " +
               dataTypeName(x.dtype());
    });
    Tensor out = x.castTo(DataType::Int32);
    if (zeroPoint == nullptr) return out;
    require(zeroPoint->dtype() == x.dtype(), [&] {
        return std::string(op) + ": the zero point of " + name + " has another type than " + name;
    });
    std::vector<std::int64_t> zp = zeroPoint->toInt64Vector();
    std::int64_t axisLength = 1, inner = 1;
    if (x.rank() >= 2) {
        axisLength = perRow ? x.dim(x.rank() - 2) : x.dim(x.rank() - 1);
        inner = perRow ? x.dim(x.rank() - 1) : 1;
    }
    require(zp.size() == 1 || static_cast<std::int64_t>(zp.size()) == axisLength, [&] {
        return std::string(op) + ": the zero point of " + name + " must be a scalar or have " +
               std::to_string(axisLength) + " elements, got " + std::to_string(zp.size());
    });
    std::int32_t* p = out.data<std::int32_t>();
    for (std::int64_t i = 0; i < out.numel(); ++i) {
        auto z = zp.size() == 1 ? zp[0] : zp[static_cast<std::size_t>((i / inner) % axisLength)];
        p[i] -= static_cast<std::int32_t>(z);
    }
    return out;
}

// The zero point of A when one value serves the whole tensor (else nullopt); 0 when absent.
std::optional<std::int32_t> scalarZeroPoint(const Tensor* zeroPoint) {
    if (!zeroPoint) return 0;
    if (zeroPoint->numel() != 1) return std::nullopt;
    return static_cast<std::int32_t>(zeroPoint->valueAsInt64(0));
}

// B's zero point is absent or all zeros (the form oneDNN's int8 kernels take: symmetric weights).
bool zeroPointIsZero(const Tensor* zeroPoint) {
    if (!zeroPoint) return true;
    for (std::int64_t i = 0; i < zeroPoint->numel(); ++i)
        if (zeroPoint->valueAsInt64(i) != 0) return false;
    return true;
}

// The int32 accumulators of MatMulInteger(A, B, aZeroPoint, bZeroPoint), on oneDNN's int8 kernels
// when the operands allow it (epilogue null), else exactly on the int32 GEMM.
Tensor integerProduct(KernelContext& ctx, DnnlInt8MatMul& dnnl, const Tensor& aq,
                      const Tensor* aZeroPoint, const Tensor& bq, const Tensor* bZeroPoint,
                      const char* op) {
    const auto azp = scalarZeroPoint(aZeroPoint);
    if (azp && zeroPointIsZero(bZeroPoint) && (!aZeroPoint || aZeroPoint->dtype() == aq.dtype()) &&
        (!bZeroPoint || bZeroPoint->dtype() == bq.dtype()) && aq.rank() >= 2 && bq.rank() == 2) {
        MatMulPlan plan = planMatMul(aq.shape(), bq.shape(), op);
        Tensor y(DataType::Int32, plan.outputShape);
        if (dnnl.run(ctx.pool(), aq, *azp, bq, nullptr, y)) return y;
    }
    Tensor a = subtractZeroPoint(aq, aZeroPoint, true, op, "A");
    Tensor b = subtractZeroPoint(bq, bZeroPoint, false, op, "B");
    return matMulTensors(ctx, a, b, op);
}

class MatMulIntegerKernel : public Kernel {
  public:
    explicit MatMulIntegerKernel(const NodeInfo&) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        outputs[0] = Value(integerProduct(ctx, dnnl_, inputTensor(inputs, 0),
                                          optionalInputTensor(inputs, 2), inputTensor(inputs, 1),
                                          optionalInputTensor(inputs, 3), "MatMulInteger"));
    }

  private:
    DnnlInt8MatMul dnnl_;
};

// com.onnxlens MatMulIntegerToFloat (the optimizer's fusion of what dynamic quantizers write:
// MatMulInteger -> Cast to float -> Mul by the scales [-> Add bias] [-> Gelu]):
// inputs A, B, a_scale, b_scale (optional), a_zero_point, b_zero_point, bias (optional);
// Y = activation(float(MatMulInteger(A, B, a_zp, b_zp)) * (a_scale * b_scale) + bias), the scales
// one value or one per column, multiplied in float as the unfused graph's Mul does.
class MatMulIntegerToFloatKernel : public Kernel {
  public:
    explicit MatMulIntegerToFloatKernel(const NodeInfo& node) {
        const std::string activation = node.getString("activation", "");
        require(activation.empty() || activation == "Gelu", [&] {
            return "MatMulIntegerToFloat: unsupported activation \"" + activation + "\"";
        });
        if (activation == "Gelu") activation_ = MatMulActivation::Gelu;
    }
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& aq = inputTensor(inputs, 0);
        const Tensor& bq = inputTensor(inputs, 1);
        const Tensor* aZeroPoint = optionalInputTensor(inputs, 4);
        const Tensor* bZeroPoint = optionalInputTensor(inputs, 5);
        const Tensor* bias = optionalInputTensor(inputs, 6);
        const std::int64_t n = bq.rank() >= 1 ? bq.dim(bq.rank() - 1) : 1;
        const std::vector<float> scale =
            combinedScale(inputTensor(inputs, 2), optionalInputTensor(inputs, 3), n);
        if (bias)
            require(bias->dtype() == DataType::Float && bias->numel() == n, [&] {
                return "MatMulIntegerToFloat: the bias must be " + std::to_string(n) + " floats";
            });
        const float* biasData = bias ? bias->data<float>() : nullptr;

        const auto azp = scalarZeroPoint(aZeroPoint);
        if (azp && zeroPointIsZero(bZeroPoint) &&
            (!aZeroPoint || aZeroPoint->dtype() == aq.dtype()) && aq.rank() >= 2 &&
            bq.rank() == 2) {
            MatMulPlan plan = planMatMul(aq.shape(), bq.shape(), "MatMulIntegerToFloat");
            Tensor y(DataType::Float, plan.outputShape);
            Int8MatMulEpilogue epilogue{scale.data(), static_cast<std::int64_t>(scale.size()),
                                        biasData};
            if (dnnl_.run(ctx.pool(), aq, *azp, bq, &epilogue, y)) {
                if (activation_ == MatMulActivation::Gelu) applyGelu(ctx, y);
                outputs[0] = Value(std::move(y));
                return;
            }
        }
        Tensor acc =
            integerProduct(ctx, dnnl_, aq, aZeroPoint, bq, bZeroPoint, "MatMulIntegerToFloat");
        Tensor y(DataType::Float, acc.shape());
        const std::int32_t* in = acc.data<std::int32_t>();
        float* out = y.data<float>();
        const std::int64_t columns = acc.rank() == 0 ? 1 : acc.dim(acc.rank() - 1);
        ctx.pool().parallelFor(y.numel(), 4.0, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t i = begin; i < end; ++i) {
                const auto col = static_cast<std::size_t>(i % columns);
                float v = static_cast<float>(in[i]) * scale[scale.size() == 1 ? 0 : col];
                if (biasData) v += biasData[col];
                out[i] = v;
            }
        });
        if (activation_ == MatMulActivation::Gelu) applyGelu(ctx, y);
        outputs[0] = Value(std::move(y));
    }

  private:
    static void applyGelu(KernelContext& ctx, Tensor& y) {
        float* out = y.data<float>();
        ctx.pool().parallelFor(y.numel(), 12.0, [&](std::int64_t begin, std::int64_t end) {
            Eigen::Map<Eigen::Array<float, Eigen::Dynamic, 1>> v(out + begin, end - begin);
            v = geluErfArray(v).eval();
        });
    }

    static std::vector<float> combinedScale(const Tensor& aScale, const Tensor* bScale,
                                            std::int64_t n) {
        auto values = [&](const Tensor& t, const char* name) {
            require(t.dtype() == DataType::Float && (t.numel() == 1 || t.numel() == n), [&] {
                return std::string("MatMulIntegerToFloat: ") + name +
                       " must be float, one value or one per column";
            });
            return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
        };
        std::vector<float> a = values(aScale, "a_scale");
        if (!bScale) return a;
        std::vector<float> b = values(*bScale, "b_scale");
        std::vector<float> out(std::max(a.size(), b.size()));
        for (std::size_t j = 0; j < out.size(); ++j)
            out[j] = a[a.size() == 1 ? 0 : j] * b[b.size() == 1 ? 0 : j];
        return out;
    }

    MatMulActivation activation_ = MatMulActivation::None;
    DnnlInt8MatMul dnnl_;
};

class QLinearMatMulKernel : public Kernel {
  public:
    explicit QLinearMatMulKernel(const NodeInfo&) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& aq = inputTensor(inputs, 0);
        const Tensor& bq = inputTensor(inputs, 3);
        const Tensor& yZeroPoint = inputTensor(inputs, 7);
        // The exact int32 product as MatMulInteger computes it (oneDNN's int8 matmul with the
        // weights reordered once, when B's zero point is 0: a classifier's [1, 1280] x [1280,
        // 1000] took 1.1 ms through int32 copies of both operands and an int32 GEMM).
        const Tensor acc = integerProduct(ctx, dnnl_, aq, &inputTensor(inputs, 2), bq,
                                          &inputTensor(inputs, 5), "QLinearMatMul");
        std::vector<double> aScale = scales(inputTensor(inputs, 1), "a_scale");
        std::vector<double> bScale = scales(inputTensor(inputs, 4), "b_scale");
        std::vector<double> yScale = scales(inputTensor(inputs, 6), "y_scale");
        require(yScale.size() == 1 && yZeroPoint.numel() == 1,
                "QLinearMatMul: y_scale and y_zero_point must be scalars");
        std::int64_t m = aq.rank() >= 2 ? aq.dim(aq.rank() - 2) : 1;
        std::int64_t n = bq.rank() >= 2 ? bq.dim(bq.rank() - 1) : 1;
        require(aScale.size() == 1 || static_cast<std::int64_t>(aScale.size()) == m,
                "QLinearMatMul: a_scale must be a scalar or have one value per row of a");
        require(bScale.size() == 1 || static_cast<std::int64_t>(bScale.size()) == n,
                "QLinearMatMul: b_scale must be a scalar or have one value per column of b");
        double yZero = yZeroPoint.valueAsDouble(0);
        Tensor y(yZeroPoint.dtype(), acc.shape());
        const std::int32_t* in = acc.data<std::int32_t>();
        dispatchInteger(y.dtype(), [&]<class T>() {
            T* out = y.data<T>();
            for (std::int64_t i = 0; i < y.numel(); ++i) {
                std::int64_t col = i % n, row = (i / n) % m;
                double as = aScale.size() == 1 ? aScale[0] : aScale[static_cast<std::size_t>(row)];
                double bs = bScale.size() == 1 ? bScale[0] : bScale[static_cast<std::size_t>(col)];
                // Round half to even, as the reference (numpy.rint) does.
                double q =
                    std::nearbyint(static_cast<double>(in[i]) * (as * bs / yScale[0])) + yZero;
                out[i] = fromDouble<T>(q);
            }
        });
        outputs[0] = Value(std::move(y));
    }

  private:
    DnnlInt8MatMul dnnl_;

    static std::vector<double> scales(const Tensor& t, const char* name) {
        require(isFloatingPoint(t.dtype()),
                [&] { return std::string("QLinearMatMul: ") + name + " must be floating-point"; });
        std::vector<double> v(static_cast<std::size_t>(t.numel()));
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<float>(t.valueAsDouble(static_cast<std::int64_t>(i)));
        return v;
    }
};

// ---- Einsum ------------------------------------------------------------------------------------
// Labels: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (ASCII order, which the implicit output uses);
// ellipsis dimensions are 52 + i, right-aligned over the widest ellipsis.
using Labels = std::vector<int>;
constexpr int kEllipsisLabel = 52;

struct EinsumEquation {
    std::vector<Labels> inputs;
    Labels output;
};

EinsumEquation parseEinsum(std::string equation, const std::vector<const Tensor*>& operands) {
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    auto arrow = equation.find("->");
    std::string lhs = equation.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t start = 0;;) {
        auto comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    require(terms.size() == operands.size(), [&] {
        return "Einsum: the equation has " + std::to_string(terms.size()) + " operands but " +
               std::to_string(operands.size()) + " inputs were given";
    });

    // First pass: letters and ellipsis positions; the ellipsis width comes from the rank.
    auto letterLabel = [&](char ch) {
        if (ch >= 'A' && ch <= 'Z') return ch - 'A';
        if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
        fail("Einsum: invalid character '" + std::string(1, ch) + "' in equation " + equation);
    };
    struct Term {
        Labels before, after;
        bool ellipsis = false;
    };
    auto parseTerm = [&](const std::string& term) {
        Term t;
        for (std::size_t i = 0; i < term.size(); ++i) {
            if (term.compare(i, 3, "...") == 0) {
                require(!t.ellipsis,
                        [&] { return "Einsum: more than one ellipsis in term " + term; });
                t.ellipsis = true;
                i += 2;
                continue;
            }
            (t.ellipsis ? t.after : t.before).push_back(letterLabel(term[i]));
        }
        return t;
    };
    std::vector<Term> parsed;
    std::int64_t ellipsisRank = 0;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        parsed.push_back(parseTerm(terms[i]));
        const Term& t = parsed.back();
        auto letters = static_cast<std::int64_t>(t.before.size() + t.after.size());
        std::int64_t rank = operands[i]->rank();
        if (t.ellipsis) {
            require(rank >= letters, [&] {
                return "Einsum: operand " + std::to_string(i) + " of shape " +
                       shapeToString(operands[i]->shape()) + " has fewer dims than term " +
                       terms[i];
            });
            ellipsisRank = std::max(ellipsisRank, rank - letters);
        } else {
            require(rank == letters, [&] {
                return "Einsum: operand " + std::to_string(i) + " of shape " +
                       shapeToString(operands[i]->shape()) + " does not match term " + terms[i];
            });
        }
    }
    auto expand = [&](const Term& t, std::int64_t width) {
        Labels labels = t.before;
        for (std::int64_t k = 0; k < width; ++k)
            labels.push_back(kEllipsisLabel + static_cast<int>(ellipsisRank - width + k));
        labels.insert(labels.end(), t.after.begin(), t.after.end());
        return labels;
    };
    EinsumEquation eq;
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        std::int64_t width =
            parsed[i].ellipsis
                ? operands[i]->rank() -
                      static_cast<std::int64_t>(parsed[i].before.size() + parsed[i].after.size())
                : 0;
        eq.inputs.push_back(expand(parsed[i], width));
    }
    if (arrow != std::string::npos) {
        Term out = parseTerm(equation.substr(arrow + 2));
        eq.output = expand(out, out.ellipsis ? ellipsisRank : 0);
        std::set<int> seen;
        for (int label : eq.output)
            require(seen.insert(label).second,
                    [&] { return "Einsum: repeated label in output of " + equation; });
    } else {
        // Implicit output: the ellipsis, then the letters used once, in ASCII order.
        std::array<int, kEllipsisLabel> uses{};
        for (const Labels& in : eq.inputs)
            for (int label : in)
                if (label < kEllipsisLabel) ++uses[static_cast<std::size_t>(label)];
        for (std::int64_t k = 0; k < ellipsisRank; ++k)
            eq.output.push_back(kEllipsisLabel + static_cast<int>(k));
        for (int label = 0; label < kEllipsisLabel; ++label)
            if (uses[static_cast<std::size_t>(label)] == 1) eq.output.push_back(label);
    }
    return eq;
}

// A contiguous operand whose axes carry distinct labels.
struct LabelledTensor {
    Tensor tensor;
    Labels labels;
};

// Rearranges `x` (labels possibly repeated: a diagonal) into the axis order `target`, summing
// over its labels missing from `target`; dims of size 1 broadcast to the label's size.
template <class T>
Tensor relabel(const Tensor& x, const Labels& labels, const Labels& target,
               const std::map<int, std::int64_t>& sizes) {
    auto strides = shapeStrides(x.shape());
    std::map<int, std::int64_t> labelStride;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        bool broadcast = x.shape()[i] == 1 && sizes.at(labels[i]) != 1;
        labelStride[labels[i]] += broadcast ? 0 : strides[i];
    }
    std::vector<std::int64_t> loopSizes, loopStrides;
    Shape outShape;
    for (int label : target) {
        outShape.push_back(sizes.at(label));
        loopSizes.push_back(sizes.at(label));
        loopStrides.push_back(labelStride.count(label) ? labelStride[label] : 0);
    }
    std::int64_t summed = 1;
    std::vector<std::int64_t> sumSizes, sumStrides;
    for (auto [label, stride] : labelStride) {
        if (std::find(target.begin(), target.end(), label) != target.end()) continue;
        sumSizes.push_back(sizes.at(label));
        sumStrides.push_back(stride);
        summed *= sizes.at(label);
    }
    Tensor out(x.dtype(), outShape);
    const T* in = x.data<T>();
    T* dst = out.data<T>();
    std::vector<std::int64_t> index(loopSizes.size(), 0), sumIndex(sumSizes.size(), 0);
    std::int64_t base = 0;
    for (std::int64_t o = 0; o < out.numel(); ++o) {
        T acc = T(0);
        std::int64_t offset = base;
        for (std::int64_t s = 0; s < summed; ++s) {
            acc += in[offset];
            for (std::size_t d = sumSizes.size(); d-- > 0;) {
                offset += sumStrides[d];
                if (++sumIndex[d] < sumSizes[d]) break;
                offset -= sumStrides[d] * sumSizes[d];
                sumIndex[d] = 0;
            }
        }
        dst[o] = acc;
        for (std::size_t d = loopSizes.size(); d-- > 0;) {
            base += loopStrides[d];
            if (++index[d] < loopSizes[d]) break;
            base -= loopStrides[d] * loopSizes[d];
            index[d] = 0;
        }
    }
    return out;
}

bool contains(const Labels& labels, int label) {
    return std::find(labels.begin(), labels.end(), label) != labels.end();
}

class EinsumKernel : public Kernel {
  public:
    explicit EinsumKernel(const NodeInfo& node) : equation_(node.getString("equation")) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(!inputs.empty(), "Einsum needs at least one input");
        std::vector<const Tensor*> operands;
        for (std::size_t i = 0; i < inputs.size(); ++i) operands.push_back(&inputTensor(inputs, i));
        DataType type = operands[0]->dtype();
        for (const Tensor* t : operands)
            require(t->dtype() == type, "Einsum: inputs have different element types");
        EinsumEquation eq = parseEinsum(equation_, operands);
        std::map<int, std::int64_t> sizes;
        for (std::size_t i = 0; i < operands.size(); ++i) {
            for (std::size_t d = 0; d < eq.inputs[i].size(); ++d) {
                int label = eq.inputs[i][d];
                std::int64_t dim = operands[i]->shape()[d];
                auto [it, inserted] = sizes.emplace(label, dim);
                if (inserted || it->second == dim) continue;
                bool ellipsis = label >= kEllipsisLabel;
                const std::int64_t other = it->second;
                require(ellipsis && (other == 1 || dim == 1), [&] {
                    return "Einsum: dimension " + std::to_string(dim) + " of operand " +
                           std::to_string(i) + " does not match " + std::to_string(other) +
                           " elsewhere for the same label in " + equation_;
                });
                it->second = std::max(it->second, dim);
            }
        }
        for (int label : eq.output)
            require(sizes.count(label), [&] {
                return "Einsum: output label does not appear in any input of " + equation_;
            });

        Tensor result;
        dispatchCompute(computeTypeOf(type),
                        [&]<class T>() { result = contract<T>(ctx, operands, eq, sizes); });
        outputs[0] = Value(result.dtype() == type ? result : result.castTo(type));
    }

  private:
    // The labels some operand after `index` or the output still needs.
    static Labels neededAfter(const EinsumEquation& eq, std::size_t index) {
        Labels needed = eq.output;
        for (std::size_t j = index + 1; j < eq.inputs.size(); ++j)
            for (int label : eq.inputs[j])
                if (!contains(needed, label)) needed.push_back(label);
        return needed;
    }

    template <class T>
    static Tensor contract(KernelContext& ctx, const std::vector<const Tensor*>& operands,
                           const EinsumEquation& eq, const std::map<int, std::int64_t>& sizes) {
        auto prepare = [&](std::size_t i, const Labels& needed) {
            // Distinct labels in order of appearance; drop the ones nobody needs (summed now).
            Labels keep;
            for (int label : eq.inputs[i])
                if (!contains(keep, label) && contains(needed, label)) keep.push_back(label);
            Tensor t = toComputeType(*operands[i]);
            return LabelledTensor{relabel<T>(t, eq.inputs[i], keep, sizes), keep};
        };
        LabelledTensor acc = prepare(0, neededAfter(eq, 0));
        for (std::size_t i = 1; i < operands.size(); ++i) {
            Labels later = neededAfter(eq, i);
            Labels needed = later;
            needed.insert(needed.end(), acc.labels.begin(), acc.labels.end());
            acc = multiply<T>(ctx, acc, prepare(i, needed), later, sizes);
        }
        return relabel<T>(acc.tensor, acc.labels, eq.output, sizes);
    }

    // Contracts two operands into [batch, leftOnly, rightOnly] labels: shared labels still
    // needed later are batch dims, the other shared ones are summed by the GEMM.
    template <class T>
    static LabelledTensor multiply(KernelContext& ctx, const LabelledTensor& x,
                                   const LabelledTensor& y, const Labels& later,
                                   const std::map<int, std::int64_t>& sizes) {
        Labels batch, summed, left, right;
        for (int label : x.labels) {
            if (contains(y.labels, label))
                (contains(later, label) ? batch : summed).push_back(label);
            else
                left.push_back(label);
        }
        for (int label : y.labels)
            if (!contains(x.labels, label)) right.push_back(label);
        auto product = [&](const Labels& ls) {
            std::int64_t p = 1;
            for (int label : ls) p *= sizes.at(label);
            return p;
        };
        auto concat = [](std::initializer_list<const Labels*> parts) {
            Labels all;
            for (const Labels* p : parts) all.insert(all.end(), p->begin(), p->end());
            return all;
        };
        Tensor a = relabel<T>(x.tensor, x.labels, concat({&batch, &left, &summed}), sizes);
        Tensor b = relabel<T>(y.tensor, y.labels, concat({&batch, &summed, &right}), sizes);
        GemmProblem g;
        g.m = product(left);
        g.k = product(summed);
        g.n = product(right);
        std::int64_t batchCount = product(batch);
        for (std::int64_t i = 0; i < batchCount; ++i) {
            g.aOffsets.push_back(i * g.m * g.k);
            g.bOffsets.push_back(i * g.k * g.n);
        }
        Labels outLabels = concat({&batch, &left, &right});
        Shape outShape;
        for (int label : outLabels) outShape.push_back(sizes.at(label));
        Tensor c(a.dtype(), outShape);
        runGemm<T>(ctx, g, a.data<T>(), b.data<T>(), c.data<T>(), T(1), false);
        return {c, outLabels};
    }

    std::string equation_;
};

class DetKernel : public Kernel {
  public:
    explicit DetKernel(const NodeInfo&) {}
    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = inputTensor(inputs, 0);
        require(isFloatingPoint(x.dtype()), "Det needs a floating-point input");
        require(x.rank() >= 2 && x.dim(x.rank() - 1) == x.dim(x.rank() - 2), [&] {
            return "Det needs square matrices [..., M, M], got " + shapeToString(x.shape());
        });
        std::int64_t m = x.dim(x.rank() - 1);
        Shape outShape(x.shape().begin(), x.shape().end() - 2);
        Tensor y(x.dtype(), outShape);
        dispatchFloat(x.dtype(), [&]<class T>() {
            const T* in = x.data<T>();
            T* out = y.data<T>();
            ctx.pool().parallelFor(
                y.numel(), static_cast<double>(m * m * m), [&](std::int64_t b, std::int64_t e) {
                    Eigen::MatrixXd matrix(m, m);
                    for (std::int64_t i = b; i < e; ++i) {
                        const T* p = in + i * m * m;
                        for (std::int64_t r = 0; r < m; ++r)
                            for (std::int64_t c = 0; c < m; ++c)
                                matrix(r, c) = toAccumulator<double>(p[r * m + c]);
                        out[i] = fromDouble<T>(m == 0 ? 1.0 : matrix.determinant());
                    }
                });
        });
        outputs[0] = Value(std::move(y));
    }
};

}  // namespace

void registerMatMulOps(KernelRegistry& registry) {
    registry.add<MatMulKernel>("MatMul", 1);
    registry.add<MatMulKernel>("FusedMatMul", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<PackedMatMulKernel>("PackedMatMul", 1, kLatestOpset, kOnnxlensDomain);
    registry.add<GemmKernel>("Gemm", 1);
    registry.add<MsFusedMatMulKernel>("FusedMatMul", 1, kLatestOpset, "com.microsoft");
    registry.add<MsFusedGemmKernel>("FusedGemm", 1, kLatestOpset, "com.microsoft");
    registry.add<MatMulIntegerKernel>("MatMulInteger", 10);
    registry.add<MatMulIntegerToFloatKernel>("MatMulIntegerToFloat", 1, kLatestOpset,
                                             kOnnxlensDomain);
    registry.add<MatMulIntegerToFloatKernel>("MatMulIntegerToFloat", 1, kLatestOpset,
                                             "com.microsoft");
    registry.add<QLinearMatMulKernel>("QLinearMatMul", 10);
    registry.add<EinsumKernel>("Einsum", 12);
    registry.add<DetKernel>("Det", 11);
}

}  // namespace onnxlens::engine::ops
