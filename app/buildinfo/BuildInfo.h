#pragma once
// What `onnxlens-cli --version` and the GUI's Help > About print: the versions onnxlens was built
// with and the engine's build flavour. Qt-free, so the CLI and the GUI share it.
#include <string>
#include <utility>
#include <vector>

namespace onnxlens::buildinfo {

// "0.1.0"
std::string version();

// Label and value, in the order they are printed: onnxlens, git revision, onnx, protobuf,
// oneDNN, Qt, engine flavour, -march, kernels (the instruction set chosen at run time), compiler.
std::vector<std::pair<std::string, std::string>> components();

// "PROGRAM VERSION" on the first line (the form help2man reads), then one "label: value" line per
// component.
std::string versionReport(const std::string& program);

}  // namespace onnxlens::buildinfo
