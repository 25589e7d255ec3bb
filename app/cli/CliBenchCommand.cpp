#include "CliCommon.h"

namespace onnxlens::cli {

int runBenchCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'bench' command is not available in this build yet");
}

}  // namespace onnxlens::cli
