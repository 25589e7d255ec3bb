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

// The work one more thread must get to be worth its share of the fork and join, in
// floating-point operations: a kernel of `flops` runs on at most flops / this threads. At 2
// threads it is the serial limit above (half of kSerialWorkFlops each). The join of a larger
// team costs more, so at 8-16 threads a middle-sized kernel runs faster on part of the team:
// what the value should be there was measured on a 16-core machine (docs/performance.md).
// ONNXLENS_FLOPS_PER_THREAD overrides it (read once per process; for such measurements).
double flopsPerThread();

// The threads `flops` of work is worth: between 1 and `available`.
int threadsWorthFor(double flops, int available);

// While alive, OpenMP users on the calling thread (oneDNN primitives created or run meanwhile
// among them) use the threads `flops` of work is worth, at most the count they had; that count
// is restored after. A primitive made inside is made for that many threads, and the count is
// the same each time for the same shape, so its runs match how it was made.
class ThreadBudget {
  public:
    explicit ThreadBudget(double flops) : saved_(threadCountOfCallingThread()) {
        const int threads = threadsWorthFor(flops, saved_);
        if (threads != saved_)
            applyThreadCountToCallingThread(threads);
        else
            saved_ = 0;
    }
    ~ThreadBudget() {
        if (saved_ > 0) applyThreadCountToCallingThread(saved_);
    }
    ThreadBudget(const ThreadBudget&) = delete;
    ThreadBudget& operator=(const ThreadBudget&) = delete;

  private:
    int saved_;
};

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
