// Loading and summarizing one model, as `onnxlens-cli info` does. The model comes from the first
// non-benchmark argument or ONNXLENS_BENCH_MODEL (e.g. a BERT-base export, see
// make_bert_base.py):
//   InfoBench /tmp/bert/model.onnx --benchmark_repetitions=3
// Counters: the file size and the process's peak RSS so far, both in MB.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"

namespace {

std::filesystem::path gModelPath;

double peakRssMb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KB on Linux
}

onnxlens::LoadedModel loadOrDie(benchmark::State& state) {
    auto loaded = onnxlens::loadModel(gModelPath);
    if (!loaded) {
        state.SkipWithError(loaded.error().message.c_str());
        return {};
    }
    return std::move(loaded.value());
}

void setCounters(benchmark::State& state, std::uint64_t fileBytes) {
    state.counters["file_MB"] = static_cast<double>(fileBytes) / (1024.0 * 1024.0);
    state.counters["peak_rss_MB"] = peakRssMb();
}

void BM_LoadModel(benchmark::State& state) {
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        auto loaded = loadOrDie(state);
        bytes = loaded.fileBytes;
        benchmark::DoNotOptimize(loaded.proto);
    }
    setCounters(state, bytes);
}

void BM_SummarizeLoadedModel(benchmark::State& state) {
    auto loaded = loadOrDie(state);
    for (auto _ : state) {
        auto summary = onnxlens::summarizeModel(loaded);
        benchmark::DoNotOptimize(summary);
    }
    setCounters(state, loaded.fileBytes);
}

void BM_LoadAndSummarize(benchmark::State& state) {
    std::uint64_t bytes = 0;
    for (auto _ : state) {
        auto loaded = loadOrDie(state);
        bytes = loaded.fileBytes;
        auto summary = onnxlens::summarizeModel(loaded);
        benchmark::DoNotOptimize(summary);
    }
    setCounters(state, bytes);
}

}  // namespace

BENCHMARK(BM_LoadModel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SummarizeLoadedModel)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoadAndSummarize)->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (argc > 1) {
        gModelPath = argv[1];
    } else if (const char* env = std::getenv("ONNXLENS_BENCH_MODEL")) {
        gModelPath = env;
    } else {
        std::cerr
            << "usage: InfoBench MODEL.onnx [--benchmark_...]  (or set ONNXLENS_BENCH_MODEL)\n";
        return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
