#include "CliCommon.h"

namespace onnxlens::cli {

int runInfoCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'info' command is not available in this build yet");
}

}  // namespace onnxlens::cli
