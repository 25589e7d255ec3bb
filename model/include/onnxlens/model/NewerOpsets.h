#pragma once
// Models written for a newer ai.onnx opset (or IR version) than the onnx library linked into
// this build knows. Debian's onnx 1.12 knows opsets up to 17 and IR up to 8; today's exporters
// write opsets 18 to 21. The onnx checker and shape inference would judge such nodes against
// their opset-17 schemas (a ReduceMean-18 with axes as an input "has input size 2 not in range
// [1, 1]"): a false failure on a valid model. Here those nodes are found, checked against a
// table of the schema changes of opsets 18 to 24 that onnxlens carries, and hidden from the
// library behind a placeholder so it can check (and infer shapes for) the rest of the model.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace onnxlens {

// What the linked onnx library knows.
int onnxLibraryOpset();      // newest ai.onnx opset (17 for onnx 1.12)
int onnxLibraryIrVersion();  // newest IR version (8 for onnx 1.12)

// Newest ai.onnx opset whose schema changes onnxlens's table describes (see NewerOpsets.cpp).
int newestOpsetKnownToOnnxlens();

// The domain of the placeholder nodes in a library copy (adaptForOnnxLibrary).
inline constexpr const char* kNewerOpsetPlaceholderDomain = "onnxlens.newer_opset";

struct NewerOpsetNode {
    std::string graph;  // "main graph", "function 'F'" or the subgraph attribute's path
    std::string name, opType;
    int opsetVersion = 0;     // the node's domain opset in the model
    int schemaVersion = 0;    // the operator version that opset selects (> onnxLibraryOpset())
    bool structural = false;  // inputs/attributes changed, not only the types
};

struct NewerOpsetReport {
    int modelOpset = 0;  // the model's ai.onnx opset (0 when it imports none)
    std::int64_t modelIrVersion = 0;
    bool opsetNewerThanLibrary = false;
    bool irNewerThanLibrary = false;
    bool opsetNewerThanOnnxlens = false;  // beyond every table entry: nothing can vouch for it
    std::vector<NewerOpsetNode> nodes;    // nodes the library cannot check, checked by onnxlens
    std::vector<std::string> problems;    // what onnxlens's checks of those nodes found
    bool applies() const { return opsetNewerThanLibrary || irNewerThanLibrary; }
};

// Finds and checks the nodes (main graph, subgraphs and local functions) whose operator
// version is newer than the library's: input and output counts, attribute names and types,
// required attributes and, where the graph declares it, the element type of the first input.
NewerOpsetReport checkNewerOpsetNodes(const onnx::ModelProto& model);

// One line for a user: "the onnx checker in this build knows opsets up to 17; 3 nodes use newer
// versions and were checked by onnxlens instead". Empty when the report does not apply.
std::string describeNewerOpsetCheck(const NewerOpsetReport& report);

// Turns `copy` into a model the library can check and infer: IR version and ai.onnx opset
// lowered to the library's, every node whose inputs or attributes changed after that opset moved
// to kNewerOpsetPlaceholderDomain (same inputs, outputs and attributes; the library skips nodes
// of unknown custom domains). Nodes whose newer versions only widened the types stay as they are.
// Returns false (copy untouched) when the model is not newer than the library.
bool adaptForOnnxLibrary(onnx::ModelProto& copy);

}  // namespace onnxlens
