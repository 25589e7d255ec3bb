// LSTM, GRU and RNN. The driver and the cells (RecurrentCore.h) handle what the three share
// (layouts, directions, sequence lengths, initial states, outputs) and each operator's gate
// equations; here the float weights: the input projection of all time steps is one GEMM per
// direction; each step adds one GEMM with R.
// GCC 12 reports -Wmaybe-uninitialized false positives inside Eigen's AVX-512 GEMV kernels,
// which are instantiated in this file; the warnings point into compiler intrinsics headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <Eigen/Core>
#include <mutex>

#include "OpFamilies.h"
#include "RecurrentCore.h"

namespace onnxlens::engine::ops {
namespace {

using namespace recurrent;

template <class Cell>
class RecurrentKernel : public Kernel {
  public:
    explicit RecurrentKernel(const NodeInfo& node)
        : cell_(node), config_(parseRecurrentConfig(node, Cell::defaultActivations())) {}

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const DataType type = inputTensor(inputs, 0).dtype();
        if (type == DataType::Float) return compute<float>(ctx.pool(), inputs, outputs);
        if (type == DataType::Double) return compute<double>(ctx.pool(), inputs, outputs);
        if (type != DataType::Float16 && type != DataType::BFloat16)
            fail(std::string("unsupported element type ") + dataTypeName(type));
        // Half precision: compute in float, round the results once.
        std::vector<Value> widened(inputs.size());
        std::vector<const Value*> widenedPointers(inputs.size(), nullptr);
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Tensor* t = optionalInputTensor(inputs, i);
            if (!t) continue;
            widened[i] = Value(isFloatingPoint(t->dtype()) ? t->castTo(DataType::Float) : *t);
            widenedPointers[i] = &widened[i];
        }
        compute<float>(ctx.pool(), widenedPointers, outputs);
        for (auto& out : outputs)
            if (out.isTensor()) out = Value(out.tensor().castTo(type));
    }

  private:
    // W [D, G*H, I] and R^T [D, H, G*H] as the driver reads them.
    template <class T>
    struct FloatWeights {
        const T* w;
        const T* rT;
        std::int64_t gh, input, hidden;

        void project(std::int64_t d, const T* x, std::int64_t rows, Matrix<T>& projected) const {
            const ConstMatrixMap<T> xMatrix(x, rows, input);
            const ConstMatrixMap<T> wMatrix(w + d * gh * input, gh, input);
            projected.topRows(rows).noalias() = xMatrix * wMatrix.transpose();
        }
        void prepare(std::int64_t d, DirectionData<T>& data,
                     const std::vector<std::int64_t>&) const {
            data.rT = rT + d * hidden * gh;
        }
    };

    // R^T, [D, H, G*H]: each step's recurrent product then runs along the rows of R^T (one
    // vectorised multiply-add of the G*H gates per hidden unit), not G*H dot products. Made once
    // and kept while the same R buffer comes back (a constant R: once per session), as the
    // convolutions keep their reordered weights; a streaming model's one step a run does not
    // pay for it again.
    template <class T>
    Tensor transposedRecurrentWeights(const Tensor& r, std::int64_t directions, std::int64_t rows,
                                      std::int64_t cols) const {
        std::lock_guard lock(transposedMutex_);
        if (transposedR_.defined() && r.sharesStorageWith(heldR_) &&
            transposedR_.dtype() == r.dtype())
            return transposedR_;
        Tensor t(r.dtype(), {directions, cols, rows});
        for (std::int64_t d = 0; d < directions; ++d)
            MatrixMap<T>(t.data<T>() + d * rows * cols, cols, rows) =
                ConstMatrixMap<T>(r.data<T>() + d * rows * cols, rows, cols).transpose();
        transposedR_ = t;
        heldR_ = r;
        return t;
    }

    template <class T>
    void compute(ThreadPool& pool, const std::vector<const Value*>& inputs,
                 std::vector<Value>& outputs) const {
        constexpr int G = Cell::kGates;
        const Tensor& xInput = inputTensor(inputs, 0);
        const Tensor& w = inputTensor(inputs, 1);
        const Tensor& r = inputTensor(inputs, 2);
        if (r.rank() != 3) fail("R must have rank 3");
        const RecurrentSizes sizes =
            recurrentSizes(config_, xInput, config_.hiddenSize > 0 ? config_.hiddenSize : r.dim(2));
        const std::int64_t D = config_.directions, H = sizes.hidden;
        expectRecurrentInput(w, {D, G * H, sizes.input}, xInput.dtype(), "W");
        expectRecurrentInput(r, {D, G * H, H}, xInput.dtype(), "R");
        const Tensor rTransposed = transposedRecurrentWeights<T>(r, D, G * H, H);
        FloatWeights<T> weights{w.data<T>(), rTransposed.data<T>(), G * H, sizes.input, H};
        runRecurrent<T>(pool, cell_, config_, sizes, inputs, weights, outputs);
    }

    Cell cell_;
    RecurrentConfig config_;
    mutable std::mutex transposedMutex_;
    mutable Tensor transposedR_, heldR_;  // R^T and the R it was made from
};

}  // namespace

void registerRecurrentOps(KernelRegistry& registry) {
    registry.add<RecurrentKernel<RnnCell>>("RNN", 1);
    registry.add<RecurrentKernel<GruCell>>("GRU", 1);
    registry.add<RecurrentKernel<LstmCell>>("LSTM", 1);
}

}  // namespace onnxlens::engine::ops
