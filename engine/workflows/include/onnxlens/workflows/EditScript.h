#pragma once
// Edit scripts: a list of model edits (model/ModelEdits.h) as JSON, applied in order. The CLI's
// `edit --script`, the command line's own edit options and the window's edit history (exported,
// replayed on the next export of the same model) use this one format:
//
//   {"edits": [
//     {"op": "set-dim", "tensor": "x", "axis": 0, "value": "batch"},
//     {"op": "make-batch-dynamic", "symbol": "batch"},
//     {"op": "rename", "from": "old", "to": "new", "target": "tensor"},   target: auto|tensor|node
//     {"op": "add-output", "tensor": "t"},
//     {"op": "remove-output", "tensor": "y"},
//     {"op": "prune"},
//     {"op": "extract", "inputs": ["a"], "outputs": ["b", "c"]},
//     {"op": "delete-node", "node": "/block/Dropout"},
//     {"op": "set-attr", "node": "conv1", "attribute": "group", "value": "2"},
//     {"op": "set-initializer", "initializer": "w", "file": "w.npy"},
//     {"op": "metadata", "key": "author", "value": "me"},
//     {"op": "opset", "version": 13}
//   ]}
//
// A bare array of edits is read too. Unknown keys of an edit are an error naming the edit's index
// (a typo must not silently change nothing). set-initializer's relative file is resolved against
// the script's folder when read from a file. A set-initializer edit made in the window from a
// tensor in memory (no file) cannot be exported: editScriptToJson refuses it.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/model/ModelEdits.h"
#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

nlohmann::json modelEditToJson(const ModelEdit& edit);
// `where` prefixes errors ("edit 3").
Result<ModelEdit> modelEditFromJson(const nlohmann::json& json, const std::string& where = "edit");

// {"edits": [...]}. Refuses an edit it cannot write (set-initializer from memory).
Result<std::string> editScriptToJson(const std::vector<ModelEdit>& edits);
Result<std::vector<ModelEdit>> parseEditScript(const std::string& text,
                                               const std::filesystem::path& baseDirectory = {});
Result<std::vector<ModelEdit>> readEditScriptFile(const std::filesystem::path& file);
Status writeEditScriptFile(const std::filesystem::path& file, const std::vector<ModelEdit>& edits);

struct EditScriptOptions {
    // Passed to every edit (set-initializer files, external data). An empty checkNode becomes
    // checkNodeWithEngineKernel.
    ModelEditOptions editOptions;
    // After the edits: the optimizer's cleanup passes only (identity elimination, constant
    // folding), never fusions.
    bool cleanup = false;
    // Report what every edit would change and leave the model as it is (each edit previewed on a
    // weights-free copy that carries the earlier edits).
    bool dryRun = false;
};

struct EditScriptResult {
    std::vector<ModelEditReport> reports;  // one per edit applied (or previewed), in order
    // The first edit that failed (index into the edits), -1 when all applied.
    int failedIndex = -1;
    std::string error;  // its error, naming the edit ("edit 2 (rename 'a' to 'b'): ...")
    bool ok() const { return failedIndex < 0; }
    int cleanupRewrites = 0;  // what the cleanup passes changed
    std::vector<std::string> cleanupPasses;
};

// ModelEditOptions::checkNode through the engine: constructs the kernel that would run `node`
// (at the model's opset of its domain), so that an attribute the kernel refuses (num_heads 0,
// block_size not a power of two, bits outside {2, 4, 8}) refuses the edit with the kernel's
// message. Nodes the engine has no kernel for, and nodes with subgraphs, pass.
Status checkNodeWithEngineKernel(const onnx::ModelProto& model, const onnx::NodeProto& node);

// Applies `edits` in order and stops at the first that fails: the edits before it stay applied
// (each edit is atomic, the script is not: a caller that needs all or nothing keeps a copy, as the
// CLI writes nothing on failure). Cleanup runs only when every edit applied.
EditScriptResult applyEditScript(onnx::ModelProto& model, const std::vector<ModelEdit>& edits,
                                 const EditScriptOptions& options = {});

// The optimizer's cleanup passes (identity and inference-dropout elimination, constant folding)
// on `model`: the number of rewrites. `modelDirectory` resolves external data.
int cleanupModel(onnx::ModelProto& model, const std::filesystem::path& modelDirectory,
                 std::vector<std::string>* passesThatChanged = nullptr);

// The check after make-batch-dynamic: run the model once with batch `batch` (seeded random
// inputs, every other symbol bound to `otherDims`), then each sample alone with batch 1, and
// compare sample by sample. maxAbsDifference is over every output and sample.
struct BatchVerification {
    std::string symbol;
    std::int64_t batch = 4;
    bool ran = false;   // both runs completed
    std::string error;  // why not
    double maxAbsDifference = 0;
    std::string worstOutput;           // the output holding the largest difference
    std::vector<std::string> outputs;  // the outputs compared (those whose dim 0 is the batch)
    bool passed(double tolerance = 1e-4) const { return ran && maxAbsDifference <= tolerance; }
};
Result<BatchVerification> verifyDynamicBatch(const onnx::ModelProto& model,
                                             const std::filesystem::path& modelDirectory,
                                             const std::string& symbol, std::int64_t batch = 4,
                                             std::int64_t otherDims = 1, std::uint64_t seed = 0);

}  // namespace onnxlens::engine
