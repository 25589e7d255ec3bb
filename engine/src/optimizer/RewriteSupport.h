#pragma once
// Small tools the optimizer passes share for reading and rewriting nodes.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/Tensor.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::engine {

using onnxlens::findAttribute;
using onnxlens::intAttribute;
// Sets attribute `name` (replacing one of that name the node has).
void setIntAttribute(onnx::NodeProto& node, const std::string& name, std::int64_t value);
void setStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value);

onnx::NodeProto makeNode(const std::string& op, const std::string& domain, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output);

// Every read of `from` (node inputs, also inside subgraphs that see it as an outer name) now
// reads `to`.
void renameUses(onnx::GraphProto& graph, const std::string& from, const std::string& to);

// Removes the nodes marked in `remove` (indexed like graph.node()), keeping the others' order.
void removeNodes(onnx::GraphProto& graph, const std::vector<bool>& remove);

// Removes the initializers no node, subgraph or graph output reads and no graph input names, of
// those in `among` (every initializer when null): what a rewrite left unread.
void removeUnreadInitializers(onnx::GraphProto& graph,
                              const std::unordered_set<std::string>* among = nullptr);

// A constant's value as an engine tensor (GraphIndex::constant), or nothing when it is not a
// constant or cannot be read.
std::optional<Tensor> constantTensor(const GraphIndex& index, const std::string& name,
                                     const std::filesystem::path& modelDirectory = {});

// A single-element floating constant's value.
std::optional<double> constantScalar(const GraphIndex& index, const std::string& name);
// True when `name` is a floating scalar constant within 1e-4 (relative) of `expected`.
bool constantScalarNear(const GraphIndex& index, const std::string& name, double expected);

// A constant initializer's dims and element type, read without decoding its data.
std::optional<std::vector<std::int64_t>> initializerDims(const GraphIndex& index,
                                                         const std::string& name);
std::optional<int> initializerType(const GraphIndex& index, const std::string& name);
// For a two-input node, the input that is not `known` (or "" when neither or both are).
std::string otherInput(const onnx::NodeProto& node, const std::string& known);
// The sole reader of `value` when it is an ai.onnx `op` node, or -1.
int soleReaderOp(const GraphIndex& index, const std::string& value, const char* op);

// An integer product's accumulator made float the way quantizers write it: `accumulator` ->
// Cast(to float) -> Mul(scale), where the scale is a Mul of two factors (an activation scale and
// a weight scale; that Mul joins the chain when only this product reads it) or one value.
struct ScaledIntegerAccumulator {
    std::vector<int> nodes;  // Cast, Mul [, the scale Mul]
    std::string output;      // the Mul's output (float)
    std::string scaleA;      // the first factor, or the single scale
    std::string scaleB;      // the second factor ("" for a single scale)
};
// `factors(a, b)` accepts the scale Mul's inputs in this order (the matcher tries both orders);
// `single(s)` accepts a single scale value.
template <class Factors, class Single>
std::optional<ScaledIntegerAccumulator> matchScaledIntegerAccumulator(
    const GraphIndex& index, const std::string& accumulator, Factors&& factors, Single&& single) {
    ScaledIntegerAccumulator match;
    const int cast = soleReaderOp(index, accumulator, "Cast");
    const auto* to = cast >= 0 ? findAttribute(index.node(cast), "to") : nullptr;
    if (!to || to->i() != onnx::TensorProto_DataType_FLOAT) return std::nullopt;
    const std::string& floatAccumulator = index.node(cast).output(0);
    const int mul = soleReaderOp(index, floatAccumulator, "Mul");
    if (mul < 0) return std::nullopt;
    const std::string scale = otherInput(index.node(mul), floatAccumulator);
    if (scale.empty()) return std::nullopt;
    match.nodes = {cast, mul};
    match.output = index.node(mul).output(0);
    const int scaleMul = index.producer(scale);
    if (scaleMul >= 0 && isOnnxOp(index.node(scaleMul), "Mul") &&
        index.node(scaleMul).input_size() == 2) {
        const auto& sm = index.node(scaleMul);
        for (int side = 0; side < 2 && match.scaleA.empty(); ++side)
            if (factors(sm.input(side), sm.input(1 - side))) {
                match.scaleA = sm.input(side);
                match.scaleB = sm.input(1 - side);
            }
        if (match.scaleA.empty()) return std::nullopt;
        if (index.soleConsumer(scale) == mul) match.nodes.push_back(scaleMul);
        return match;
    }
    if (!single(scale)) return std::nullopt;
    match.scaleA = scale;
    return match;
}

// The value names a graph uses, and new ones beside them for the values a pass adds:
// fresh("x/blocked") is "x/blocked" when that is free, else "x/blocked_2", "x/blocked_3", ...
class ValueNames {
  public:
    ValueNames() = default;
    // Every name the graph defines: its inputs, initializers and node outputs.
    explicit ValueNames(const onnx::GraphProto& graph);
    // The same when every node reads only names defined before it and no name is defined twice;
    // else nothing (passes that rewrite in the listed order leave such a graph to the compiler
    // to order or refuse).
    static std::optional<ValueNames> inDependencyOrder(const onnx::GraphProto& graph);
    bool contains(const std::string& name) const { return names_.count(name) != 0; }
    // False when the name was already in use.
    bool add(const std::string& name) { return names_.insert(name).second; }
    // The first free name for `base`, not yet taken (add() it once it is used).
    std::string unused(const std::string& base) const;
    // unused(base), taken.
    std::string fresh(const std::string& base);

  private:
    std::unordered_set<std::string> names_;
};

// The pending rewrites of one pass that replaces chains of nodes by one node each.
class Rewriter {
  public:
    explicit Rewriter(onnx::GraphProto& graph) : graph_(graph) {}
    // True when none of `nodes` is part of an earlier rewrite of this pass.
    bool free(const std::vector<int>& nodes) const;
    // `fused` takes the place of the last of `nodes` (everything it reads is computed by then);
    // the others are removed.
    void replace(const std::vector<int>& nodes, onnx::NodeProto fused);
    // Applies the rewrites; returns how many there were.
    int apply();

  private:
    onnx::GraphProto& graph_;
    std::unordered_set<int> used_;
    std::unordered_map<int, onnx::NodeProto> replacements_;
    int count_ = 0;
};

}  // namespace onnxlens::engine
