#include "CliCommon.h"

namespace onnxlens::cli {

int runOptimizeCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'optimize' command is not available in this build yet");
}

}  // namespace onnxlens::cli
