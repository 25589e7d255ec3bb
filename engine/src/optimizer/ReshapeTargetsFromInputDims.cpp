// Reshape targets computed from the reshaped value's own dims. PyTorch's exporter writes
// x.view(x.size(0), x.size(1), 12, 32) with dynamic axes as Shape(x) -> Gather(0) and Gather(1)
// -> Unsqueeze -> Concat(with 12 and 32) -> Reshape(x, target): a transformer layer's head split
// and merge are four such chains of 5-7 nodes, each run on every run (MiniLM: 168 of its 330
// nodes). An entry that is x's own dim at the same position is Reshape's 0 ("copy this dim",
// allowzero 0), so the target becomes a constant, e.g. [0, 0, 12, 32], computing the same
// whatever the input dims; the chain's nodes nobody reads any more are removed.
//
// A dim counts as x's own at position p when the chain reads Shape(x)[p], or Shape(s)[perm[p]]
// where x = Transpose(s, perm) (the head merge reads the dims before its Transpose). Values are
// matched by name, never by inferred symbols: the rewrite holds for any input whatever the
// model declares.
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

// The integer values of a constant of rank 0 or 1, or nothing.
std::optional<std::vector<std::int64_t>> constantInts(const GraphIndex& index,
                                                      const std::string& name) {
    const auto tensor = constantTensor(index, name);
    if (!tensor || tensor->rank() > 1 ||
        (tensor->dtype() != DataType::Int64 && tensor->dtype() != DataType::Int32))
        return std::nullopt;
    return tensor->toInt64Vector();
}

// One entry of a shape computation: dim `dim` of value `source`.
struct DimOfValue {
    std::string source;
    std::int64_t dim = 0;
};

// `part` as Shape(source)[k]: Gather(Shape(source), [k]) (a one-element 1-D index), or
// Unsqueeze(Gather(Shape(source), k), axes [0]) (a scalar index). `chain` gets the nodes read.
std::optional<DimOfValue> shapeEntry(const GraphIndex& index, const std::string& part,
                                     std::vector<int>& chain) {
    int node = index.producer(part);
    if (node < 0) return std::nullopt;
    bool scalarIndex = false;
    if (isOnnxOp(index.node(node), "Unsqueeze")) {
        const auto& unsqueeze = index.node(node);
        std::optional<std::vector<std::int64_t>> axes;
        if (unsqueeze.input_size() >= 2)
            axes = constantInts(index, unsqueeze.input(1));  // opset 13 on
        else if (const auto* a = findAttribute(unsqueeze, "axes"))
            axes = std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
        if (!axes || *axes != std::vector<std::int64_t>{0}) return std::nullopt;
        chain.push_back(node);
        node = index.producer(unsqueeze.input(0));
        scalarIndex = true;
        if (node < 0) return std::nullopt;
    }
    const auto& gather = index.node(node);
    if (!isOnnxOp(gather, "Gather") || gather.input_size() != 2 ||
        intAttribute(gather, "axis", 0) != 0)
        return std::nullopt;
    const auto indexTensor = constantTensor(index, gather.input(1));
    if (!indexTensor || indexTensor->rank() != (scalarIndex ? 0 : 1) || indexTensor->numel() != 1)
        return std::nullopt;
    const auto k = constantInts(index, gather.input(1));
    if (!k || k->front() < 0) return std::nullopt;
    chain.push_back(node);
    const int shapeNode = index.producer(gather.input(0));
    if (shapeNode < 0) return std::nullopt;
    const auto& shape = index.node(shapeNode);
    if (!isOnnxOp(shape, "Shape") || shape.input_size() != 1 || findAttribute(shape, "end"))
        return std::nullopt;
    const std::int64_t start = intAttribute(shape, "start", 0);
    if (start < 0) return std::nullopt;
    chain.push_back(shapeNode);
    return DimOfValue{shape.input(0), start + k->front()};
}

// True when `entry` is dim p of `data`, read from data itself or from the value data transposes.
bool isOwnDim(const GraphIndex& index, const std::string& data, std::int64_t p,
              const DimOfValue& entry) {
    if (entry.source == data) return entry.dim == p;
    const int transpose = index.producer(data);
    if (transpose < 0 || !isOnnxOp(index.node(transpose), "Transpose") ||
        index.node(transpose).input(0) != entry.source)
        return false;
    const auto* perm = findAttribute(index.node(transpose), "perm");
    return perm && p < perm->ints_size() && perm->ints(static_cast<int>(p)) == entry.dim;
}

// The constant target of `reshape`, or nothing when its target is not such a computation.
std::optional<std::vector<std::int64_t>> targetFromInputDims(const GraphIndex& index,
                                                             const onnx::NodeProto& reshape,
                                                             std::vector<int>& chain) {
    if (!isOnnxOp(reshape, "Reshape") || reshape.input_size() != 2 ||
        intAttribute(reshape, "allowzero", 0) != 0)
        return std::nullopt;
    const int concat = index.producer(reshape.input(1));
    if (concat < 0 || !isOnnxOp(index.node(concat), "Concat")) return std::nullopt;
    const std::int64_t axis = intAttribute(index.node(concat), "axis", 0);
    if (axis != 0 && axis != -1) return std::nullopt;
    chain.push_back(concat);
    std::vector<std::int64_t> target;
    bool dynamic = false;
    for (const auto& part : index.node(concat).input()) {
        if (auto values = constantInts(index, part)) {
            target.insert(target.end(), values->begin(), values->end());
            continue;
        }
        const auto entry = shapeEntry(index, part, chain);
        if (!entry ||
            !isOwnDim(index, reshape.input(0), static_cast<std::int64_t>(target.size()), *entry))
            return std::nullopt;
        target.push_back(0);
        dynamic = true;
    }
    if (!dynamic) return std::nullopt;  // all constants: fold-constants' work
    return target;
}

// Removes the nodes among `candidates` (by first output) that no one reads any more, and then the
// ones they alone read, and the initializers only they read.
void removeUnreadNodes(onnx::GraphProto& graph, std::unordered_set<std::string> candidates) {
    std::unordered_set<std::string> inputsOfRemoved;
    for (bool changed = true; changed;) {
        changed = false;
        const GraphIndex index(graph);
        std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            if (node.output_size() == 0 || !candidates.count(node.output(0))) continue;
            bool read = false;
            for (const auto& out : node.output()) read = read || index.readCount(out) > 0;
            if (read) continue;
            remove[static_cast<std::size_t>(i)] = true;
            candidates.erase(node.output(0));
            for (const auto& in : node.input()) inputsOfRemoved.insert(in);
            // Its inputs' producers (Constant nodes of axes and indices) may now be unread.
            for (const auto& in : node.input())
                if (const int p = index.producer(in); p >= 0 && graph.node(p).output_size() > 0)
                    candidates.insert(graph.node(p).output(0));
            changed = true;
        }
        if (changed) removeNodes(graph, remove);
    }
    removeUnreadInitializers(graph, &inputsOfRemoved);
}

}  // namespace

int reshapeTargetsFromInputDims(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    ValueNames names(graph);
    std::unordered_set<std::string> chainOutputs;
    std::vector<onnx::TensorProto> targets;
    int rewrites = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        std::vector<int> chain;
        const auto target = targetFromInputDims(index, graph.node(i), chain);
        if (!target) continue;
        const std::string name = names.fresh(graph.node(i).input(1) + "/from_input_dims");
        targets.push_back(tensorToProto(
            Tensor::fromVector<std::int64_t>({static_cast<std::int64_t>(target->size())}, *target),
            name));
        graph.mutable_node(i)->set_input(1, name);
        for (const int node : chain) chainOutputs.insert(index.node(node).output(0));
        ++rewrites;
    }
    if (rewrites == 0) return 0;
    for (auto& t : targets) *graph.add_initializer() = std::move(t);
    removeUnreadNodes(graph, std::move(chainOutputs));
    return rewrites;
}

}  // namespace onnxlens::engine
