#pragma once
// The model summary shown by `onnxlens-cli info` and the GUI's model panel: plain structs, no
// JSON or Qt, filled once on a worker thread.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/Result.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/StructuralCopy.h"

namespace onnxlens {

struct DimSummary {
    enum class Kind { Value, Symbol, Unknown };
    Kind kind = Kind::Unknown;
    std::int64_t value = 0;  // when kind == Value
    std::string symbol;      // when kind == Symbol (dim_param)
};

struct ValueSummary {
    std::string name;
    std::string dtype;      // numpy-style, see typeName() in TensorTypes.h
    bool hasShape = false;  // false: rank unknown (or not a tensor)
    std::vector<DimSummary> shape;
    std::string docString;
};

struct DynamicAxis {
    std::string tensor;
    int axis = 0;
    std::string symbol;  // empty: an unknown dim without a name
};

struct OpsetSummary {
    std::string domain;  // as written in the model ("" is the default ai.onnx domain)
    std::int64_t version = 0;
};

struct InitializerSummary {
    std::int64_t count = 0;
    std::int64_t parameters = 0;  // elements, counted from dims (external tensors included)
    std::int64_t bytes = 0;       // elements x element size; strings: their total length
    std::int64_t externalCount = 0;
    // Weights elsewhere: Constant node tensors (every graph) and subgraph initializers.
    std::int64_t constantCount = 0;
    std::int64_t constantParameters = 0;
    std::int64_t constantBytes = 0;
};

struct FunctionSummary {
    std::string domain, name;
    std::vector<std::string> inputs, outputs;
    std::int64_t nodeCount = 0;
};

struct CheckerVerdict {
    bool ok = false;
    std::string message;  // empty when ok
    // Set when the model's IR version or ai.onnx opset is newer than the onnx library knows:
    // "the onnx checker in this build knows opsets up to 17; 3 nodes use newer versions and were
    // checked by onnxlens instead" (NewerOpsets.h). Shown whether or not the check passed.
    std::string note;
    std::int64_t nodesCheckedByOnnxlens = 0;
    // The model's ai.onnx opset is beyond every opset this build knows (neither the onnx library
    // nor onnxlens's table): a warning, not a failure; run/compare/bench refuse such a model.
    std::string newerOpsetWarning;
    // ONNX Runtime's contrib operators (MicrosoftOpSchemas.h): "12 com.microsoft nodes checked
    // against onnxlens's schemas (...)"; "" when the model has none.
    std::string microsoftNote;
    std::map<std::string, std::int64_t> checkedByOnnxlensSchemas;  // "com.microsoft::Op" -> nodes
    // Nodes of a domain or operator nobody has a schema for: not checked, neither valid nor not.
    std::vector<std::string> notChecked;
    // Default-domain nodes that only ONNX Runtime defines (LayerNormalization below opset 17,
    // SimplifiedLayerNormalization): a failure, named in `message` too.
    std::vector<std::string> ortExtensionNodes;
};

struct ShapeInferenceSummary {
    bool ok = false;
    std::string message;  // the first error when not ok
    // Node outputs of the main graph whose shape is known in full: the rank and every dim, a
    // number or a symbol ("batch", "past_sequence + sequence"), not a dim inference left unknown
    // or made a placeholder symbol for ("unk__3").
    std::int64_t knownEdges = 0;
    std::int64_t rankedEdges = 0;       // node outputs of the main graph whose rank is known
    std::int64_t shapedByOnnxlens = 0;  // node outputs (subgraphs too) typed by ShapeRules.h
    // Node outputs whose dims the symbolic shape propagation filled (SymbolicShapePropagation.h).
    std::int64_t shapedBySymbolicPropagation = 0;
    std::int64_t totalEdges = 0;  // node outputs of the main graph
};

struct ModelSummary {
    std::filesystem::path path;
    std::uint64_t fileBytes = 0;
    std::int64_t irVersion = 0;
    std::string producerName, producerVersion, domain, docString;
    std::int64_t modelVersion = 0;
    std::vector<OpsetSummary> opsets;
    std::vector<std::pair<std::string, std::string>> metadata;
    std::vector<ValueSummary> inputs;  // initializers excluded
    std::vector<ValueSummary> outputs;
    std::vector<DynamicAxis> dynamicAxes;
    std::int64_t nodeCount = 0;               // the main graph's nodes
    std::int64_t nodeCountWithSubgraphs = 0;  // plus the nodes of every If/Loop/Scan body
    std::map<std::string, std::int64_t>
        opHistogram;                  // "domain::Op" (main graph), default domain "ai.onnx"
    InitializerSummary initializers;  // the main graph's (and the constants elsewhere)
    std::vector<FunctionSummary> functions;
    std::int64_t subgraphCount = 0;  // graph attributes, nested ones included
    CheckerVerdict checker;
    ShapeInferenceSummary shapeInference;
};

// The onnx checker on a copy of the model without its bulk tensor data.
CheckerVerdict runChecker(const onnx::ModelProto& model);

// Shape inference on a copy without bulk tensor data (ShapeInferenceAnyOpset.h: onnx's where the
// library knows the nodes, onnxlens's rules beyond); counts the main graph's node outputs that got
// a shape, whatever their source. Skipped (not ok, with the reason) when checkNodesAgainstSchemas
// fails.
ShapeInferenceSummary runShapeInference(const onnx::ModelProto& model);
// The same from an inference already run on `model` (ShapeInference.h).
ShapeInferenceSummary summarizeShapeInference(const onnx::ModelProto& model,
                                              const InferredShapes& shapes);

Result<ModelSummary> summarizeModel(const LoadedModel& model);

}  // namespace onnxlens
