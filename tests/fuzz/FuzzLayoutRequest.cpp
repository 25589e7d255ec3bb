// Fuzz target: the layout worker's input, a JSON LayoutRequest from the GUI. A request that
// parses must serialise and parse again to the same request.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "onnxlens/layout/GraphLayout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto request = onnxlens::parseLayoutRequest(text);
    if (!request) return 0;
    const std::string once = onnxlens::serializeLayoutRequest(*request);
    auto again = onnxlens::parseLayoutRequest(once);
    if (!again || onnxlens::serializeLayoutRequest(*again) != once) {
        std::cerr << "layout request does not survive a round trip: " << once << "\n";
        std::abort();
    }
    return 0;
}
