#pragma once
// What the edits of ModelEdits.cpp and ModelEditsGraph.cpp share: the names of a graph, types of
// values, node lookup, reading small integer constants, fresh names.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnxlens/model/ModelEdits.h"
#include "onnxlens/model/ShapeInference.h"

namespace onnxlens::detail {

// Every value name defined or read in `graph` and its subgraphs (inputs, outputs, initializers,
// sparse initializers, value_info, node inputs and outputs).
void collectValueNames(const onnx::GraphProto& graph, std::set<std::string>& names);
void collectNodeNames(const onnx::GraphProto& graph, std::set<std::string>& names);
// The values `graph` itself defines (inputs, initializers, node outputs).
std::set<std::string> definedValues(const onnx::GraphProto& graph);
// The values nodes of subgraphs of `node` read from outside them.
std::set<std::string> outerScopeReads(const onnx::NodeProto& node);

// The node of the main graph called `name` (its name, or profileNameOf for an unnamed node):
// its index, or -1.
int findNode(const onnx::GraphProto& graph, const std::string& name);

// A value's declared type (input, output, value_info, initializer) or the inferred one.
std::optional<onnx::TypeProto> valueType(const onnx::GraphProto& graph, const std::string& name,
                                         const InferredShapes* shapes);

// A 1-D (or scalar) int64/int32 constant's values; nullopt for anything else.
std::optional<std::vector<std::int64_t>> intConstant(const onnx::TensorProto& tensor);
onnx::TensorProto int64Tensor(const std::string& name, const std::vector<std::int64_t>& values);

// A name not in `used` built from `base` (base, base_1, ...), added to `used`.
std::string freshName(const std::string& base, std::set<std::string>& used);

// "'x'" quoting for messages.
inline std::string quoteName(const std::string& s) { return "'" + s + "'"; }

// Graph edits (ModelEditsGraph.cpp). Each works on a weights-stubbed copy: it may fail midway and
// return an error, the caller then drops the copy.
Status renameValue(onnx::ModelProto& model, const std::string& from, const std::string& to,
                   ModelEditReport& report);
Status renameNode(onnx::ModelProto& model, const std::string& from, const std::string& to,
                  ModelEditReport& report);
Status pruneGraph(onnx::ModelProto& model, ModelEditReport& report);
Status extractSubgraph(onnx::ModelProto& model, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, ModelEditReport& report);
Status deleteNode(onnx::ModelProto& model, const std::string& node, ModelEditReport& report);
Status makeBatchDynamic(onnx::ModelProto& model, const std::string& symbol,
                        ModelEditReport& report);
// Values computed (transitively) from `seeds` by the main graph's nodes, seeds included.
std::set<std::string> downstreamValues(const onnx::GraphProto& graph,
                                       const std::set<std::string>& seeds);
// Drops value_info entries of `values` (re-inferred after a dim changes).
int dropValueInfo(onnx::GraphProto& graph, const std::set<std::string>& values);

}  // namespace onnxlens::detail
