#pragma once
// Text of report lines: up to three numbers through one printf pattern. Shared by the export
// reports (PyTorch and scikit-learn).
#include <cstdio>
#include <string>

namespace onnxlens::engine {

inline std::string formatNumbers(const char* pattern, double a, double b = 0, double c = 0) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, pattern, a, b, c);
    return buffer;
}

}  // namespace onnxlens::engine
