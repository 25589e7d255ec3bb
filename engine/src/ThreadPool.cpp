#include "onnxlens/engine/ThreadPool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <algorithm>
#include <thread>

namespace onnxlens::engine {

struct ThreadPool::Impl {
    explicit Impl(int n) : pool(n), device(&pool, n) {}
    Eigen::ThreadPool pool;
    Eigen::ThreadPoolDevice device;
};

ThreadPool::ThreadPool(int threads) {
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    threads_ = threads;
    if (threads_ > 1) impl_ = std::make_unique<Impl>(threads_);
}

ThreadPool::~ThreadPool() = default;

void ThreadPool::parallelFor(std::int64_t n, double costPerItem,
                             const std::function<void(std::int64_t, std::int64_t)>& fn) {
    if (n <= 0) return;
    // Below ~50k operations the hand-off costs more than it saves.
    if (!impl_ || static_cast<double>(n) * costPerItem < 50000.0 || n == 1) {
        fn(0, n);
        return;
    }
    Eigen::TensorOpCost cost(0, 0, std::max(1.0, costPerItem));
    impl_->device.parallelFor(static_cast<Eigen::Index>(n), cost,
                              [&fn](Eigen::Index begin, Eigen::Index end) {
                                  fn(static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end));
                              });
}

}  // namespace onnxlens::engine
