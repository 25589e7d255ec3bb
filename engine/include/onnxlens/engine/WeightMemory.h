#pragma once
// What a session's weights cost in memory, and the counter through which kernels report the
// weight copies they make (oneDNN reorders into blocked layouts, made once and kept).
#include <atomic>
#include <cstdint>

namespace onnxlens::engine {

struct WeightMemory {
    // Initializers read in place from memory-mapped external data files: pages are read from the
    // file as kernels touch them, and the kernel may drop them again under memory pressure.
    std::uint64_t mappedBytes = 0;
    // Initializers in the session's own buffers: inline weights decoded from the model file,
    // external weights at unaligned offsets, constants the optimizer computed at load.
    std::uint64_t copiedBytes = 0;
    // Weights kernels copied into another layout at their first run (counted once per kernel).
    std::uint64_t reorderedBytes = 0;
};

// Adds `bytes` to the counter of the session whose run is on this thread (none: ignored).
void countWeightReorder(std::uint64_t bytes);

// Session::run's scope: weight reorders made on this thread are counted into `counter`.
class ScopedWeightReorderCounter {
  public:
    explicit ScopedWeightReorderCounter(std::atomic<std::uint64_t>* counter);
    ~ScopedWeightReorderCounter();
    ScopedWeightReorderCounter(const ScopedWeightReorderCounter&) = delete;
    ScopedWeightReorderCounter& operator=(const ScopedWeightReorderCounter&) = delete;

  private:
    std::atomic<std::uint64_t>* saved_;
};

}  // namespace onnxlens::engine
