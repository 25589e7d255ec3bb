// If, Loop and Scan: operators whose bodies are subgraphs run through KernelContext::runSubgraph,
// so that names the bodies read from outer scopes resolve in the calling frame.
#include <limits>

#include "CompiledGraph.h"
#include "OpFamilies.h"
#include "SequenceTensorCopy.h"
#include "onnxlens/engine/Session.h"

namespace onnxlens::engine::ops {
namespace {

bool scalarCondition(const Tensor& t, const char* what) {
    if (t.numel() != 1)
        fail(std::string(what) + " must hold exactly one element, got shape " +
             shapeToString(t.shape()));
    return t.valueAsInt64(0) != 0;
}

void throwIfCancelled(const KernelContext& ctx) {
    if (ctx.cancelled()) throw RunCancelled();
}

// ---------------------------------------------------------------------------------------------
// If

class IfKernel : public Kernel {
  public:
    explicit IfKernel(const NodeInfo& node)
        : thenBranch_(node.compileGraph("then_branch")),
          elseBranch_(node.compileGraph("else_branch")) {
        for (const auto* branch : {thenBranch_.get(), elseBranch_.get()})
            if (static_cast<int>(branch->outputNames().size()) != node.outputCount())
                fail("the node has " + std::to_string(node.outputCount()) +
                     " outputs but a branch yields " +
                     std::to_string(branch->outputNames().size()));
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const bool condition = scalarCondition(inputTensor(inputs, 0), "the If condition");
        auto results = ctx.runSubgraph(condition ? *thenBranch_ : *elseBranch_, {});
        for (std::size_t i = 0; i < outputs.size() && i < results.size(); ++i)
            outputs[i] = std::move(results[i]);
    }

  private:
    std::shared_ptr<CompiledGraph> thenBranch_, elseBranch_;
};

// ---------------------------------------------------------------------------------------------
// Loop

// Per-iteration scan output of a body, accumulated and stacked along a new axis 0 at the end.
struct ScanAccumulator {
    std::vector<Tensor> items;
    DataType declaredType = DataType::Undefined;
    Shape declaredShape;  // the body's declared element shape when fully static
    bool shapeKnown = false;

    void setDeclared(const onnx::TypeProto& type) {
        declaredType = declaredTensorType(type);
        if (type.has_tensor_type() && type.tensor_type().has_shape()) {
            shapeKnown = true;
            for (const auto& d : type.tensor_type().shape().dim()) {
                if (!d.has_dim_value()) shapeKnown = false;
                declaredShape.push_back(d.dim_value());
            }
        }
    }

    // Stacked along `axis`, reversed when `reverse`; empty tensor with a leading 0 dim when no
    // iteration ran.
    Tensor stacked(std::size_t axis, bool reverse) const {
        if (items.empty()) {
            Shape shape = shapeKnown ? declaredShape : Shape{};
            shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(std::min(axis, shape.size())),
                         0);
            return Tensor(declaredType == DataType::Undefined ? DataType::Float : declaredType,
                          shape);
        }
        if (!reverse) return stackAlongNewAxis(items, axis);
        std::vector<Tensor> reversed(items.rbegin(), items.rend());
        return stackAlongNewAxis(reversed, axis);
    }
};

class LoopKernel : public Kernel {
  public:
    explicit LoopKernel(const NodeInfo& node) : body_(node.compileGraph("body")) {
        const auto& graph = node.find("body")->g();
        const int carried = node.inputCount() - 2;
        if (carried < 0) fail("Loop takes at least two inputs (M and cond, possibly empty)");
        if (graph.input_size() != carried + 2)
            fail("the Loop body takes " + std::to_string(graph.input_size()) +
                 " inputs; expected 2 + " + std::to_string(carried) + " loop-carried values");
        if (graph.output_size() < carried + 1)
            fail("the Loop body yields " + std::to_string(graph.output_size()) +
                 " outputs; expected at least 1 + " + std::to_string(carried));
        carriedCount_ = static_cast<std::size_t>(carried);
        scanCount_ = static_cast<std::size_t>(graph.output_size() - 1 - carried);
        if (node.outputCount() > static_cast<int>(carriedCount_ + scanCount_))
            fail("the node has more outputs than the Loop body yields");
        scanTypes_.resize(scanCount_);
        for (std::size_t s = 0; s < scanCount_; ++s)
            scanTypes_[s].setDeclared(graph.output(static_cast<int>(1 + carriedCount_ + s)).type());
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        std::int64_t maxTrips = std::numeric_limits<std::int64_t>::max();
        if (const Tensor* m = optionalInputTensor(inputs, 0)) {
            require(m->numel() == 1, "the Loop trip count M must be a single value");
            maxTrips = m->valueAsInt64(0);
        }
        bool condition = true;
        if (const Tensor* c = optionalInputTensor(inputs, 1))
            condition = scalarCondition(*c, "the Loop condition");

        std::vector<Value> carried(carriedCount_);
        for (std::size_t i = 0; i < carriedCount_; ++i) {
            const Value* v = inputs[2 + i];
            if (v) carried[i] = *v;
        }
        std::vector<ScanAccumulator> scans = scanTypes_;

        for (std::int64_t trip = 0; trip < maxTrips && condition; ++trip) {
            throwIfCancelled(ctx);
            std::vector<Value> bodyInputs;
            bodyInputs.reserve(2 + carriedCount_);
            bodyInputs.emplace_back(Tensor::scalar<std::int64_t>(trip));
            bodyInputs.emplace_back(Tensor::scalar<bool>(condition));
            for (const Value& v : carried) bodyInputs.push_back(v);
            auto results = ctx.runSubgraph(*body_, std::move(bodyInputs));
            if (results.size() != 1 + carriedCount_ + scanCount_)
                fail("the Loop body yielded " + std::to_string(results.size()) + " values");
            condition = scalarCondition(results[0].tensor(), "the Loop body's condition output");
            for (std::size_t i = 0; i < carriedCount_; ++i) carried[i] = std::move(results[1 + i]);
            for (std::size_t s = 0; s < scanCount_; ++s) {
                const Value& item = results[1 + carriedCount_ + s];
                if (!item.isTensor()) fail("Loop scan outputs must be tensors");
                auto& acc = scans[s];
                if (!acc.items.empty() && item.tensor().shape() != acc.items.front().shape())
                    fail("Loop scan output " + std::to_string(s) + " changes shape from " +
                         shapeToString(acc.items.front().shape()) + " to " +
                         shapeToString(item.tensor().shape()) + " between iterations");
                acc.items.push_back(item.tensor());
            }
        }

        for (std::size_t i = 0; i < outputs.size(); ++i) {
            if (i < carriedCount_)
                outputs[i] = std::move(carried[i]);
            else
                outputs[i] = Value(scans[i - carriedCount_].stacked(0, false));
        }
    }

  private:
    std::shared_ptr<CompiledGraph> body_;
    std::size_t carriedCount_ = 0, scanCount_ = 0;
    std::vector<ScanAccumulator> scanTypes_;
};

// ---------------------------------------------------------------------------------------------
// Scan

class ScanKernel : public Kernel {
  public:
    explicit ScanKernel(const NodeInfo& node)
        : body_(node.compileGraph("body")), batched_(node.opsetVersion() < 9) {
        const auto& graph = node.find("body")->g();
        scanInputCount_ = static_cast<std::size_t>(node.getInt("num_scan_inputs"));
        const int firstState = batched_ ? 1 : 0;
        const int stateAndScan = node.inputCount() - firstState;
        if (scanInputCount_ < 1 || static_cast<int>(scanInputCount_) > stateAndScan)
            fail("num_scan_inputs " + std::to_string(scanInputCount_) + " does not fit the " +
                 std::to_string(stateAndScan) + " state and scan inputs");
        stateCount_ = static_cast<std::size_t>(stateAndScan) - scanInputCount_;
        if (graph.input_size() != stateAndScan)
            fail("the Scan body takes " + std::to_string(graph.input_size()) +
                 " inputs; expected " + std::to_string(stateAndScan));
        if (graph.output_size() < static_cast<int>(stateCount_))
            fail("the Scan body yields fewer outputs than there are states");
        scanOutputCount_ = static_cast<std::size_t>(graph.output_size()) - stateCount_;
        if (node.outputCount() > static_cast<int>(stateCount_ + scanOutputCount_))
            fail("the node has " + std::to_string(node.outputCount()) +
                 " outputs but the Scan body yields " + std::to_string(graph.output_size()));
        scanOutputTypes_.resize(scanOutputCount_);
        for (std::size_t s = 0; s < scanOutputCount_; ++s)
            scanOutputTypes_[s].setDeclared(graph.output(static_cast<int>(stateCount_ + s)).type());

        auto directions = [&](const char* name, std::size_t count) {
            auto values = node.getInts(name, std::vector<std::int64_t>(count, 0));
            if (values.size() != count)
                fail(std::string(name) + " must have " + std::to_string(count) + " entries");
            for (auto v : values)
                if (v != 0 && v != 1) fail(std::string(name) + " entries must be 0 or 1");
            return values;
        };
        if (batched_) {
            inputReverse_ = directions("directions", scanInputCount_);
            inputAxes_.assign(scanInputCount_, 0);
            outputReverse_.assign(scanOutputCount_, 0);
            outputAxes_.assign(scanOutputCount_, 0);
        } else {
            inputReverse_ = directions("scan_input_directions", scanInputCount_);
            outputReverse_ = directions("scan_output_directions", scanOutputCount_);
            inputAxes_ =
                node.getInts("scan_input_axes", std::vector<std::int64_t>(scanInputCount_, 0));
            outputAxes_ =
                node.getInts("scan_output_axes", std::vector<std::int64_t>(scanOutputCount_, 0));
            if (inputAxes_.size() != scanInputCount_ || outputAxes_.size() != scanOutputCount_)
                fail(
                    "scan_input_axes / scan_output_axes must have one entry per scan input/output");
        }
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        if (batched_)
            runBatched(ctx, inputs, outputs);
        else
            runUnbatched(ctx, inputs, outputs);
    }

  private:
    struct Iterated {
        std::vector<Value> states;
        std::vector<ScanAccumulator> scans;
    };

    // Runs the body `steps` times over scan inputs whose iterated axes are `axes`.
    Iterated iterate(const KernelContext& ctx, std::vector<Value> states,
                     const std::vector<Tensor>& scanInputs, const std::vector<std::size_t>& axes,
                     std::int64_t steps) const {
        Iterated result{std::move(states), scanOutputTypes_};
        for (std::int64_t t = 0; t < steps; ++t) {
            throwIfCancelled(ctx);
            std::vector<Value> bodyInputs = result.states;
            for (std::size_t i = 0; i < scanInputs.size(); ++i) {
                const std::int64_t index = inputReverse_[i] ? steps - 1 - t : t;
                bodyInputs.emplace_back(takeAlongAxis(scanInputs[i], axes[i], index));
            }
            auto results = ctx.runSubgraph(*body_, std::move(bodyInputs));
            if (results.size() != stateCount_ + scanOutputCount_)
                fail("the Scan body yielded " + std::to_string(results.size()) + " values");
            for (std::size_t s = 0; s < stateCount_; ++s) result.states[s] = std::move(results[s]);
            for (std::size_t s = 0; s < scanOutputCount_; ++s) {
                const Tensor& item = results[stateCount_ + s].tensor();
                auto& acc = result.scans[s];
                if (!acc.items.empty() && item.shape() != acc.items.front().shape())
                    fail("Scan output " + std::to_string(s) + " changes shape between iterations");
                acc.items.push_back(item);
            }
        }
        return result;
    }

    void runUnbatched(const KernelContext& ctx, const std::vector<const Value*>& inputs,
                      std::vector<Value>& outputs) const {
        std::vector<Value> states;
        for (std::size_t s = 0; s < stateCount_; ++s) states.push_back(inputTensor(inputs, s));
        std::vector<Tensor> scanInputs;
        std::vector<std::size_t> axes;
        std::int64_t steps = -1;
        for (std::size_t i = 0; i < scanInputCount_; ++i) {
            const Tensor& t = inputTensor(inputs, stateCount_ + i);
            const auto axis = static_cast<std::size_t>(normalizeAxis(inputAxes_[i], t.rank()));
            if (steps >= 0 && t.shape()[axis] != steps)
                fail("scan inputs have different sequence lengths (" + std::to_string(steps) +
                     " and " + std::to_string(t.shape()[axis]) + ")");
            steps = t.shape()[axis];
            scanInputs.push_back(t);
            axes.push_back(axis);
        }
        auto result = iterate(ctx, std::move(states), scanInputs, axes, steps);
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            if (i < stateCount_) {
                outputs[i] = std::move(result.states[i]);
                continue;
            }
            const std::size_t s = i - stateCount_;
            const auto& acc = result.scans[s];
            const std::int64_t rank =
                (acc.items.empty() ? static_cast<std::int64_t>(acc.declaredShape.size())
                                   : acc.items.front().rank()) +
                1;
            const auto axis = static_cast<std::size_t>(normalizeAxis(outputAxes_[s], rank));
            outputs[i] = Value(acc.stacked(axis, outputReverse_[s] != 0));
        }
    }

    // Opset 8: axis 0 of every state and scan input is the batch, axis 1 the sequence.
    void runBatched(const KernelContext& ctx, const std::vector<const Value*>& inputs,
                    std::vector<Value>& outputs) const {
        std::vector<Tensor> states, scanInputs;
        for (std::size_t s = 0; s < stateCount_; ++s) states.push_back(inputTensor(inputs, 1 + s));
        for (std::size_t i = 0; i < scanInputCount_; ++i)
            scanInputs.push_back(inputTensor(inputs, 1 + stateCount_ + i));
        const Tensor& first = scanInputs.front();
        require(first.rank() >= 2, "Scan-8 inputs need a batch and a sequence axis");
        const std::int64_t batch = first.dim(0), maxSteps = first.dim(1);
        for (const Tensor& t : scanInputs)
            if (t.rank() < 2 || t.dim(0) != batch || t.dim(1) != maxSteps)
                fail("Scan-8 inputs disagree on batch size or sequence length");
        for (const Tensor& t : states)
            if (t.rank() < 1 || t.dim(0) != batch) fail("Scan-8 states disagree on batch size");
        std::vector<std::int64_t> lengths(static_cast<std::size_t>(batch), maxSteps);
        if (const Tensor* lens = optionalInputTensor(inputs, 0)) {
            require(lens->numel() == batch, "sequence_lens must have one entry per batch item");
            lengths = lens->toInt64Vector();
            for (auto n : lengths)
                if (n < 0 || n > maxSteps)
                    fail("sequence_lens entry " + std::to_string(n) + " is outside [0, " +
                         std::to_string(maxSteps) + "]");
        }

        std::vector<std::vector<Tensor>> stateParts(stateCount_), scanParts(scanOutputCount_);
        const std::vector<std::size_t> axes(scanInputCount_, 0);
        for (std::int64_t b = 0; b < batch; ++b) {
            std::vector<Value> itemStates;
            for (const Tensor& t : states) itemStates.emplace_back(takeAlongAxis(t, 0, b));
            std::vector<Tensor> itemInputs;
            for (const Tensor& t : scanInputs)
                itemInputs.push_back(sliceAlongAxis(takeAlongAxis(t, 0, b), 0, 0,
                                                    lengths[static_cast<std::size_t>(b)]));
            auto result = iterate(ctx, std::move(itemStates), itemInputs, axes,
                                  lengths[static_cast<std::size_t>(b)]);
            for (std::size_t s = 0; s < stateCount_; ++s)
                stateParts[s].push_back(result.states[s].tensor());
            for (std::size_t s = 0; s < scanOutputCount_; ++s)
                scanParts[s].push_back(padSteps(result.scans[s], maxSteps));
        }
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            auto& parts = i < stateCount_ ? stateParts[i] : scanParts[i - stateCount_];
            if (parts.empty()) {
                // batch 0: the shape of the result is the input's with a zero batch
                Shape shape{0};
                DataType type = i < stateCount_ ? states[i].dtype()
                                                : scanOutputTypes_[i - stateCount_].declaredType;
                if (i < stateCount_) shape = states[i].shape();
                outputs[i] =
                    Value(Tensor(type == DataType::Undefined ? DataType::Float : type, shape));
                continue;
            }
            outputs[i] = Value(stackAlongNewAxis(parts, 0));
        }
    }

    // The stacked scan output of one batch item, padded with zeros to `steps` entries.
    static Tensor padSteps(const ScanAccumulator& acc, std::int64_t steps) {
        Tensor stacked = acc.stacked(0, false);
        if (stacked.dim(0) == steps) return stacked;
        Shape shape = stacked.shape();
        shape[0] = steps - stacked.dim(0);
        return concatAlongAxis({stacked, Tensor::zeros(stacked.dtype(), shape)}, 0);
    }

    std::shared_ptr<CompiledGraph> body_;
    bool batched_;
    std::size_t stateCount_ = 0, scanInputCount_ = 0, scanOutputCount_ = 0;
    std::vector<std::int64_t> inputReverse_, outputReverse_, inputAxes_, outputAxes_;
    std::vector<ScanAccumulator> scanOutputTypes_;
};

}  // namespace

void registerControlFlowOps(KernelRegistry& registry) {
    registry.add<IfKernel>("If", 1);
    registry.add<LoopKernel>("Loop", 1);
    registry.add<ScanKernel>("Scan", 8);
}

}  // namespace onnxlens::engine::ops
