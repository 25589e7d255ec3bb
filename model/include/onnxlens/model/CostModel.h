#pragma once
// What a model costs, node by node, from its inferred shapes: multiply-accumulates and
// floating-point operations, parameters and their bytes by element type, activation bytes read
// and written, arithmetic intensity, totals per model and per name-scope group, and the peak of
// live activation memory in the order the engine runs the nodes. Qt-free; the counting rules are
// written out in docs/cost-model.md and in CostModel.cpp beside each rule.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"

namespace onnxlens {

struct CostFigures {
    double macs = 0;               // multiply-accumulates (matrix products and convolutions)
    double flops = 0;              // all arithmetic operations: 2 per MAC plus elementwise work
    std::uint64_t parameters = 0;  // elements of the weights read (initializers, Constant nodes)
    std::uint64_t parameterBytes = 0;  // their bytes, at their stored element type
    std::uint64_t bytesRead = 0;       // activation (non-weight) bytes read
    std::uint64_t bytesWritten = 0;    // output bytes written
    // FLOPs per byte moved (activations read and written plus weights), 0 when nothing moves.
    double intensity() const;
    CostFigures& operator+=(const CostFigures& other);
};

struct NodeCost {
    std::string name;    // the node's name, or "OpType(first output)" when unnamed
    std::string opType;  // with "domain::" for other domains than ai.onnx
    std::string scope;   // "/encoder/layer.3/attention" for "/encoder/layer.3/attention/MatMul"
    CostFigures figures;
    bool shapesKnown = true;  // false: a shape the rule needs is unknown, figures are partial
    bool estimate = false;    // a subgraph with an unknown trip count, or an If's larger branch
    std::string note;         // why it is an estimate or partial
};

struct ModelCost {
    std::vector<NodeCost> nodes;  // main graph, in execution order
    CostFigures total;
    std::map<std::string, CostFigures> parametersByType;  // "float32" -> parameters and bytes
    // Totals per name-scope group at every depth ("/encoder", "/encoder/layer.3", ...).
    std::map<std::string, CostFigures> scopes;
    std::uint64_t peakActivationBytes = 0;     // live activations at the worst point of the run
    std::string peakAfterNode;                 // the node after which the peak is reached
    std::map<std::string, std::int64_t> dims;  // symbolic dims as bound (user's or 1)
    std::vector<std::string> assumptions;      // "dim 'batch' taken as 1", unknown shapes
    int nodesWithUnknownShapes = 0;
    // Nodes whose shapes are unknown count in part (0 MACs where the rule needed the shape), so
    // the totals are then lower bounds: shown as "at least X (N nodes unknown)", never as a total.
    bool totalIsLowerBound() const { return nodesWithUnknownShapes > 0; }
};

// Counts the costs of `model` with the symbolic input dims bound to `dims` (unbound ones are taken
// as 1 and listed in `assumptions`; an unnamed dim is bound by an "input:axis" key). Shapes come
// from inferShapesAnyOpset on a weights-free copy with those dims bound. Parameters: every
// initializer and Constant node (main graph and subgraphs, external data included) that a node
// reads, each counted once.
Result<ModelCost> computeModelCost(const onnx::ModelProto& model,
                                   const std::map<std::string, std::int64_t>& dims = {});

// The scope group of a node name: everything before its last '/', "" when it has none.
std::string scopeOfNodeName(const std::string& name);

}  // namespace onnxlens
