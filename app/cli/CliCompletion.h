#pragma once
// Bash and zsh completion scripts written from the onnxlens-cli CLI11 declaration, so they name
// exactly the commands and options `--help` describes. The build runs
// `onnxlens-cli --completion bash|zsh` and installs the result.
#include <string>

namespace CLI {
class App;
}

namespace onnxlens::cli {

// `shell` is "bash" or "zsh".
std::string completionScript(const CLI::App& cli, const std::string& shell);

}  // namespace onnxlens::cli
