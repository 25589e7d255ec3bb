// Sequence and optional operators. A sequence is Value::Kind::Sequence (an immutable, shared
// vector of tensors: every operator builds a new one); an empty optional is Value::Kind::None and
// a full optional is simply the tensor or sequence it holds.
#include "CompiledGraph.h"
#include "OpFamilies.h"
#include "SequenceTensorCopy.h"
#include "onnxlens/engine/Session.h"

namespace onnxlens::engine::ops {
namespace {

const Value& requiredValue(const std::vector<const Value*>& inputs, std::size_t i) {
    if (i >= inputs.size() || inputs[i] == nullptr)
        fail("missing required input " + std::to_string(i));
    return *inputs[i];
}

const std::vector<Tensor>& sequenceInput(const std::vector<const Value*>& inputs, std::size_t i) {
    const Value& v = requiredValue(inputs, i);
    if (!v.isSequence()) fail("input " + std::to_string(i) + " must be a sequence");
    return v.sequence();
}

// A position input (scalar int32/int64) checked against [-size, size - 1 + extra].
std::int64_t positionInput(const Tensor& position, std::int64_t size, std::int64_t extra) {
    if (position.dtype() != DataType::Int32 && position.dtype() != DataType::Int64)
        fail("position must be int32 or int64");
    if (position.numel() != 1) fail("position must be a scalar");
    std::int64_t p = position.valueAsInt64(0);
    if (p < -size || p > size - 1 + extra)
        fail("position " + std::to_string(p) + " is out of range for a sequence of " +
             std::to_string(size) + " tensors");
    return p < 0 ? p + size : p;
}

// The element type a new sequence holding `tensor` after `existing` gets.
DataType joinedElementType(DataType sequenceType, const Tensor& tensor) {
    if (sequenceType != DataType::Undefined && sequenceType != tensor.dtype())
        fail(std::string("cannot put a ") + dataTypeName(tensor.dtype()) +
             " tensor into a sequence of " + dataTypeName(sequenceType));
    return tensor.dtype();
}

class SequenceEmptyKernel : public Kernel {
  public:
    explicit SequenceEmptyKernel(const NodeInfo& node)
        : type_(dataTypeFromOnnx(static_cast<int>(node.getInt("dtype", 1)))) {}
    void run(KernelContext&, const std::vector<const Value*>&,
             std::vector<Value>& outputs) override {
        outputs[0] = Value::sequence({}, type_);
    }

  private:
    DataType type_;
};

class SequenceConstructKernel : public Kernel {
  public:
    explicit SequenceConstructKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        require(!inputs.empty(), "SequenceConstruct needs at least one tensor");
        std::vector<Tensor> items;
        DataType type = DataType::Undefined;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Tensor& t = inputTensor(inputs, i);
            type = joinedElementType(type, t);
            items.push_back(t);
        }
        outputs[0] = Value::sequence(std::move(items), type);
    }
};

class SequenceInsertKernel : public Kernel {
  public:
    explicit SequenceInsertKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Value& sequence = requiredValue(inputs, 0);
        if (!sequence.isSequence()) fail("input 0 must be a sequence");
        const Tensor& tensor = inputTensor(inputs, 1);
        std::vector<Tensor> items = sequence.sequence();
        const auto size = static_cast<std::int64_t>(items.size());
        std::int64_t at = size;
        if (const Tensor* position = optionalInputTensor(inputs, 2))
            at = positionInput(*position, size, 1);
        const DataType type = joinedElementType(sequence.sequenceElementType(), tensor);
        items.insert(items.begin() + at, tensor);
        outputs[0] = Value::sequence(std::move(items), type);
    }
};

class SequenceAtKernel : public Kernel {
  public:
    explicit SequenceAtKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const auto& items = sequenceInput(inputs, 0);
        const auto size = static_cast<std::int64_t>(items.size());
        outputs[0] =
            Value(items[static_cast<std::size_t>(positionInput(inputTensor(inputs, 1), size, 0))]);
    }
};

class SequenceEraseKernel : public Kernel {
  public:
    explicit SequenceEraseKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Value& sequence = requiredValue(inputs, 0);
        std::vector<Tensor> items = sequenceInput(inputs, 0);
        const auto size = static_cast<std::int64_t>(items.size());
        if (size == 0) fail("cannot erase from an empty sequence");
        std::int64_t at = size - 1;
        if (const Tensor* position = optionalInputTensor(inputs, 1))
            at = positionInput(*position, size, 0);
        items.erase(items.begin() + at);
        outputs[0] = Value::sequence(std::move(items), sequence.sequenceElementType());
    }
};

class SequenceLengthKernel : public Kernel {
  public:
    explicit SequenceLengthKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        outputs[0] = Value(Tensor::scalar<std::int64_t>(
            static_cast<std::int64_t>(sequenceInput(inputs, 0).size())));
    }
};

class SplitToSequenceKernel : public Kernel {
  public:
    explicit SplitToSequenceKernel(const NodeInfo& node)
        : axis_(node.getInt("axis", 0)), keepDims_(node.getInt("keepdims", 1) != 0) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const Tensor& input = inputTensor(inputs, 0);
        if (input.rank() == 0) fail("SplitToSequence needs a tensor of rank >= 1");
        const auto axis = static_cast<std::size_t>(normalizeAxis(axis_, input.rank()));
        const std::int64_t dim = input.shape()[axis];
        std::vector<std::int64_t> lengths;
        const Tensor* split = optionalInputTensor(inputs, 1);
        bool squeeze = false;
        if (!split) {
            lengths.assign(static_cast<std::size_t>(dim), 1);
            squeeze = !keepDims_;
        } else if (split->rank() == 0) {
            const std::int64_t chunk = split->valueAsInt64(0);
            if (chunk <= 0) fail("split must be positive, got " + std::to_string(chunk));
            for (std::int64_t start = 0; start < dim; start += chunk)
                lengths.push_back(std::min(chunk, dim - start));
        } else {
            if (split->rank() != 1) fail("split must be a scalar or a 1-D tensor");
            lengths = split->toInt64Vector();
            std::int64_t total = 0;
            for (auto n : lengths) {
                if (n < 0) fail("split lengths must not be negative");
                total += n;
            }
            if (total != dim)
                fail("split lengths sum to " + std::to_string(total) + " but the axis has " +
                     std::to_string(dim) + " elements");
        }
        std::vector<Tensor> items;
        items.reserve(lengths.size());
        std::int64_t start = 0;
        for (auto n : lengths) {
            items.push_back(squeeze ? takeAlongAxis(input, axis, start)
                                    : sliceAlongAxis(input, axis, start, n));
            start += n;
        }
        outputs[0] = Value::sequence(std::move(items), input.dtype());
    }

  private:
    std::int64_t axis_;
    bool keepDims_;
};

class ConcatFromSequenceKernel : public Kernel {
  public:
    explicit ConcatFromSequenceKernel(const NodeInfo& node)
        : axis_(node.getInt("axis")), newAxis_(node.getInt("new_axis", 0) != 0) {}

    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const auto& items = sequenceInput(inputs, 0);
        if (items.empty()) fail("ConcatFromSequence needs a non-empty sequence");
        const std::int64_t rank = items.front().rank();
        if (newAxis_) {
            const auto axis = static_cast<std::size_t>(normalizeAxis(axis_, rank + 1));
            outputs[0] = Value(stackAlongNewAxis(items, axis));
        } else {
            if (rank == 0) fail("cannot concatenate scalars without new_axis");
            outputs[0] =
                Value(concatAlongAxis(items, static_cast<std::size_t>(normalizeAxis(axis_, rank))));
        }
    }

  private:
    std::int64_t axis_;
    bool newAxis_;
};

// Runs its body once per element of the first (sequence) input; other sequence inputs are
// iterated in step, tensor inputs are passed whole to every iteration.
class SequenceMapKernel : public Kernel {
  public:
    explicit SequenceMapKernel(const NodeInfo& node) : body_(node.compileGraph("body")) {
        const auto& graph = node.find("body")->g();
        if (graph.input_size() != node.inputCount())
            fail("the SequenceMap body takes " + std::to_string(graph.input_size()) +
                 " inputs but the node has " + std::to_string(node.inputCount()));
        if (graph.output_size() != node.outputCount())
            fail("the SequenceMap body yields " + std::to_string(graph.output_size()) +
                 " outputs but the node has " + std::to_string(node.outputCount()));
        for (const auto& out : graph.output())
            outputTypes_.push_back(declaredTensorType(out.type()));
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const std::size_t count = sequenceInput(inputs, 0).size();
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const Value& v = requiredValue(inputs, i);
            if (v.isSequence() && v.sequence().size() != count)
                fail("sequence input " + std::to_string(i) + " has " +
                     std::to_string(v.sequence().size()) + " elements, the first has " +
                     std::to_string(count));
        }
        std::vector<std::vector<Tensor>> collected(outputs.size());
        for (std::size_t n = 0; n < count; ++n) {
            if (ctx.cancelled()) throw RunCancelled();
            std::vector<Value> bodyInputs;
            bodyInputs.reserve(inputs.size());
            for (const Value* v : inputs)
                bodyInputs.push_back(v->isSequence() ? Value(v->sequence()[n]) : *v);
            auto results = ctx.runSubgraph(*body_, std::move(bodyInputs));
            for (std::size_t o = 0; o < outputs.size(); ++o) {
                if (!results.at(o).isTensor()) fail("SequenceMap body outputs must be tensors");
                collected[o].push_back(results[o].tensor());
            }
        }
        for (std::size_t o = 0; o < outputs.size(); ++o) {
            DataType type = collected[o].empty() ? outputTypes_[o] : collected[o].front().dtype();
            outputs[o] = Value::sequence(std::move(collected[o]), type);
        }
    }

  private:
    std::shared_ptr<CompiledGraph> body_;
    std::vector<DataType> outputTypes_;
};

// Optional(x) holds x; Optional() with a type attribute is the empty optional.
class OptionalKernel : public Kernel {
  public:
    explicit OptionalKernel(const NodeInfo& node) {
        if (!node.hasInput(0) && !node.hasAttribute("type"))
            fail("Optional without an input needs the 'type' attribute");
    }
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        outputs[0] = !inputs.empty() && inputs[0] ? *inputs[0] : Value();
    }
};

class OptionalHasElementKernel : public Kernel {
  public:
    explicit OptionalHasElementKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        const bool has = !inputs.empty() && inputs[0] && !inputs[0]->isNone();
        outputs[0] = Value(Tensor::scalar<bool>(has));
    }
};

class OptionalGetElementKernel : public Kernel {
  public:
    explicit OptionalGetElementKernel(const NodeInfo&) {}
    void run(KernelContext&, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        if (inputs.empty() || !inputs[0] || inputs[0]->isNone())
            fail("OptionalGetElement on an empty optional");
        outputs[0] = *inputs[0];
    }
};

}  // namespace

void registerSequenceOps(KernelRegistry& registry) {
    registry.add<SequenceEmptyKernel>("SequenceEmpty", 11);
    registry.add<SequenceConstructKernel>("SequenceConstruct", 11);
    registry.add<SequenceInsertKernel>("SequenceInsert", 11);
    registry.add<SequenceAtKernel>("SequenceAt", 11);
    registry.add<SequenceEraseKernel>("SequenceErase", 11);
    registry.add<SequenceLengthKernel>("SequenceLength", 11);
    registry.add<SplitToSequenceKernel>("SplitToSequence", 11);
    registry.add<ConcatFromSequenceKernel>("ConcatFromSequence", 11);
    registry.add<SequenceMapKernel>("SequenceMap", 17);
    registry.add<OptionalKernel>("Optional", 15);
    registry.add<OptionalHasElementKernel>("OptionalHasElement", 15);
    registry.add<OptionalGetElementKernel>("OptionalGetElement", 15);
}

}  // namespace onnxlens::engine::ops
