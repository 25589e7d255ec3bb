#pragma once
// Runs a benchmark off the GUI thread: its own QThread compiles its own Session (so the Run
// dock's session and the benchmark never share an intra-op pool), asks the feeds provider for
// the inputs, runs the engine's BenchmarkRunner and hands the result back on the GUI thread.
// Progress is throttled (a model of a few microseconds per run must not flood the event loop).
#include <QObject>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "widgets/workers/ModelDocument.h"

class QThread;

namespace onnxlens::widgets {

class BenchmarkWorker : public QObject {
    Q_OBJECT
  public:
    // Called on the worker thread, once per benchmark.
    using FeedsProvider = std::function<Result<std::map<std::string, engine::Value>>()>;
    struct Settings {
        int warmupRuns = 5;
        int runs = 50;
        int threads = 0;  // intra-op threads; 0: every core
        bool profile = true;
        bool optimize = true;
    };

    explicit BenchmarkWorker(QObject* parent = nullptr);
    ~BenchmarkWorker() override;  // cancels a running benchmark and waits for its thread

    // GUI thread. An empty provider means seeded random inputs, symbolic dims = 1. Returns false
    // (and does nothing) while another benchmark runs.
    bool start(std::shared_ptr<const ModelDocument> document, const Settings& settings,
               FeedsProvider feeds = {});
    void cancel();
    bool isRunning() const { return thread_ != nullptr; }

    // The default provider: engine::prepareFeeds with seed 1 and every symbolic dim 1.
    static Result<std::map<std::string, engine::Value>> randomFeeds(const engine::Session& session);

  signals:
    void phaseChanged(const QString& text);  // "Compiling the model…", "Warming up…", ...
    void progress(bool warmingUp, int done, int total, double lastMs);
    void finished(std::shared_ptr<const onnxlens::engine::BenchmarkResult> result);
    void failed(const QString& message);
    void cancelled();

  private:
    struct Job;
    void finish();
    QThread* thread_ = nullptr;
    std::shared_ptr<Job> job_;
};

}  // namespace onnxlens::widgets
