#pragma once
// One open model's engine side, owned by its tab (GraphPage): the one compiled session (in the
// model's own engine process, driven from its engine thread, EngineThread), reused by the Run,
// Compare and Benchmark docks and the optimized view; the input choices the Run dock edits and the
// others use; and the last result of each kind, so a dock shows this model's results again when its
// tab comes back. The docks observe the current tab's controller (signals) instead of each other.
// Lives on the GUI thread; every method returns at once.
#include <QObject>
#include <QString>
#include <memory>
#include <optional>

#include "widgets/workers/CostAtDims.h"
#include "widgets/workers/EngineWorker.h"

namespace onnxlens::widgets {

class ModelController : public QObject {
    Q_OBJECT
  public:
    explicit ModelController(std::shared_ptr<const ModelDocument> document,
                             QObject* parent = nullptr);
    ~ModelController() override;  // cancels the running job, ends the engine thread and process

    const std::shared_ptr<const ModelDocument>& document() const { return document_; }

    // Compiles the session the first time a dock needs it (idempotent). A model importing a
    // default-domain opset newer than the engine and the onnx library know is not compiled:
    // compileFailed(newerOpsetProblem()) until allowNewerOpset().
    void compile();
    QString newerOpsetProblem() const { return newerOpset_; }
    bool isNewerOpsetAllowed() const { return newerOpsetAllowed_; }
    // "Run anyway": compiles it as the newest operator versions the engine knows.
    void allowNewerOpset();
    bool isCompiling() const { return compiling_; }
    std::shared_ptr<const CompiledModel> compiledModel() const { return compiled_; }
    bool isReady() const { return compiled_ != nullptr; }
    QString compileError() const { return compileError_; }
    // Why the engine jobs (run, compare, benchmark) cannot start now, naming the file: the
    // engine cannot run the model ("model.onnx: 3 node(s) cannot run on the engine: ..."), or it
    // is still compiling. Empty once compiled.
    QString unavailableReason() const;
    // Sessions compiled for this model so far (one, unless a benchmark asked for other threads or
    // the engine process had to start again after it stopped).
    int sessionsCompiled() const;

    // A test data set folder the user picked: listed with the ones found beside the model.
    void addDataSet(TestDataSet set);

    // The Run dock's inputs as they are now; Compare, the dynamic-axes check and the benchmark
    // use them. Empty until the Run dock published any.
    void setInputChoices(InputChoices choices);
    const std::optional<InputChoices>& inputChoices() const { return choices_; }

    // Jobs on the engine thread (run in the engine process), one after another; results come back
    // as signals below.
    void run();  // on the input choices
    void compare(CompareRequest request);
    void checkDynamicAxes(engine::DynamicAxesCheckOptions options);
    // `feeds` empty: the input choices, else seeded random data.
    void benchmark(const BenchmarkSettings& settings, BenchmarkFeeds feeds = {});
    void buildOptimizedGraph();  // optimizedGraphReady() or failed(OptimizedGraph, ...)
    // Greedy decoding of a decoder (the Benchmark dock's Decode tab): decodeStep() as it goes,
    // decodeFinished() with lastDecode(), or failed/cancelled(Decode).
    void decode(DecodeSettings settings);
    // Stops the running job between nodes and drops the queued ones.
    void cancel();
    bool isBusy() const { return busy_; }
    bool isRunning(EngineJob job) const;  // a job of that kind is queued or running
    QString busyText() const { return busyWhat_; }

    std::shared_ptr<const RunOutcome> lastRun() const { return lastRun_; }
    std::shared_ptr<const CompareOutcome> lastComparison() const { return lastComparison_; }
    std::shared_ptr<const engine::DynamicAxesCheckResult> lastDynamicAxesCheck() const {
        return lastDynamicAxes_;
    }
    std::shared_ptr<const engine::BenchmarkResult> lastBenchmark() const { return lastBenchmark_; }
    std::shared_ptr<const OptimizedGraph> optimizedGraph() const { return optimized_; }
    std::shared_ptr<const DecodeOutcome> lastDecode() const { return lastDecode_; }

    // The cost model at the dims the model last ran with (the document's, every symbolic dim 1,
    // until a run or benchmark gave others): after a run or benchmark at other dims it is counted
    // again on a worker thread, then costChanged(). Never null.
    std::shared_ptr<const CostAtDims> cost() const { return cost_; }
    bool isCounting() const { return countingDims_.has_value(); }
    // Counts at `dims` unless the current (or pending) count has them; `source` says where they
    // come from ("the last run's inputs").
    void countCostAt(const std::map<std::string, std::int64_t>& dims, const QString& source);

  signals:
    void compiled();
    void compileFailed(const QString& message);
    void dataSetsChanged();
    void busyChanged(bool busy);
    void started(const QString& what);
    void progress(const QString& what, int step, int steps);
    void runFinished();
    void compareFinished();
    void dynamicAxesFinished();
    void benchmarkProgress(bool warmingUp, int done, int total, double lastMs);
    void benchmarkFinished();
    void optimizedGraphReady();
    void decodeStep(int index, qint64 context, qint64 token, double ms);
    void decodeFinished();
    void costChanged();
    void inputsRejected(onnxlens::widgets::EngineJob job,
                        std::shared_ptr<const std::map<std::string, std::string>> problems);
    void failed(onnxlens::widgets::EngineJob job, const QString& message);
    void cancelled(onnxlens::widgets::EngineJob job);

  private:
    // A job the model cannot do (it did not compile): failed(job, why) now; true when refused.
    bool refuse(EngineJob job);
    void queued(EngineJob job);
    void finishedJob(EngineJob job);
    void connectWorker();

    std::shared_ptr<const ModelDocument> document_;
    std::unique_ptr<EngineThread> engine_;
    std::shared_ptr<const CompiledModel> compiled_;
    QString compileError_;
    QString newerOpset_;  // why the model was not compiled (empty: its opsets are known)
    bool newerOpsetAllowed_ = false;
    bool compileRequested_ = false;
    bool compiling_ = false;
    bool busy_ = false;
    QString busyWhat_;
    std::map<EngineJob, int> queuedJobs_;
    std::optional<InputChoices> choices_;
    std::shared_ptr<const RunOutcome> lastRun_;
    std::shared_ptr<const CompareOutcome> lastComparison_;
    std::shared_ptr<const engine::DynamicAxesCheckResult> lastDynamicAxes_;
    std::shared_ptr<const engine::BenchmarkResult> lastBenchmark_;
    std::shared_ptr<const OptimizedGraph> optimized_;
    std::shared_ptr<const DecodeOutcome> lastDecode_;
    std::shared_ptr<const CostAtDims> cost_;
    std::optional<std::map<std::string, std::int64_t>> countingDims_;  // the pending count's
};

}  // namespace onnxlens::widgets
