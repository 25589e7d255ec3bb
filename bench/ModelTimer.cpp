// A model's run time with nothing but the engine (issue 31: the portable build against the native
// one): loads MODEL, compiles it at THREADS intra-op threads, feeds the tensor files given, runs
// WARMUP untimed and RUNS timed runs and prints one JSON line with the median, as
// `onnxlens-cli bench --json` times a run (Session::run, inputs made once), and the kernels'
// instruction set. It links the engine and model libraries only, so it is ready long before the
// CLI (which links the widgets for `render`) in a fresh tree. bench/compare_builds.py drives it.
//     ModelTimer MODEL WARMUP RUNS THREADS [NAME=FILE ...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "onnxlens/engine/CpuIsa.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/TensorFile.h"

int main(int argc, char** argv) {
    using namespace onnxlens;
    if (argc < 5) {
        std::fprintf(stderr, "usage: ModelTimer MODEL WARMUP RUNS THREADS [NAME=FILE ...]\n");
        return 2;
    }
    auto loaded = loadModel(argv[1]);
    if (!loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
        return 1;
    }
    engine::SessionOptions options;
    options.threads = std::atoi(argv[4]);
    auto session = engine::Session::create(*loaded, options);
    if (!session) {
        std::fprintf(stderr, "%s\n", session.error().message.c_str());
        return 1;
    }
    std::map<std::string, engine::Value> feeds;
    for (int i = 5; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto eq = arg.find('=');
        auto proto =
            eq == std::string::npos ? readTensorFile(arg) : readTensorFile(arg.substr(eq + 1));
        if (eq == std::string::npos || !proto) {
            std::fprintf(stderr, "bad input %s\n", arg.c_str());
            return 2;
        }
        feeds[arg.substr(0, eq)] = engine::Value(engine::tensorFromProto(*proto));
    }
    const int warmup = std::max(0, std::atoi(argv[2])), runs = std::max(1, std::atoi(argv[3]));
    std::vector<double> ms;
    for (int i = 0; i < warmup + runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        auto out = (*session)->run(feeds);
        const auto end = std::chrono::steady_clock::now();
        if (!out) {
            std::fprintf(stderr, "%s\n", out.error().message.c_str());
            return 1;
        }
        if (i >= warmup)
            ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("{\"median_ms\": %.6f, \"runs\": %d, \"kernels\": \"%s\"}\n", ms[ms.size() / 2],
                runs, engine::kernelIsaSummary().c_str());
    return 0;
}
