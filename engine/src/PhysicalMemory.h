#pragma once
// The machine's physical memory, for the engine's defaults that are a share of it (the largest
// tensor, the weights a session reads in at load).
#include <unistd.h>

#include <cstdint>
#include <optional>

namespace onnxlens::engine {

// Bytes of physical memory, or nothing when the system does not say.
inline std::optional<std::uint64_t> physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) return std::nullopt;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
}

}  // namespace onnxlens::engine
