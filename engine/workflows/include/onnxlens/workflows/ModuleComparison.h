#pragma once
// A PyTorch export against PyTorch, module by module: the exporter
// (resources/exporter/onnxlens_export.py, `--record-modules` or the timing server's "record")
// writes each module's output on test_data_set_0's inputs into FOLDER/modules/ as .npy, with
// index.json mapping each to the ONNX value of the module's scope (the output of the last node
// under `/encoder/layer.0/attention/` read outside it). This runs model.onnx on the same inputs
// with the engine's optimizer off (every value of the graph as written exists), compares each
// mapped value as the run produces it (the numeric diff's metrics, PyTorch the reference) and
// finds the first module, in the graph's order, outside the tolerance, and the error of the
// modules downstream of it.
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"
#include "onnxlens/workflows/NumericDiff.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

// One tensor a module returned.
struct ModuleOutput {
    std::string module;      // qualified name, "encoder.layer.0.attention"
    std::string moduleType;  // "BertAttention"
    int element = 0;         // which tensor of what it returned (tuples flattened)
    std::string file;        // the recorded .npy, relative to modules/
    std::string onnxValue;   // empty: not mapped (`problem` says why)
    std::string onnxNode;    // the node producing onnxValue
    std::string opType;
    int nodeIndex = -1;  // the node's index in the graph (its topological place)
    std::string problem;
    TensorDiff diff;  // PyTorch the reference; diff.compared false: diff.problem says why
};

struct ModuleComparison {
    std::string dataSet;                // "test_data_set_0"
    std::vector<ModuleOutput> outputs;  // mapped in the graph's order (inner module first), then
                                        // the unmapped ones in PyTorch's call order
    int modules = 0;                    // modules in index.json
    int compared = 0;                   // outputs compared
    int firstDivergence = -1;           // index into outputs; -1: every one within tolerance
    // Indexes into outputs after the first divergence whose value depends on it, in order.
    std::vector<int> growth;
};

// True when FOLDER/modules/index.json exists.
bool hasModuleRecords(const std::filesystem::path& folder);

// Reads FOLDER/modules/index.json, runs FOLDER/model.onnx on FOLDER/<data set>'s inputs and
// compares. Errors name the file (index.json unreadable, the model or data set not loading, the
// run failing); a recorded file that cannot be read is that output's problem.
Result<ModuleComparison> compareModules(const std::filesystem::path& folder,
                                        const Tolerance& tolerance, int threads = 0,
                                        const std::atomic<bool>* cancel = nullptr);

// One line for the report card: the first module that diverges, its ONNX node, its figures, and
// the error of the last downstream module; or how many agree.
std::string moduleComparisonFigure(const ModuleComparison& comparison);
// A markdown section (## Modules against PyTorch) with the divergence and the growth table.
std::string moduleComparisonMarkdown(const ModuleComparison& comparison);
nlohmann::json moduleComparisonJson(const ModuleComparison& comparison);

}  // namespace onnxlens::engine
