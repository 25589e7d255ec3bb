#pragma once
// What differs between two models (`onnxlens-cli diff A B`, Tools > Compare Models): nodes matched
// by name, then by their output names, then by op type and place in the graph (the producers of
// their inputs matched, or the consumers of their outputs), so that two exports of one network
// with every name changed still match node for node; then added, removed and changed nodes (op
// type, domain, attributes, inputs), initializers (dtype, shape, the largest difference of their
// values), the IR version, opsets, producer, metadata, graph inputs and outputs.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace onnxlens::engine {

struct NodeDiff {
    enum class Kind { Same, Renamed, Changed, Added, Removed };
    Kind kind = Kind::Same;
    int a = -1, b = -1;  // index in A's / B's graph().node(); -1 when absent there
    std::string nameA, nameB, opTypeA, opTypeB;
    std::string matchedBy;             // "name", "outputs", "inputs", "consumers", "order"
    std::vector<std::string> changes;  // "attribute strides: 1x1 -> 2x2", "input 1: W -> W2"
};

struct InitializerDiff {
    enum class Kind { Same, Changed, Added, Removed };
    Kind kind = Kind::Same;
    std::string nameA, nameB;
    std::string typeA, typeB;  // "float32[64x3x7x7]"
    // The largest |a - b| over the elements, when both hold numeric values of one shape and they
    // were compared (`compareValues`); -1 otherwise.
    double maxAbsDifference = -1;
    std::string change;  // "values differ (max abs 0.5)", "shape 64x3 -> 64x4", ...
};

struct ModelDiffOptions {
    // Compare initializer values element by element (one pair converted at a time). Off: only
    // dtype and shape (the weights may already have left the protos, as in a compiled session).
    bool compareValues = true;
    // Directories external data of A and B resolve against.
    std::filesystem::path directoryA, directoryB;
};

struct ModelDiff {
    std::string nameA, nameB;                // file names, for the report
    std::vector<std::string> headerChanges;  // "IR version 7 -> 8", "opset ai.onnx 13 -> 17"
    std::vector<std::string> inputChanges, outputChanges, metadataChanges;
    std::vector<NodeDiff> nodes;                // matched pairs in A's order, then B's added nodes
    std::vector<InitializerDiff> initializers;  // only the ones that differ
    // Value of A -> the value of B holding the same quantity: same name in both graphs, graph
    // outputs by position, outputs of nodes matched with the same op type by position.
    std::map<std::string, std::string> valueMap;
    int nodesA = 0, nodesB = 0;
    int same = 0, renamed = 0, changed = 0, added = 0, removed = 0;

    bool identical() const;
    // The node pair of A's node `a` (nullptr when it has none).
    const NodeDiff* matchOfA(int a) const;
    const NodeDiff* matchOfB(int b) const;
};

const char* nodeDiffKindName(NodeDiff::Kind kind);

ModelDiff diffModels(const onnx::ModelProto& a, const onnx::ModelProto& b,
                     const ModelDiffOptions& options = {});

// The model without its weights' bytes: nodes, inputs, outputs, opsets, metadata, and the
// initializers' names, dtypes and dims; what the analysis and the window need of a model whose
// weights went into a session.
onnx::ModelProto modelSkeleton(const onnx::ModelProto& model);

nlohmann::json modelDiffJson(const ModelDiff& diff);
// The report a person reads: a summary line, then each section with at most `maxLines` entries
// (the JSON has all of them).
std::string modelDiffText(const ModelDiff& diff, std::size_t maxLines = 50);

}  // namespace onnxlens::engine
