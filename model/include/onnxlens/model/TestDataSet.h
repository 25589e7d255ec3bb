#pragma once
// ONNX test data sets: DIR/model.onnx beside DIR/test_data_set_N/{input_K,output_K}.{pb,npy}.
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"

namespace onnxlens {

struct TestDataSet {
    std::filesystem::path directory;
    std::vector<std::filesystem::path> inputFiles, outputFiles;  // input_K / output_K in K order
    // Paired by position with the graph's non-initializer inputs and its outputs.
    std::vector<std::string> inputNames, outputNames;
};

// The graph inputs that are not initializers, in graph order (what test data sets feed).
std::vector<std::string> feedableInputNames(const onnx::GraphProto& graph);

// Every test_data_set_N folder beside the model, sorted by N (2 before 10).
Result<std::vector<TestDataSet>> discoverTestDataSets(const std::filesystem::path& modelPath,
                                                      const onnx::ModelProto& model);

// One folder: input_K / output_K files with K = 0, 1, ... without gaps; more files than graph
// inputs (outputs) is an error naming the folder.
Result<TestDataSet> readTestDataSetFolder(const std::filesystem::path& folder,
                                          const onnx::ModelProto& model);

}  // namespace onnxlens
