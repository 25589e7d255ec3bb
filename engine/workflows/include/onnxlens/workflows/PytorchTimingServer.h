#pragma once
// PyTorch's side of an interleaved latency comparison: the exporter script started as
// `python -u onnxlens_export.py --serve-timing FOLDER [--threads N]` rebuilds the exported module
// from export.json, loads test_data_set_0's inputs, prints "timing: ready", and then answers each
// "run" line on its stdin with "timing: MS", one timed forward pass. The engine, in C++, runs
// between two requests, so both sides are timed A, B, A, B under the same machine load. A "record"
// line makes it record each module's output into FOLDER/modules/ (ModuleComparison.h).
#include <filesystem>
#include <memory>
#include <string>

#include "onnxlens/model/Result.h"

namespace onnxlens::engine {

class PytorchTimingServer {
  public:
    // Starts the script and waits (at most `startSeconds`) for "timing: ready". Errors carry the
    // script's "error: ..." line when it wrote one.
    static Result<std::unique_ptr<PytorchTimingServer>> start(const std::string& python,
                                                              const std::filesystem::path& script,
                                                              const std::filesystem::path& folder,
                                                              int threads,
                                                              double startSeconds = 300);
    ~PytorchTimingServer();  // closes its stdin, waits briefly, then kills it

    // One timed forward pass, in milliseconds as the script measured it.
    Result<double> run(double timeoutSeconds = 120);

    // Records every module's output on the inputs into FOLDER/modules/ (forward hooks) and maps
    // them to the ONNX values of their scopes: the number of outputs mapped.
    Result<int> recordModules(double timeoutSeconds = 600);

    PytorchTimingServer(const PytorchTimingServer&) = delete;
    PytorchTimingServer& operator=(const PytorchTimingServer&) = delete;

  private:
    PytorchTimingServer() = default;
    Result<std::string> readLine(double timeoutSeconds);
    std::string stderrText() const;
    int pid_ = -1;
    int toChild_ = -1, fromChild_ = -1;
    std::filesystem::path stderrFile_;
    std::string buffer_;
};

}  // namespace onnxlens::engine
