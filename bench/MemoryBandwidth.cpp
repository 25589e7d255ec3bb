// The memory bandwidth a weight-streaming kernel can hope for (issue 29: the int4 decode step
// against the memory roof): a read-only streaming loop over MEGABYTES (default 256, far past the
// caches) split over 1..THREADS threads, the best of REPEATS passes each, beside memcpy and the
// roofline's own figure (workflows/Roofline.h: c = a + b, bytes read and written).
//     MemoryBandwidth [MEGABYTES] [THREADS] [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "onnxlens/workflows/Roofline.h"

namespace {

using Clock = std::chrono::steady_clock;

// Sums the 64-bit words of [begin, end) in four independent chains (the compiler vectorises it).
std::uint64_t readAll(const std::uint64_t* begin, const std::uint64_t* end) {
    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (const std::uint64_t* p = begin; p + 4 <= end; p += 4) {
        s0 += p[0];
        s1 += p[1];
        s2 += p[2];
        s3 += p[3];
    }
    return s0 ^ s1 ^ s2 ^ s3;
}

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    const long megabytes = argc > 1 ? std::max(1L, std::atol(argv[1])) : 256;
    const int maxThreads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2;
    const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
    const std::size_t words = static_cast<std::size_t>(megabytes) * 1024 * 1024 / 8;
    std::vector<std::uint64_t> data(words);
    for (std::size_t i = 0; i < words; ++i) data[i] = i * 0x9E3779B97F4A7C15ull;
    const double bytes = static_cast<double>(words * 8);
    volatile std::uint64_t sink = 0;
    for (int threads = 1; threads <= maxThreads; ++threads) {
        double best = 1e30;
        for (int r = 0; r < repeats; ++r) {
            std::vector<std::uint64_t> partial(static_cast<std::size_t>(threads));
            const auto t0 = Clock::now();
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&, t] {
                    const std::size_t begin = words * static_cast<std::size_t>(t) / threads;
                    const std::size_t end = words * static_cast<std::size_t>(t + 1) / threads;
                    partial[static_cast<std::size_t>(t)] =
                        readAll(data.data() + begin, data.data() + end);
                });
            for (auto& thread : pool) thread.join();
            best = std::min(best, secondsSince(t0));
            for (std::uint64_t p : partial) sink = sink ^ p;
        }
        std::printf("read     %d thread(s): %6.1f GB/s (%ld MB, best of %d)\n", threads,
                    bytes / best / 1e9, megabytes, repeats);
        if (auto roof = onnxlens::engine::measureMemoryBandwidth(threads))
            std::printf("roofline %d thread(s): %6.1f GB/s (%s)\n", threads, roof->gbPerSecond,
                        roof->method.c_str());
    }
    std::vector<std::uint64_t> copy(words);
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = Clock::now();
        std::memcpy(copy.data(), data.data(), words * 8);
        best = std::min(best, secondsSince(t0));
    }
    sink = sink ^ copy[words / 2];
    std::printf("memcpy   1 thread:    %6.1f GB/s read + %.1f GB/s written\n", bytes / best / 1e9,
                bytes / best / 1e9);
    return 0;
}
