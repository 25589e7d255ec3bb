#include "CliCommon.h"

namespace onnxlens::cli {

int runRunCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'run' command is not available in this build yet");
}

}  // namespace onnxlens::cli
