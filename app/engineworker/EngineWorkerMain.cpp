// onnxlens-engine-worker: one open model's engine, in a process of its own, for the window
// (widgets/workers/EngineProcess.cpp). It compiles the model once and keeps the session for
// every run, comparison, benchmark, shape sweep, dynamic-axes check and optimized graph the
// window asks for, so that a crash, an abort or a runaway allocation in the engine costs the
// window nothing but an error message on that model's tab.
//
// Protocol (EngineWorkerProtocol.h): one JSON request per line on stdin, one JSON reply per line
// on stdout ({"ok": true, ...} or {"ok": false, "error": ..., "cancelled": ...}), preceded by
// progress lines ({"progress": ...}, {"step": ...}, {"sweepProgress": ...}, {"decodeStep": ...}),
// the points of a
// shape sweep ({"point": ...}) and, in the dynamic-axes check, requests for feeds
// ({"feedsFor": bindings}) that the window answers on stdin ({"feeds": [...]} or
// {"error": ...}). Feeds and outputs are .pb files named in the JSON. SIGUSR1 with a job number
// (sigqueue) cancels every job up to that number between two nodes.
//
// The address space is limited to the machine's physical memory (ONNXLENS_ENGINE_WORKER_MEMORY_MB
// overrides it): a model that allocates without end fails here, not in the window or the machine.
// ONNXLENS_ENGINE_WORKER_CRASH_ON=compile,run,benchmark makes the worker abort() when such a
// request arrives, run-alloc (benchmark-alloc, ...) makes it allocate without end, and run-hang
// makes it hang without ever stopping for a cancel, for the window's tests.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DecoderModel.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/EngineWorkerProtocol.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "onnxlens/workflows/ShapeSweep.h"

namespace {

using nlohmann::json;
using namespace onnxlens;

// The protocol's stdout: a copy of fd 1 made at start; fd 1 itself then points at stderr, so that
// nothing else printed by the process can break the reply stream.
FILE* protocolOut = nullptr;

void send(const json& message) {
    const std::string line = message.dump(-1, ' ', false, json::error_handler_t::replace);
    std::fwrite(line.data(), 1, line.size(), protocolOut);
    std::fputc('\n', protocolOut);
    std::fflush(protocolOut);
}

json failure(const std::string& message, bool cancelled = false) {
    return {{"ok", false}, {"error", message}, {"cancelled", cancelled}};
}

// Which jobs are cancelled, set by the SIGUSR1 thread; the running job's controls.
struct Cancellation {
    std::mutex mutex;
    std::uint64_t cancelledThrough = 0;
    std::uint64_t job = 0;
    engine::RunControl* control = nullptr;
    std::function<void()> stop;  // a benchmark's or sweep's runner

    void cancelRunning() {
        if (job == 0 || job > cancelledThrough) return;
        if (control) control->cancel.store(true);
        if (stop) stop();
    }
} cancellation;

// Marks `control` (and a runner's stop) as the running job's for the cancel thread while it
// lives.
class ActiveJob {
  public:
    ActiveJob(std::uint64_t job, engine::RunControl* control) {
        std::lock_guard lock(cancellation.mutex);
        cancellation.job = job;
        cancellation.control = control;
        cancellation.stop = nullptr;
        cancellation.cancelRunning();
    }
    void setStop(std::function<void()> stop) {
        std::lock_guard lock(cancellation.mutex);
        cancellation.stop = std::move(stop);
        cancellation.cancelRunning();
    }
    ~ActiveJob() {
        std::lock_guard lock(cancellation.mutex);
        cancellation.job = 0;
        cancellation.control = nullptr;
        cancellation.stop = nullptr;
    }
};

void cancelThread() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    for (;;) {
        siginfo_t info;
        if (sigwaitinfo(&set, &info) != SIGUSR1) continue;
        const auto through =
            static_cast<std::uint64_t>(static_cast<unsigned>(info.si_value.sival_int));
        std::lock_guard lock(cancellation.mutex);
        if (through > cancellation.cancelledThrough) cancellation.cancelledThrough = through;
        cancellation.cancelRunning();
    }
}

void limitAddressSpace() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;  // the sanitizers reserve terabytes of shadow memory
#else
    std::uint64_t bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
    if (const char* mb = std::getenv("ONNXLENS_ENGINE_WORKER_MEMORY_MB"))
        bytes = std::strtoull(mb, nullptr, 10) << 20;
    if (bytes == 0) return;
    rlimit limit{};
    if (getrlimit(RLIMIT_AS, &limit) != 0) return;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < bytes) bytes = limit.rlim_max;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_AS, &limit);
#endif
}

bool crashRequested(const std::string& op) {
    const char* list = std::getenv("ONNXLENS_ENGINE_WORKER_CRASH_ON");
    if (!list) return false;
    std::stringstream items(list);
    std::string item;
    while (std::getline(items, item, ','))
        if (item == op) return true;
    return false;
}

// A runaway allocation, for the tests: 1 GiB blocks until the address-space limit refuses one
// (std::bad_alloc, reported like any other).
[[noreturn]] void allocateWithoutEnd() {
    std::vector<std::unique_ptr<char[]>> blocks;
    for (;;) blocks.emplace_back(new char[std::size_t{1} << 30]);
}

double msSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

class Worker {
  public:
    json handle(const json& request) {
        const std::string op = request.at("op").get<std::string>();
        if (crashRequested(op)) std::abort();
        if (crashRequested(op + "-alloc")) allocateWithoutEnd();
        if (crashRequested(op + "-hang"))
            for (;;) pause();  // SIGUSR1 is blocked here: only the window's kill ends it
        const auto job = request.value("job", std::uint64_t{0});
        if (op == "compile") return compile(request);
        if (op == "release") {
            session_.reset();
            return {{"ok", true}};
        }
        if (!session_) return failure("no model is compiled in the engine process");
        if (op == "run") return run(request, job);
        if (op == "benchmark") return benchmark(request, job);
        if (op == "dynamicAxes") return dynamicAxes(request, job);
        if (op == "sweep") return sweep(request, job);
        if (op == "decode") return decode(request, job);
        if (op == "optimizedGraph") return optimizedGraph(request);
        return failure("unknown request '" + op + "'");
    }

  private:
    json compile(const json& request) {
        session_.reset();  // never two sessions' weights at once
        const auto start = std::chrono::steady_clock::now();
        engine::SessionOptions options;
        options.threads = request.at("threads").get<int>();
        options.optimize = request.at("optimize").get<bool>();
        auto loaded = loadModel(std::filesystem::path(request.at("model").get<std::string>()));
        if (!loaded) return failure(loaded.error().message);
        // The decoder's structure, read from the model as loaded (as `generate` reads it).
        decoder_ = engine::recognizeDecoder(loaded->proto->graph());
        auto session = engine::Session::create(std::move(*loaded), options);
        if (!session) return failure(session.error().message);
        session_ = std::move(*session);
        return {{"ok", true},
                {"compileMs", msSince(start)},
                {"threads", session_->threads()},
                {"inputs", engine::ioInfosToJson(session_->inputs())},
                {"outputs", engine::ioInfosToJson(session_->outputs())}};
    }

    const onnx::TypeProto* inputType(const std::string& name) const {
        for (const auto& input : session_->inputs())
            if (input.name == name) return &input.type;
        return nullptr;
    }

    Result<std::map<std::string, engine::Value>> readFeeds(const json& list) const {
        std::map<std::string, engine::Value> feeds;
        for (const auto& entry : list) {
            const auto name = entry.at("name").get<std::string>();
            auto value =
                engine::readValueFile(entry.at("file").get<std::string>(), inputType(name));
            if (!value) return value.error();
            feeds.emplace(name, std::move(*value));
        }
        return feeds;
    }

    json run(const json& request, std::uint64_t job) {
        auto feeds = readFeeds(request.at("feeds"));
        if (!feeds) return failure(feeds.error().message);
        engine::RunControl control;
        ActiveJob active(job, &control);
        const auto start = std::chrono::steady_clock::now();
        auto outputs = session_->run(*feeds, &control);
        const double runMs = msSince(start);
        if (!outputs) return failure(outputs.error().message, control.cancel.load());
        const std::filesystem::path dir = request.at("outDir").get<std::string>();
        json files = json::array();
        const auto& infos = session_->outputs();
        for (std::size_t k = 0; k < outputs->size() && k < infos.size(); ++k) {
            const auto file = dir / ("output_" + std::to_string(k) + ".pb");
            if (auto st =
                    engine::writeValuePbFile(file, (*outputs)[k], infos[k].name, &infos[k].type);
                !st)
                return failure(st.error().message);
            files.push_back(file.string());
        }
        return {{"ok", true}, {"runMs", runMs}, {"outputs", std::move(files)}};
    }

    json benchmark(const json& request, std::uint64_t job) {
        Result<std::map<std::string, engine::Value>> feeds =
            request.contains("feeds") ? readFeeds(request.at("feeds"))
                                      : engine::prepareSessionFeeds(*session_, {}, {}, 1);
        if (!feeds) return failure("Inputs: " + feeds.error().message);
        engine::BenchmarkRunner runner(
            *session_, {request.at("warmup").get<int>(), request.at("runs").get<int>(),
                        request.at("profile").get<bool>()});
        engine::RunControl control;  // a cancel before the runner starts
        ActiveJob active(job, &control);
        active.setStop([&runner] { runner.cancel(); });
        if (control.cancel.load()) return failure("benchmark cancelled", true);
        // A model of a few microseconds per run must not flood the window's event loop.
        auto lastReport = std::chrono::steady_clock::time_point{};
        runner.setProgressCallback([&](const engine::BenchmarkProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (p.done != p.total && now - lastReport < std::chrono::milliseconds(50)) return;
            lastReport = now;
            send({{"progress", {p.warmingUp, p.done, p.total, p.lastMs}}});
        });
        auto result = runner.run(*feeds);
        const bool cancelled = runner.isCancelled() || control.cancel.load();
        if (cancelled) return failure("benchmark cancelled", true);
        if (!result) return failure(result.error().message);
        return {{"ok", true}, {"benchmark", engine::benchmarkMeasurementsToJson(*result)}};
    }

    json dynamicAxes(const json& request, std::uint64_t job) {
        auto options = engine::dynamicAxesOptionsFromJson(request.at("options"));
        if (!options) return failure(options.error().message);
        options->progress = [](int step, int steps, const std::string& what) {
            send({{"step", {step, steps, what}}});
        };
        if (request.value("windowFeeds", false))
            options->makeFeeds = [this](const engine::SymbolBindings& bindings)
                -> Result<std::map<std::string, engine::Value>> {
                send({{"feedsFor", bindings}});
                std::string line;
                if (!std::getline(std::cin, line)) return Error{"the window closed the request"};
                const json answer = json::parse(line, nullptr, false);
                if (answer.is_discarded() || !answer.is_object())
                    return Error{"the window sent no feeds"};
                if (answer.contains("error")) return Error{answer.at("error").get<std::string>()};
                return readFeeds(answer.at("feeds"));
            };
        engine::RunControl control;
        ActiveJob active(job, &control);
        auto result = engine::checkDynamicAxes(*session_, *options, &control);
        if (!result) return failure(result.error().message, control.cancel.load());
        return {{"ok", true}, {"result", engine::dynamicAxesResultToJson(*result)}};
    }

    json sweep(const json& request, std::uint64_t job) {
        std::vector<engine::SweepAxis> axes;
        for (const auto& axis : request.at("axes"))
            axes.push_back({axis.at("symbol").get<std::string>(),
                            axis.at("values").get<std::vector<std::int64_t>>()});
        if (auto unknown = engine::unknownSweepSymbol(session_->inputs(), axes); !unknown.empty())
            return failure(unknown);
        engine::SweepRunner runner(*session_, request.at("warmup").get<int>(),
                                   request.at("runs").get<int>());
        engine::RunControl control;
        ActiveJob active(job, &control);
        active.setStop([&runner] { runner.cancel(); });
        if (control.cancel.load()) return failure("sweep cancelled", true);
        auto lastReport = std::chrono::steady_clock::time_point{};
        runner.setProgressCallback([&](const engine::SweepProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (p.run.done != p.run.total && now - lastReport < std::chrono::milliseconds(50))
                return;
            lastReport = now;
            send(
                {{"sweepProgress", {p.point, p.points, p.run.warmingUp, p.run.done, p.run.total}}});
        });
        runner.setPointCallback([](const engine::SweepPoint& point) {
            send({{"point", engine::sweepPointToJson(point)}});
        });
        const engine::Session& compiled = *session_;
        auto points = runner.run(engine::sweepCombinations(axes),
                                 [&compiled](const engine::SymbolBindings& dims) {
                                     return engine::prepareSessionFeeds(compiled, {}, dims, 1);
                                 });
        if (runner.isCancelled() || control.cancel.load()) return failure("sweep cancelled", true);
        if (!points) return failure(points.error().message);
        return {{"ok", true}};
    }

    // Greedy decoding (DecodeLoop.h) on the session: a progress line per step (at most one per
    // 20 ms, the first and last always), cancelled between steps.
    json decode(const json& request, std::uint64_t job) {
        if (!decoder_ || !*decoder_)
            return failure(decoder_ ? decoder_->error().message : "the model was not compiled");
        engine::DecodeOptions options;
        options.promptIds = request.at("promptIds").get<std::vector<std::int64_t>>();
        options.newTokens = request.at("newTokens").get<int>();
        auto ranges = engine::valueRangesFromJson(request.at("indexRanges"));
        if (!ranges) return failure(ranges.error().message);
        options.indexRanges = std::move(*ranges);
        engine::RunControl control;
        ActiveJob active(job, &control);
        options.control = &control;
        auto lastReport = std::chrono::steady_clock::time_point{};
        const int last = options.newTokens - 1;
        options.onStep = [&](const engine::DecodeStep& step) {
            const auto now = std::chrono::steady_clock::now();
            if (step.index != 0 && step.index != last &&
                now - lastReport < std::chrono::milliseconds(20))
                return;
            lastReport = now;
            send({{"decodeStep", engine::decodeStepToJson(step)}});
        };
        auto result = engine::runDecodeLoop(*session_, **decoder_, options);
        if (control.cancel.load() || (result && result->cancelled))
            return failure("decode cancelled", true);
        if (!result) return failure(result.error().message);
        return {{"ok", true}, {"decode", engine::decodeMeasurementsToJson(*result)}};
    }

    json optimizedGraph(const json& request) {
        const auto file = request.at("file").get<std::string>();
        std::string bytes;
        if (!session_->optimizedModel().SerializeToString(&bytes))
            return failure("the optimized model cannot be serialized");
        FILE* out = std::fopen(file.c_str(), "wb");
        const bool written = out && std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
        if (out && std::fclose(out) != 0) return failure(file + ": cannot write");
        if (!written) return failure(file + ": cannot write");
        return {{"ok", true},
                {"report", engine::optimizationReportToJson(session_->optimizationReport())}};
    }

    std::unique_ptr<engine::Session> session_;
    std::optional<Result<engine::DecoderModel>> decoder_;  // set by every compile
};

}  // namespace

int main(int /*argc*/, char** argv) {
    // Bounded OpenMP spinning (ThreadPool.h): the window passes it on; a worker started by hand
    // sets it itself.
    onnxlens::engine::boundOpenMpSpinning(argv);
    // A worker whose window is gone (killed, crashed) ends too, even in the middle of a benchmark.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Cancellation arrives as SIGUSR1 on a thread of its own: blocked here before any other
    // thread exists, so every thread (the engine's pool too) inherits the mask.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread(cancelThread).detach();

    const int protocolFd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    protocolOut = fdopen(protocolFd, "w");
    if (!protocolOut) return 1;
    limitAddressSpace();

    Worker worker;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        const json request = json::parse(line, nullptr, false);
        if (request.is_discarded() || !request.is_object()) {
            send(failure("the request is not JSON"));
            continue;
        }
        try {
            send(worker.handle(request));
        } catch (const json::exception& e) {
            send(failure(std::string("malformed request: ") + e.what()));
        } catch (const std::bad_alloc&) {
            send(
                failure("the engine process ran out of memory (its limit is the machine's "
                        "physical memory)"));
        } catch (const std::exception& e) {
            send(failure(e.what()));
        }
    }
    return 0;
}
