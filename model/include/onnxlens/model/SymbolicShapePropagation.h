#pragma once
// Symbolic shape propagation: what onnx's inference (even with its data propagation) leaves
// unknown in the shape-computing subgraph of exported models. Torch's exporters compute shapes at
// run time: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range over a Gather'd length,
// `past + sequence` as an Add of two Gather'd dims, Expand through ConstantOfShape / Equal / Where.
// onnx 1.12 carries dims through Shape, Gather, Concat and friends, but not through arithmetic or
// Range, and it makes up a fresh symbol ("unk__2") for every dim it cannot know; those symbols then
// spread (a Range of unk__2 added to [batch, sequence, 768] breaks `sequence` for the whole
// model).
//
// This pass reads a model as inference left it and propagates the VALUES of small integer tensors
// (each element an integer or a SymbolicExpr over the model's dims) through the shape-computing
// ops, then gives Reshape, Expand, Range, ConstantOfShape, Tile and Slice outputs the dims those
// values determine. It only fills dims inference left unknown (or made up); it never replaces a
// number or a declared symbol. inferShapesAnyOpset (ShapeInferenceAnyOpset.h) alternates it with
// onnx's inference until nothing changes.
//
// Assumptions, as ONNX Runtime's symbolic shape inference makes them: a symbolic start or end of a
// Slice lies inside the sliced dim (the model computed it from the shapes), a Range with a step of
// 1 over a symbolic length is not empty, and every symbol is >= 0. Where a number would need more
// (a constant end on a symbolic dim: min(5, sequence)), the dim stays unknown.
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>

namespace onnxlens {

// The dim_params onnx's inference made up ("unk__3"), told apart from the ones the model declares
// (graph inputs, outputs and value_info of every graph of the model as loaded).
class GeneratedSymbols {
  public:
    explicit GeneratedSymbols(const onnx::ModelProto& original);
    bool isGenerated(const std::string& dimParam) const;
    // Whether the model as loaded has a value_info entry of that name (any graph).
    bool declaresValue(const std::string& name) const;
    // Whether a main graph input declares that dim_param.
    bool isInputSymbol(const std::string& dimParam) const;

  private:
    std::set<std::string> declared_, declaredValues_, inputSymbols_;
};

// One pass over the main graph and its subgraphs of `inferred` (value_info as inference left it):
// the node outputs whose type it can make more complete, keyed by value name. Each type is a
// tensor type with the inferred dims kept and the unknown ones filled where the pass knows them.
std::map<std::string, onnx::TypeProto> propagateSymbolicShapes(const onnx::ModelProto& inferred,
                                                               const GeneratedSymbols& generated);

// Prepares `model` (as inference left it) for the next round of inference: drops from every
// graph's value_info the entries with an unknown or made-up dim (those the model declares stay,
// less their made-up dims), clears made-up dims of graph outputs, and writes `hints` in (as
// value_info, or into a graph output's unknown dims), so that onnx's inference rebuilds the shapes
// after them from the hints.
void applySymbolicHints(onnx::ModelProto& model,
                        const std::map<std::string, onnx::TypeProto>& hints,
                        const GeneratedSymbols& generated);

}  // namespace onnxlens
