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

// The work each thread must get for a kernel to run on the whole team, in floating-point
// operations: a kernel of `flops` runs on all `available` threads when flops >= this *
// min(available, 4), else on the calling thread alone. At 2 threads that is the serial limit
// above. Measured on a 16-core Xeon (docs/performance.md, issue 31): teams sized to each kernel's
// work (2 to 16 threads from one node to the next) ran MobileNetV2 4x and MiniLM 8x slower at 16
// threads than whole teams (libgomp re-docks its idle threads whenever the team size changes),
// so a kernel gets all threads or one. Over nine models the limit growing with the team up to 4
// threads ran best at 4 threads (geometric mean 1.02x ONNX Runtime, against 1.08x for the fixed
// limit); at 16 threads the fixed limit did (1.00x, against 1.04x for a limit 8x as high).
// ONNXLENS_FLOPS_PER_THREAD overrides the value (read once per process; for such measurements).
double flopsPerThread();

// The threads `flops` of work is worth: `available` or 1 (see flopsPerThread).
int threadsWorthFor(double flops, int available);

// While alive, OpenMP users on the calling thread (oneDNN primitives created or run meanwhile
// among them) use `threads` threads, at most the count they had; that count is restored after.
class ThreadCountRegion {
  public:
    explicit ThreadCountRegion(int threads) : saved_(threadCountOfCallingThread()) {
        if (threads < saved_)
            applyThreadCountToCallingThread(threads);
        else
            saved_ = 0;
    }
    ~ThreadCountRegion() {
        if (saved_ > 0) applyThreadCountToCallingThread(saved_);
    }
    ThreadCountRegion(const ThreadCountRegion&) = delete;
    ThreadCountRegion& operator=(const ThreadCountRegion&) = delete;

  private:
    int saved_;
};

// The threads `flops` of work is worth (threadsWorthFor). A primitive made inside is made for
// that many threads, and the count is the same each time for the same shape, so its runs match
// how it was made.
class ThreadBudget : public ThreadCountRegion {
  public:
    explicit ThreadBudget(double flops)
        : ThreadCountRegion(threadsWorthFor(flops, threadCountOfCallingThread())) {}
};

// One thread.
class SerialRegion : public ThreadCountRegion {
  public:
    SerialRegion() : ThreadCountRegion(1) {}
};

}  // namespace onnxlens::engine
