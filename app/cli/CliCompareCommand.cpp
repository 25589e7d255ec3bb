#include "CliCommon.h"

namespace onnxlens::cli {

int runCompareCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'compare' command is not available in this build yet");
}

}  // namespace onnxlens::cli
