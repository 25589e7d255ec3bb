// Structure-aware fuzz target: the bytes choose an operator the engine registers, the shapes of
// its inputs (zero-size dims, rank 0, rank 8, ...), which of its schema's attributes are set and
// to which hostile value (0, -1, huge, NaN, empty and wrong-length lists), and whether the inputs
// are constants the optimizer folds at compile time. The one-node model is compiled and run under
// a small tensor limit; every failure must be an error value. Mutating bytes of a serialized model
// (fuzz_session_run) rarely reaches these values; here every input is a valid model of one node.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "OperatorCases.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // ONNXLENS_FUZZ_DOMAIN=com.microsoft (or "" for the default domain) fuzzes one domain's
    // operators only; the bytes then index that domain's list.
    static const auto operators = [] {
        auto all = onnxlens::testing::registeredOperators();
        if (const char* domain = std::getenv("ONNXLENS_FUZZ_DOMAIN")) {
            std::erase_if(all, [domain](const auto& e) { return e.domain != domain; });
            if (all.empty()) {
                std::fprintf(stderr, "ONNXLENS_FUZZ_DOMAIN=%s: no operator registered\n", domain);
                std::abort();
            }
        }
        return all;
    }();
    onnxlens::testing::ByteChoices source(data, size);
    const auto choices = onnxlens::testing::drawCaseChoices(operators, source);
    const auto c = onnxlens::testing::buildOperatorCase(operators, choices);
    // Triage: ONNXLENS_FUZZ_VERBOSE=1 prints the case a crashing input builds.
    static const bool verbose = std::getenv("ONNXLENS_FUZZ_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "case %s\n", c.label.c_str());
    (void)onnxlens::testing::runOperatorCase(c);
    return 0;
}
