#include "onnxlens/workflows/Roofline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "onnxlens/engine/Session.h"

namespace onnxlens::engine {

namespace {

struct MicroBenchmark {
    double bestSeconds = 0;
    int threads = 0;
};

// The best time of `timed` runs (after two warm-up runs) of one float32 node `opType` reading
// two seeded random inputs of `shape`, through the engine at `threads` intra-op threads.
Result<MicroBenchmark> timeOneNode(const char* opType, const std::vector<std::int64_t>& shape,
                                   int threads, int timed) {
    LoadedModel model;
    model.path = std::string("peak-") + opType + ".onnx";
    model.proto = std::make_shared<onnx::ModelProto>();
    auto& proto = *model.proto;
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(17);
    auto* g = proto.mutable_graph();
    g->set_name("peak");
    for (const char* name : {"a", "b"}) {
        auto* in = g->add_input();
        in->set_name(name);
        auto* t = in->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        for (auto d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
    }
    auto* node = g->add_node();
    node->set_op_type(opType);
    node->add_input("a");
    node->add_input("b");
    node->add_output("c");
    g->add_output()->set_name("c");
    SessionOptions options;
    options.threads = threads;
    // The peak at this many threads, whatever else runs.
    options.adaptThreadsToLoad = false;
    auto session = Session::create(model, options);
    if (!session) return session.error();
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::map<std::string, Value> feeds;
    for (const char* name : {"a", "b"}) {
        Tensor t(DataType::Float, Shape(shape));
        for (auto& v : t.span<float>()) v = uniform(random);
        feeds.emplace(name, Value(std::move(t)));
    }
    double bestSeconds = 1e30;
    for (int i = 0; i < timed + 2; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto out = (*session)->run(feeds);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (!out) return out.error();
        if (i >= 2) bestSeconds = std::min(bestSeconds, seconds);  // two warm-up runs
    }
    return MicroBenchmark{bestSeconds, (*session)->threads()};
}

}  // namespace

Result<PeakThroughput> measurePeakThroughput(int threads, int size) {
    auto timed = timeOneNode("MatMul", {size, size}, threads, 10);
    if (!timed) return timed.error();
    PeakThroughput peak;
    peak.threads = timed->threads;
    const double flops = 2.0 * size * size * static_cast<double>(size);
    peak.gflops = flops / timed->bestSeconds / 1e9;
    peak.method = "best of 10 runs of a " + std::to_string(size) + "x" + std::to_string(size) +
                  "x" + std::to_string(size) + " float32 MatMul on the engine's GEMM at " +
                  std::to_string(peak.threads) + " thread(s)";
    return peak;
}

Result<PeakBandwidth> measureMemoryBandwidth(int threads, int megabytes) {
    // A STREAM-style add over arrays allocated and touched once: an engine Add would allocate
    // its output at every run, and above glibc's mmap threshold each run then pays a page fault
    // per 4 KB (64 MB read as 1.8 to 7 GB/s instead of ~20 on the 2-core build machine).
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::size_t elements = static_cast<std::size_t>(std::max(1, megabytes)) * (1u << 20) / 4;
    std::vector<float> a(elements, 1.0f), b(elements, 2.0f), c(elements, 0.0f);
    auto addSlice = [&](std::size_t begin, std::size_t end) {
        const float* __restrict pa = a.data();
        const float* __restrict pb = b.data();
        float* __restrict pc = c.data();
        for (std::size_t i = begin; i < end; ++i) pc[i] = pa[i] + pb[i];
    };
    double bestSeconds = 1e30;
    for (int run = 0; run < 6; ++run) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<std::thread> workers;
        const std::size_t slice =
            (elements + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
        for (int t = 1; t < threads; ++t)
            workers.emplace_back(addSlice, std::min(elements, slice * static_cast<std::size_t>(t)),
                                 std::min(elements, slice * static_cast<std::size_t>(t + 1)));
        addSlice(0, std::min(elements, slice));
        for (auto& w : workers) w.join();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (run > 0) bestSeconds = std::min(bestSeconds, seconds);  // the first run warms up
    }
    if (c[elements / 2] != 3.0f) return makeError("memory bandwidth", "the add gave a wrong sum");
    PeakBandwidth bandwidth;
    bandwidth.threads = threads;
    bandwidth.gbPerSecond = 3.0 * 4.0 * static_cast<double>(elements) / bestSeconds / 1e9;
    bandwidth.method = "best of 5 runs of a STREAM-style add (c = a + b) over three " +
                       std::to_string(megabytes) + " MB float32 arrays on " +
                       std::to_string(threads) + " thread(s)";
    return bandwidth;
}

namespace {
template <class T>
Result<T> cached(int threads, Result<T> (*measure)(int, int), int size) {
    static std::mutex mutex;
    static std::map<int, T> measured;
    std::lock_guard lock(mutex);  // held while measuring: two measurements would disturb each other
    if (auto it = measured.find(threads); it != measured.end()) return it->second;
    auto result = measure(threads, size);
    if (result) measured.emplace(threads, *result);
    return result;
}
}  // namespace

Result<PeakThroughput> cachedPeakThroughput(int threads) {
    return cached<PeakThroughput>(threads, &measurePeakThroughput, 512);
}

Result<PeakBandwidth> cachedMemoryBandwidth(int threads) {
    return cached<PeakBandwidth>(threads, &measureMemoryBandwidth, 64);
}

std::vector<NodeRate> nodeRates(const ModelCost& cost, const std::vector<NodeTimeSummary>& profiled,
                                double peakGflops) {
    std::map<std::string, const NodeCost*> byName;
    for (const auto& n : cost.nodes) byName.emplace(n.name, &n);
    std::vector<NodeRate> rates;
    for (const auto& p : profiled) {
        auto it = byName.find(p.nodeName);
        if (it == byName.end() || !it->second->shapesKnown || p.perRunMs <= 0) continue;
        NodeRate r;
        r.nodeName = p.nodeName;
        r.opType = p.opType;
        r.flops = it->second->figures.flops;
        r.perRunMs = p.perRunMs;
        r.gflops = r.flops / (p.perRunMs * 1e-3) / 1e9;
        r.intensity = it->second->figures.intensity();
        r.peakShare = peakGflops > 0 ? r.gflops / peakGflops : 0;
        rates.push_back(r);
    }
    return rates;
}

void coverAchievedRates(PeakThroughput& peak, std::vector<NodeRate>& rates) {
    const NodeRate* best = nullptr;
    for (const auto& r : rates)
        if (std::isfinite(r.gflops) && (!best || r.gflops > best->gflops)) best = &r;
    if (peak.gflops <= 0 || !best || best->gflops <= peak.gflops) return;  // none measured: none
    char measured[64];
    std::snprintf(measured, sizeof measured, "%.1f", peak.gflops);
    peak.method = "the best node's achieved rate, " + best->nodeName + " (" + best->opType +
                  "), above the measured peak of " + measured + " GFLOP/s" +
                  (peak.method.empty() ? std::string() : " (" + peak.method + ")");
    peak.gflops = best->gflops;
    for (auto& r : rates) r.peakShare = r.gflops / peak.gflops;
}

}  // namespace onnxlens::engine
