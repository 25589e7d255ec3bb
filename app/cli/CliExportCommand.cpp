#include "CliCommon.h"

namespace onnxlens::cli {

int runExportCommand(const std::vector<std::string>& args) {
    (void)args;
    throw UsageError("the 'export' command is not available in this build yet");
}

}  // namespace onnxlens::cli
