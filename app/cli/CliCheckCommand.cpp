#include "CliCommon.h"

namespace onnxlens::cli {

int runCheckCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'check' command is not available in this build yet");
}

}  // namespace onnxlens::cli
