// onnxlens-layout: runs Graphviz for the GUI in a process of its own, so that a crash or a
// layout that runs for minutes costs the GUI nothing but an error message.
//
// Protocol: one JSON layout request on stdin (until EOF), one JSON result on stdout, exit 0;
// on error a one-line message on stderr and exit 1.
//
// ONNXLENS_LAYOUT_FAULT=crash|hang|garbage makes the worker fail on purpose, for the GUI's tests.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "onnxlens/layout/GraphLayout.h"

int main() {
    std::ios::sync_with_stdio(false);
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (const char* fault = std::getenv("ONNXLENS_LAYOUT_FAULT")) {
        if (std::strcmp(fault, "crash") == 0) std::abort();
        if (std::strcmp(fault, "hang") == 0)
            for (;;) pause();
        if (std::strcmp(fault, "garbage") == 0) {
            std::cout << "this is not a layout";
            return 0;
        }
    }
    auto request = onnxlens::parseLayoutRequest(input);
    if (!request) {
        std::cerr << "onnxlens-layout: " << request.error().message << "\n";
        return 1;
    }
    auto result = onnxlens::computeLayout(*request);
    if (!result) {
        std::cerr << "onnxlens-layout: " << result.error().message << "\n";
        return 1;
    }
    std::cout << onnxlens::serializeLayoutResult(*result);
    std::cout.flush();
    return std::cout ? 0 : 1;
}
