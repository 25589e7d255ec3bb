#pragma once
// The engine's thread of one open model. EngineWorker lives on its own QThread and drives the
// model's engine process (EngineProcess: onnxlens-engine-worker, which holds the one compiled
// engine::Session); every compile, run, comparison, dynamic-axes check, benchmark and
// optimized-graph build runs there, one after another, and comes back as a typed signal carrying a
// plain result struct. Feeds are made and outputs summarized on this thread; the engine's work
// and its timing happen in the process, so a crash there is an error on this model's tab and the
// next job starts the process again (compiling the model first). ModelController is its only
// user. Methods named request*() and cancel() are called on the GUI thread and return at once;
// methods named *OnWorkerThread() run on the worker thread. EngineThread owns the QThread and the
// worker (create and destroy it on the GUI thread).
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/DecodeLoop.h"
#include "onnxlens/workflows/DynamicAxesCheck.h"
#include "onnxlens/workflows/ReferenceRun.h"
#include "onnxlens/workflows/TensorStatistics.h"
#include "widgets/graph/OptimizedGraph.h"
#include "widgets/panels/InputSources.h"
#include "widgets/workers/EngineProcess.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens::widgets {

// Makes the feeds of a run on the worker thread (reads files, decodes images).
using FeedsJob = std::function<PreparedFeeds()>;

// What a job was, so the dock that asked for it takes its result, failure or cancel.
enum class EngineJob { Compile, Run, Compare, DynamicAxes, Benchmark, OptimizedGraph, Decode };

struct BenchmarkSettings {
    int warmupRuns = 5;
    int runs = 50;
    int threads = 0;  // intra-op threads; 0: every core
    bool profile = true;
    bool optimize = true;
};

// The Benchmark dock's Decode tab: greedy decoding (DecodeLoop.h) of a decoder with a KV cache.
struct DecodeSettings {
    std::vector<std::int64_t> promptIds;
    int newTokens = 32;
    int threads = 0;  // intra-op threads; 0: every core
    // The model's integer index ranges (inferIndexRanges on the loaded model, as `generate`).
    engine::ValueRanges indexRanges;
};

// A decode's result and the session's intra-op threads it ran with.
struct DecodeOutcome {
    engine::DecodeResult result;
    int threads = 0;
};

// Feeds for a benchmark, called on the worker thread; empty: seeded random data, every
// symbolic dim 1.
using BenchmarkFeeds = std::function<Result<std::map<std::string, engine::Value>>()>;

struct CompiledModel {
    QString path;
    std::vector<engine::Session::IoInfo> inputs, outputs;
    std::vector<TestDataSet> dataSets;  // test_data_set_* beside the model
    QString dataSetProblem;             // why discovery failed, if it did
    double compileMs = 0;
    int threads = 0;
    bool optimize = true;
};

// One output of a run, summarized on the worker thread.
struct OutputView {
    std::string name;
    engine::Value value;  // shares the run's buffer; read-only afterwards
    engine::TensorStatistics statistics;
    engine::Histogram histogram;
    std::vector<engine::TopKEntry> top5;  // row 0 of a 2-D logits output
};

struct RunOutcome {
    std::vector<OutputView> outputs;
    double runMs = 0;                                 // Session::run only
    double prepareMs = 0;                             // making the feeds
    std::map<std::string, engine::Shape> feedShapes;  // what each input got
};

struct CompareRequest {
    QString source;  // shown in the panel: "test_data_set_0" or "reference files"
    std::optional<TestDataSet> dataSet;  // its inputs and outputs; otherwise `feeds` + `references`
    FeedsJob feeds;
    engine::ReferenceFiles references;
    engine::Tolerance tolerance;
};

struct CompareOutcome {
    QString source;
    engine::Tolerance tolerance;
    std::vector<engine::OutputComparison> outputs;
    double runMs = 0;
    bool passed() const;
};

class EngineWorker : public QObject {
    Q_OBJECT
  public:
    explicit EngineWorker(QObject* parent = nullptr);
    ~EngineWorker() override;

    // GUI thread: queue work (the previous job is not cancelled by these).
    void requestCompile(std::shared_ptr<const ModelDocument> document,
                        engine::SessionOptions options = {});
    void requestRun(FeedsJob feeds);
    void requestCompare(CompareRequest request);
    void requestDynamicAxesCheck(engine::DynamicAxesCheckOptions options);
    // Times the session; compiles it again first when the settings ask for other threads or
    // optimization (the model still has one session: the new one replaces it).
    void requestBenchmark(BenchmarkSettings settings, BenchmarkFeeds feeds);
    // The graph the session runs, drawn from its optimized model (no second compile).
    void requestOptimizedGraph();
    // Greedy decoding in the engine process, one progress signal per reported step; compiles
    // again first when the settings ask for other threads. Cancel stops it between steps.
    void requestDecode(DecodeSettings settings);
    // Any thread: stops the running job between nodes and drops the queued ones.
    void cancel();
    // Any thread: a job is queued or running.
    bool isBusy() const { return pending_.load() > 0; }
    // Any thread: how many sessions this worker compiled (one per open model unless the
    // benchmark asked for other session options or the engine process had to start again).
    int sessionsCompiled() const { return sessionsCompiled_.load(); }
    // Any thread, also after the worker is gone: ends the engine process at once (the tab
    // closes while its model compiles).
    std::function<void()> engineProcessKiller() const { return process_.killer(); }

  signals:
    void compiled(std::shared_ptr<const onnxlens::widgets::CompiledModel> model);
    void compileFailed(const QString& path, const QString& message);
    void started(const QString& what);
    void progress(const QString& what, int step, int steps);
    void runFinished(std::shared_ptr<const onnxlens::widgets::RunOutcome> outcome);
    void compareFinished(std::shared_ptr<const onnxlens::widgets::CompareOutcome> outcome);
    void dynamicAxesFinished(
        std::shared_ptr<const onnxlens::engine::DynamicAxesCheckResult> result);
    void benchmarkProgress(bool warmingUp, int done, int total, double lastMs);
    void benchmarkFinished(std::shared_ptr<const onnxlens::engine::BenchmarkResult> result);
    void optimizedGraphFinished(std::shared_ptr<const onnxlens::widgets::OptimizedGraph> graph);
    // A step of a decode ended (index 0: the prefill); not every step is reported.
    void decodeStep(int index, qint64 context, qint64 token, double ms);
    void decodeFinished(std::shared_ptr<const onnxlens::widgets::DecodeOutcome> outcome);
    // The feeds could not be made: input name -> problem (shown on that input's row).
    void inputsRejected(onnxlens::widgets::EngineJob job,
                        std::shared_ptr<const std::map<std::string, std::string>> problems);
    void failed(onnxlens::widgets::EngineJob job, const QString& message);
    void cancelled(onnxlens::widgets::EngineJob job);
    void jobDone(onnxlens::widgets::EngineJob job);  // after the job's result signals
    void idle();                                     // the queue is empty

  private:
    // Wraps a job: cancellation bookkeeping, exceptions to failed(), idle() at the end. Jobs
    // that are not `cancellable` (compile) run even when cancel() came after them.
    void enqueue(EngineJob kind, std::function<void()> job, bool cancellable = true);
    // Compiles `document` with `options` in the engine process; the error (also sent as
    // compileFailed), empty on success.
    QString compileOnWorkerThread(const std::shared_ptr<const ModelDocument>& document,
                                  engine::SessionOptions options);
    // The engine process holds the model's session: compiles it again when the process had
    // stopped. Sends failed() and returns false when there is no model or it does not compile.
    bool ensureSessionOnWorkerThread();
    void runOnWorkerThread(const FeedsJob& feeds);
    void compareOnWorkerThread(const CompareRequest& request);
    void dynamicAxesCheckOnWorkerThread(const engine::DynamicAxesCheckOptions& options);
    void benchmarkOnWorkerThread(const BenchmarkSettings& settings, const BenchmarkFeeds& feeds);
    void optimizedGraphOnWorkerThread();
    void decodeOnWorkerThread(const DecodeSettings& settings);
    // The session compiled with `threads` intra-op threads and `optimize` (compiles again when
    // the one the process holds differs or the process stopped); false (failed() sent) when it
    // does not compile.
    bool ensureSessionWithOnWorkerThread(int threads, bool optimize);

    // A request of the running job to the engine process: its reply's fields when it is "ok";
    // otherwise cancelled() or failed(job, why) is sent and nullopt returned. `doing`: "running"
    // (the model's file name follows).
    std::optional<nlohmann::json> askEngine(nlohmann::json request, const QString& doing,
                                            const EngineProcess::MessageHandler& onMessage = {});
    // Feeds written as .pb files (PREFIX_K.pb) for the engine process: [{name, file}].
    Result<nlohmann::json> writeFeedFiles(const std::map<std::string, engine::Value>& feeds,
                                          const QString& prefix);
    // The same; nullopt (failed() sent) when they cannot be written.
    std::optional<nlohmann::json> writeFeedsOnWorkerThread(
        const std::map<std::string, engine::Value>& feeds, const QString& prefix);
    // One run in the engine process: the outputs read back (session order) and its time.
    struct EngineRun {
        std::vector<engine::Value> outputs;
        double runMs = 0;
    };
    std::optional<EngineRun> runInEngineOnWorkerThread(
        const std::map<std::string, engine::Value>& feeds, const QString& doing);
    QString modelFileName() const;

    EngineProcess process_;         // worker thread only, but killer() and cancelThrough()
    bool sessionCompiled_ = false;  // the process holds document_ compiled with options_
    std::shared_ptr<const ModelDocument> document_;
    engine::SessionOptions options_;                         // the session's
    std::vector<engine::Session::IoInfo> inputs_, outputs_;  // the session's
    double compileMs_ = 0;                                   // the session's
    int compiledThreads_ = 0;                                // the session's
    EngineJob job_ = EngineJob::Compile;                     // the running job (worker thread only)
    std::uint64_t jobNumber_ = 0;  // the running job's (worker thread only)
    engine::RunControl control_;   // only its cancel flag: the run is in the process
    std::atomic<int> sessionsCompiled_{0};
    std::atomic<std::uint64_t> submitted_{0};
    std::atomic<std::uint64_t> cancelledThrough_{0};
    std::atomic<int> pending_{0};
};

// Owns the worker thread and the EngineWorker on it. The destructor cancels the running job; a
// thread that does not end at once (a compile) finishes on its own, and the application waits for
// it as it quits.
class EngineThread {
  public:
    EngineThread();
    ~EngineThread();
    EngineThread(const EngineThread&) = delete;
    EngineThread& operator=(const EngineThread&) = delete;
    EngineWorker* worker() const { return worker_; }

  private:
    QThread* thread_;
    EngineWorker* worker_;
    std::function<void()> killEngineProcess_;
};

}  // namespace onnxlens::widgets
