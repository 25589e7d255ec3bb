#pragma once
// The engine's ThreadPool is OpenMP's team when the build has OpenMP (ThreadPool.cpp), the
// threading runtime of Debian's oneDNN too: one set of threads for kernels and primitives.

namespace onnxlens::engine {

// Makes OpenMP users on the calling thread (oneDNN primitives, the pool's parallel loops) use
// `threads` threads. Called on the thread that runs a model, before each run; no-op without
// OpenMP.
void applyThreadCountToCallingThread(int threads);

}  // namespace onnxlens::engine
