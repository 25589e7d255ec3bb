#include "onnxlens/engine/WeightMemory.h"

namespace onnxlens::engine {

namespace {
thread_local std::atomic<std::uint64_t>* currentReorderCounter = nullptr;
}

void countWeightReorder(std::uint64_t bytes) {
    if (currentReorderCounter) currentReorderCounter->fetch_add(bytes);
}

ScopedWeightReorderCounter::ScopedWeightReorderCounter(std::atomic<std::uint64_t>* counter)
    : saved_(currentReorderCounter) {
    currentReorderCounter = counter;
}

ScopedWeightReorderCounter::~ScopedWeightReorderCounter() { currentReorderCounter = saved_; }

}  // namespace onnxlens::engine
