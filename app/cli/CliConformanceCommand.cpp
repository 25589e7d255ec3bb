#include "CliCommon.h"

namespace onnxlens::cli {

int runConformanceCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'conformance' command is not available in this build yet");
}

}  // namespace onnxlens::cli
