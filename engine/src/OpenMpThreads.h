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
// parallel region is a fork and a join (a few microseconds with OpenMP's spinning team on an
// idle machine), which costs more than such a kernel gains from a second thread. Measured on an
// idle 2-core machine at 2 threads, A/B in alternating fresh processes (issue 22): with 5 MFLOP
// (the earlier limit, chosen on a machine loaded 3-4x over its cores, where every region waited
// for a time slice) small_cnn 0.110 ms, vad_stream 0.077, minilm_seq16 3.39, mobilenet_v2 7.3;
// with 0.1 MFLOP (and ThreadPool's 20k-operation limit) 0.072, 0.061, 2.76, 6.4 ms.
inline constexpr double kSerialWorkFlops = 1.0e5;

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
