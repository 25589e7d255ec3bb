// Fuzz target: mutated models compiled and run by the engine. The bytes are a ModelProto; small
// ones that load are compiled, fed seeded random inputs and run under a small tensor limit, with
// a watchdog cancelling runs that loop for long. Every failure must be an error value.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorByteLimit.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace {

constexpr std::size_t kMaxModelBytes = 64 * 1024;
constexpr std::uint64_t kMaxTensorBytes = 16 << 20;
constexpr auto kRunTimeLimit = std::chrono::seconds(2);

// Cancels a run that is still going after kRunTimeLimit (a Loop with a huge trip count is a
// valid model, not a bug).
class Watchdog {
  public:
    explicit Watchdog(onnxlens::engine::RunControl& control)
        : thread_([this, &control] {
              std::unique_lock lock(mutex_);
              if (!done_.wait_for(lock, kRunTimeLimit, [this] { return finished_; }))
                  control.cancel = true;
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            finished_ = true;
        }
        done_.notify_one();
        thread_.join();
    }

  private:
    std::mutex mutex_;
    std::condition_variable done_;
    bool finished_ = false;
    std::thread thread_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > kMaxModelBytes) return 0;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    onnxlens::LoadLimits limits;
    limits.maxNestingDepth = 8;
    auto loaded =
        onnxlens::loadModelFromBytes(bytes, "fuzz.onnx", "/nonexistent-onnxlens-fuzz", limits);
    if (!loaded) return 0;
    onnxlens::engine::SessionOptions options;
    options.threads = 1;
    options.maxTensorBytes = kMaxTensorBytes;
    auto session = onnxlens::engine::Session::create(*loaded, options);
    if (!session) return 0;
    // The random feeds obey the same limit as the tensors of the run.
    auto feeds = [&] {
        const onnxlens::engine::ScopedTensorByteLimit limit(kMaxTensorBytes);
        return onnxlens::engine::prepareFeeds((*session)->inputs(), {}, {}, /*seed=*/size);
    }();
    if (!feeds) return 0;
    onnxlens::engine::RunControl control;
    Watchdog watchdog(control);
    auto outputs = (*session)->run(*feeds, &control);
    (void)outputs;
    return 0;
}
