// Fuzz target: model bytes through the loader (parse, structural validation, external data
// confinement) and, when they load, the summary (checker, shape inference) and the view graph.
#include <cstddef>
#include <cstdint>
#include <string>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ViewGraph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // A folder that does not exist: external data must fail cleanly, never read anything.
    auto loaded = onnxlens::loadModelFromBytes(bytes, "fuzz.onnx", "/nonexistent-onnxlens-fuzz");
    if (!loaded) return 0;
    auto summary = onnxlens::summarizeModel(*loaded);
    (void)summary;
    auto view = onnxlens::buildViewGraph(loaded->proto);
    (void)view;
    return 0;
}
