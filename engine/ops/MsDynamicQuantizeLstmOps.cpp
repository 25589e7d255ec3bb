// com.microsoft DynamicQuantizeLSTM: an LSTM whose W [D, input_size, 4H] and R [D, H, 4H] are
// 8-bit (int8 or uint8, both transposed against LSTM's), with a scale and a zero point per
// direction ([D]) or per gate column ([D, 4H]): w = (q - zero_point) * scale. X is quantized to
// uint8 per tensor (DynamicQuantizeLinear's parameters: the range widened to hold 0, scale
// (max - min) / 255, zero point rounded half to even) over the steps some batch row reaches, and
// the hidden state likewise before each step's recurrent product, over the rows still running
// and those whose last step was the previous one (the others hold zeros in ONNX Runtime's
// kernel, which a range holding 0 ignores); the products are exact in int32
// (QuantizedProduct.h), times x_scale * w_scale. The gates, directions, sequence lengths,
// activations, clip, input_forget, peepholes and layout are the LSTM's (RecurrentCore.h).
// ONNX Runtime 1.30 takes the same quantization at one intra-op thread; at more threads its
// kernel quantizes the hidden state per chunk of batch rows, so its results depend on the count.
// GCC 12 reports -Wmaybe-uninitialized false positives inside Eigen's AVX-512 GEMV kernels,
// which the LSTM cell instantiates here; the warnings point into compiler intrinsics headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "DnnlInt8MatMul.h"
#include "MsKernelSupport.h"
#include "OpFamilies.h"
#include "QuantizedProduct.h"
#include "RecurrentCore.h"

namespace onnxlens::engine::ops {
namespace {

using namespace recurrent;

constexpr const char* kOp = "DynamicQuantizeLSTM";

bool isEightBit(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

// One direction's 8-bit weights [K, 4H] and their scales and zero points (one, or one per
// column).
struct DirectionWeights {
    Tensor values;
    std::vector<float> scale;
    std::vector<std::int32_t> zeroPoint;
};

class DynamicQuantizeLstmKernel : public Kernel {
  public:
    explicit DynamicQuantizeLstmKernel(const NodeInfo& node)
        : cell_(node), config_(parseRecurrentConfig(node, LstmCell::defaultActivations())) {
        // 2^40 bounds 4 * hidden_size and its products far from overflow; no W has as many.
        require(config_.hiddenSize > 0 && config_.hiddenSize <= (std::int64_t{1} << 40), [&] {
            return std::string(kOp) + ": attribute hidden_size must be positive, got " +
                   std::to_string(config_.hiddenSize);
        });
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& x = ms::requiredInput(inputs, 0, kOp, "X");
        require(x.dtype() == DataType::Float, [&] {
            return std::string(kOp) + ": input X must be float, got " + dataTypeName(x.dtype());
        });
        const RecurrentSizes sizes = recurrentSizes(config_, x, config_.hiddenSize);
        const std::int64_t D = config_.directions, H = sizes.hidden;
        const Tensor& w = ms::requiredInput(inputs, 1, kOp, "W");
        const Tensor& r = ms::requiredInput(inputs, 2, kOp, "R");
        checkWeights(w, "W", {D, sizes.input, 4 * H});
        checkWeights(r, "R", {D, H, 4 * H});
        // The int32 accumulators of the products are exact up to this depth (ONNX Runtime's wrap).
        // Not a structured binding: clang 14 does not let the message lambda capture one.
        for (const auto& size : {std::pair{sizes.input, "input_size (X's last axis)"},
                                 std::pair{H, "attribute hidden_size"}}) {
            const std::int64_t depth = size.first;
            const char* name = size.second;
            require(depth <= kMaxExactInt8ProductDepth, [&] {
                return std::string(kOp) + ": " + name + " " + std::to_string(depth) + " exceeds " +
                       std::to_string(kMaxExactInt8ProductDepth) +
                       ", where the int32 sums of the 8-bit products could overflow";
            });
        }
        const std::array<DirectionWeights, 2> wd =
            directionWeights(w, inputs, 8, 9, "W_scale", "W_zero_point", heldW_, wSlices_);
        const std::array<DirectionWeights, 2> rd =
            directionWeights(r, inputs, 10, 11, "R_scale", "R_zero_point", heldR_, rSlices_);
        QuantizedWeights weights{this, ctx.pool(), wd, rd, sizes.input, H};
        runRecurrent<float>(ctx.pool(), cell_, config_, sizes, inputs, weights, outputs);
    }

  private:
    // The driver's weights: the two integer products.
    struct QuantizedWeights {
        DynamicQuantizeLstmKernel* kernel;
        ThreadPool& pool;
        const std::array<DirectionWeights, 2>& w;
        const std::array<DirectionWeights, 2>& r;
        std::int64_t input, hidden;

        // projected[0, rows) = X W^T, X quantized over those rows.
        void project(std::int64_t d, const float* x, std::int64_t rows,
                     Matrix<float>& projected) const {
            float low = 0.0f, high = 0.0f;
            widenRangeWithZero(x, rows * input, low, high);
            const UInt8Quantization q = uint8QuantizationOf(low, high);
            Tensor xq(DataType::UInt8, {rows, input});
            quantizeToUInt8(x, 0, rows * input, q.scale, q.zeroPoint, xq.data<std::uint8_t>());
            const auto& wd = w[static_cast<std::size_t>(d)];
            const Tensor acc =
                integerProduct(pool, kernel->wProduct_[static_cast<std::size_t>(d)], xq,
                               static_cast<std::int32_t>(q.zeroPoint), wd.values, wd.zeroPoint);
            addScaled(acc, q.scale, wd.scale, projected);
        }

        void prepare(std::int64_t, DirectionData<float>& data,
                     const std::vector<std::int64_t>& lengths) const {
            data.recurrentProduct = [this, &lengths](const DirectionData<float>& dd,
                                                     const Matrix<float>& h, Matrix<float>& gates) {
                const std::int64_t batch = h.rows();
                // The rows the step reads: running, or ended by the previous step.
                float low = 0.0f, high = 0.0f;
                for (std::int64_t b = 0; b < batch; ++b)
                    if (lengths[static_cast<std::size_t>(b)] >= dd.step)
                        widenRangeWithZero(h.row(b).data(), hidden, low, high);
                const UInt8Quantization q = uint8QuantizationOf(low, high);
                Tensor hq(DataType::UInt8, {batch, hidden});
                quantizeToUInt8(h.data(), 0, batch * hidden, q.scale, q.zeroPoint,
                                hq.data<std::uint8_t>());
                const auto index = static_cast<std::size_t>(dd.direction);
                const Tensor acc = integerProduct(pool, kernel->rProduct_[index], hq,
                                                  static_cast<std::int32_t>(q.zeroPoint),
                                                  r[index].values, r[index].zeroPoint);
                addScaled(acc, q.scale, r[index].scale, gates);
            };
        }

        // out[i, n] += acc[i, n] * (aScale * bScale[n]) for the rows of acc.
        static void addScaled(const Tensor& acc, float aScale, const std::vector<float>& bScale,
                              Matrix<float>& out) {
            const std::int64_t rows = acc.dim(0), n = acc.dim(1);
            std::vector<float> multiplier(bScale.size());
            for (std::size_t c = 0; c < bScale.size(); ++c) multiplier[c] = aScale * bScale[c];
            const std::int32_t* in = acc.data<std::int32_t>();
            for (std::int64_t i = 0; i < rows; ++i) {
                float* row = out.row(i).data();
                for (std::int64_t c = 0; c < n; ++c)
                    row[c] += static_cast<float>(in[i * n + c]) *
                              multiplier[multiplier.size() == 1 ? 0 : static_cast<std::size_t>(c)];
            }
        }
    };

    static void checkWeights(const Tensor& t, const char* name, const Shape& expected) {
        require(isEightBit(t.dtype()), [&] {
            return std::string(kOp) + ": input " + name + " must be int8 or uint8, got " +
                   dataTypeName(t.dtype());
        });
        require(t.shape() == expected, [&] {
            return std::string(kOp) + ": input " + name + " has shape " + shapeToString(t.shape()) +
                   ", expected " + shapeToString(expected) +
                   " ([num_directions, rows, 4 * hidden_size] for the attributes direction and "
                   "hidden_size)";
        });
    }

    // Each direction's [K, 4H] slice of `weights` [D, K, 4H] (kept while the same buffer comes
    // back, so that the int8 product keeps its reordered copy), with its scales and zero points
    // from inputs scaleIndex and scaleIndex + 1: [D] per direction or [D, 4H] per column.
    std::array<DirectionWeights, 2> directionWeights(const Tensor& weights,
                                                     const std::vector<const Value*>& inputs,
                                                     std::size_t scaleIndex, std::size_t zeroIndex,
                                                     const char* scaleName, const char* zeroName,
                                                     Tensor& held, std::array<Tensor, 2>& slices) {
        const std::int64_t D = weights.dim(0), k = weights.dim(1), n = weights.dim(2);
        const Tensor& scale = ms::requiredInput(inputs, scaleIndex, kOp, scaleName);
        const Tensor& zero = ms::requiredInput(inputs, zeroIndex, kOp, zeroName);
        auto perChannel = [&](const Tensor& t, const char* name) {
            require(t.shape() == Shape{D} || t.shape() == Shape{D, n}, [&] {
                return std::string(kOp) + ": input " + name + " must have shape [" +
                       std::to_string(D) + "] (per direction) or [" + std::to_string(D) + ", " +
                       std::to_string(n) + "] (per column), got " + shapeToString(t.shape());
            });
            return t.rank() == 2;
        };
        require(scale.dtype() == DataType::Float, [&] {
            return std::string(kOp) + ": input " + scaleName + " must be float, got " +
                   dataTypeName(scale.dtype());
        });
        require(zero.dtype() == weights.dtype(), [&] {
            return std::string(kOp) + ": input " + zeroName +
                   " must have the type of its weights (" + dataTypeName(weights.dtype()) +
                   "), got " + dataTypeName(zero.dtype());
        });
        const std::int64_t scaleCount = perChannel(scale, scaleName) ? n : 1;
        const std::int64_t zeroCount = perChannel(zero, zeroName) ? n : 1;

        std::array<DirectionWeights, 2> result;
        {
            std::lock_guard lock(sliceMutex_);
            if (!weights.sharesStorageWith(held) || slices[0].dtype() != weights.dtype() ||
                slices[0].shape() != Shape{k, n}) {
                for (std::int64_t d = 0; d < D; ++d) {
                    if (D == 1) {
                        slices[0] = weights.reshaped({k, n});
                        break;
                    }
                    Tensor slice(weights.dtype(), {k, n});
                    const auto* from = static_cast<const std::uint8_t*>(weights.raw()) + d * k * n;
                    std::copy_n(from, k * n, static_cast<std::uint8_t*>(slice.raw()));
                    slices[static_cast<std::size_t>(d)] = slice;
                }
                held = weights;
            }
            for (std::int64_t d = 0; d < D; ++d)
                result[static_cast<std::size_t>(d)].values = slices[static_cast<std::size_t>(d)];
        }
        for (std::int64_t d = 0; d < D; ++d) {
            auto& out = result[static_cast<std::size_t>(d)];
            const float* s = scale.data<float>() + d * scaleCount;
            out.scale.assign(s, s + scaleCount);
            for (std::int64_t i = 0; i < zeroCount; ++i)
                out.zeroPoint.push_back(
                    static_cast<std::int32_t>(zero.valueAsInt64(d * zeroCount + i)));
        }
        return result;
    }

    LstmCell cell_;
    RecurrentConfig config_;
    std::array<DnnlInt8MatMul, 2> wProduct_, rProduct_;  // one per direction
    std::mutex sliceMutex_;
    Tensor heldW_, heldR_;  // the W and R the slices were made from
    std::array<Tensor, 2> wSlices_, rSlices_;
};

}  // namespace

void registerMsDynamicQuantizeLstmOps(KernelRegistry& registry) {
    registry.add<DynamicQuantizeLstmKernel>(kOp, 1, kLatestOpset, ms::kMicrosoftDomain);
}

}  // namespace onnxlens::engine::ops
