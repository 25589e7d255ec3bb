#pragma once
// The intra-op thread pool shared by every kernel that can split its work.
#include <cstdint>
#include <functional>
#include <memory>

namespace onnxlens::engine {

class ThreadPool {
  public:
    explicit ThreadPool(int threads);  // threads <= 0: the number of cores
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threads() const { return threads_; }
    // Calls fn(begin, end) over [0, n) in chunks; `costPerItem` is a rough count of
    // floating-point operations per item, used to decide whether splitting pays.
    // Runs inline with one thread or small work. Blocks until all chunks are done.
    void parallelFor(std::int64_t n, double costPerItem,
                     const std::function<void(std::int64_t, std::int64_t)>& fn);

  private:
    struct Impl;
    int threads_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace onnxlens::engine
