#pragma once
// Running ONNX backend test cases: a folder with model.onnx and test_data_set_N folders.
#include <filesystem>
#include <string>
#include <vector>

#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

struct ConformanceCaseResult {
    enum class Outcome { Passed, Failed, Skipped };
    std::string name;   // the case folder's name, e.g. "test_add_bcast"
    std::string suite;  // the parent folder's name, e.g. "node"
    std::filesystem::path directory;
    Outcome outcome = Outcome::Failed;
    std::string reason;  // why it failed or was skipped
    double seconds = 0;
};

struct ConformanceOptions {
    Tolerance tolerance;
    int threads = 1;
};

// Case folders under `root`: root itself when it holds model.onnx, otherwise its subfolders that
// do (sorted by name).
std::vector<std::filesystem::path> findConformanceCases(const std::filesystem::path& root);

// Cases whose expected outputs are random draws (the reference cannot be reproduced), with why.
// Only these may be skipped.
const std::vector<std::pair<std::string, std::string>>& randomOutputCases();

// Loads, compiles and runs every data set of one case, comparing each output.
ConformanceCaseResult runConformanceCase(const std::filesystem::path& caseDirectory,
                                         const ConformanceOptions& options = {});

}  // namespace onnxlens::engine
