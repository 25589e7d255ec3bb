#include "CliCommon.h"

namespace onnxlens::cli {

int runRenderCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'render' command is not available in this build yet");
}

}  // namespace onnxlens::cli
