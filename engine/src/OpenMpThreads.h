#pragma once
// The engine's ThreadPool is OpenMP's team when the build has OpenMP (ThreadPool.cpp), the
// threading runtime of Debian's oneDNN too: one set of threads for kernels and primitives.

namespace onnxlens::engine {

// Makes OpenMP users on the calling thread (oneDNN primitives, the pool's parallel loops) use
// `threads` threads. Called on the thread that runs a model, before each run; no-op without
// OpenMP.
void applyThreadCountToCallingThread(int threads);

// The thread count OpenMP users on the calling thread get now (1 without OpenMP).
int threadCountOfCallingThread();

// Work below this many floating-point operations runs on the calling thread alone: every
// parallel region is a fork and a join, which costs more than such a kernel gains from a second
// thread (on a loaded machine a region waits for its threads to be scheduled: small_cnn, whose
// kernels are all below it, took 48 ms a run at 2 threads against 0.17 ms at 1).
inline constexpr double kSerialWorkFlops = 5.0e6;

// While alive (and `serial`), OpenMP users on the calling thread, oneDNN primitives created or
// run meanwhile among them, use one thread; the count before is restored after.
class SerialRegion {
  public:
    explicit SerialRegion(bool serial) : saved_(serial ? threadCountOfCallingThread() : 1) {
        if (saved_ > 1) applyThreadCountToCallingThread(1);
    }
    ~SerialRegion() {
        if (saved_ > 1) applyThreadCountToCallingThread(saved_);
    }
    SerialRegion(const SerialRegion&) = delete;
    SerialRegion& operator=(const SerialRegion&) = delete;

  private:
    int saved_;
};

}  // namespace onnxlens::engine
