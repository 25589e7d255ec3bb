#pragma once
// ONNX Runtime's contrib operators (the com.microsoft domain, version 1) that onnxlens knows:
// their schemas (inputs, outputs, attributes, type constraints, output shapes), written by
// onnxlens from ONNX Runtime's docs/ContribOperators.md and registered once per process with the
// linked onnx library's own registry, so that onnx's checker verifies those nodes and onnx's shape
// inference types their outputs like any other node's.
//
// ONNX Runtime also registers LayerNormalization (which ONNX only has from opset 17) and
// SimplifiedLayerNormalization (never an ONNX operator) in the default domain at version 1.
// Those nodes are not valid ONNX below opset 17: the checker says so (checkMicrosoftNodes), and
// the library copies move them to kOrtOnnxDomainPlaceholder, a domain whose schemas type them,
// so that the rest of the model is still checked and inferred.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace onnxlens {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";
// Where the library copies put ONNX Runtime's default-domain extensions (see above).
inline constexpr const char* kOrtOnnxDomainPlaceholder = "onnxlens.ort_onnx_domain";

// Registers the schemas with onnx's registry, once per process (std::call_once). Every entry
// point that reaches onnx's checker, shape inference or registry calls it first (runChecker,
// checkNodesAgainstSchemas, inferShapesAnyOpset, loadModel, onnxLibraryOpset).
void registerMicrosoftOpSchemas();

// The com.microsoft operators whose schemas onnxlens registers.
const std::vector<std::string>& microsoftOpsKnownToOnnxlens();

// A default-domain node that ONNX Runtime accepts as its own extension but ONNX does not:
// LayerNormalization below opset 17, SimplifiedLayerNormalization at any opset.
bool isOrtOnnxDomainExtension(const onnx::NodeProto& node, int defaultOpset);

// In a copy for the onnx library: moves those nodes (graph, subgraphs, local functions) to
// kOrtOnnxDomainPlaceholder and imports it. Returns how many nodes moved.
int moveOrtOnnxDomainExtensions(onnx::ModelProto& copy);

struct MicrosoftCheckReport {
    // Nodes verified against onnxlens's com.microsoft schemas, by op type ("com.microsoft::Op").
    std::map<std::string, std::int64_t> checkedByOp;
    std::int64_t checkedNodes = 0;
    // Nodes nobody checked: a domain or operator neither onnx nor onnxlens has a schema for.
    // "main graph node 'n' (custom.domain::Op)".
    std::vector<std::string> notChecked;
    // ONNX Runtime's default-domain extensions found (isOrtOnnxDomainExtension), as labels.
    std::vector<std::string> ortExtensionNodes;
    // Type problems of com.microsoft nodes against their schemas' type constraints (inputs whose
    // element type the graph declares).
    std::vector<std::string> problems;
};

// Walks the model (graph, subgraphs, local functions) for the report above. The structural
// checks (counts, attributes) are onnx's checker's, on the registered schemas.
MicrosoftCheckReport checkMicrosoftNodes(const onnx::ModelProto& model);

// The failure line for ONNX Runtime's default-domain extensions, "" when there are none.
std::string describeOrtExtensionNodes(const MicrosoftCheckReport& report);

// One line for a user: "12 com.microsoft nodes checked against onnxlens's schemas (Attention 2,
// ...); 1 node not checked: ...". Empty when there is nothing to say.
std::string describeMicrosoftCheck(const MicrosoftCheckReport& report);

}  // namespace onnxlens
