#pragma once
// Runs a shape sweep off the GUI thread: its own QThread starts an engine process of its own
// (EngineProcess), which compiles its own Session once, then benchmarks it at each combination of
// symbolic-dim values (engine::SweepRunner) with seeded random inputs; each point comes back on
// the GUI thread as it is done. Cancel stops between two nodes (or ends the process while it
// compiles); a crash of the process is failed(message), never a lost window.
#include <QObject>
#include <memory>
#include <vector>

#include "onnxlens/workflows/ShapeSweep.h"
#include "widgets/workers/ModelDocument.h"

class QThread;

namespace onnxlens::widgets {

class SweepWorker : public QObject {
    Q_OBJECT
  public:
    struct Settings {
        int warmupRuns = 2;
        int runs = 10;
        int threads = 0;  // intra-op threads; 0: every core
        std::vector<engine::SweepAxis> axes;
    };

    explicit SweepWorker(QObject* parent = nullptr);
    ~SweepWorker() override;  // cancels a running sweep and waits for its thread

    // GUI thread; false (and nothing done) while a sweep runs.
    bool start(std::shared_ptr<const ModelDocument> document, const Settings& settings);
    void cancel();
    bool isRunning() const { return thread_ != nullptr; }

  signals:
    void phaseChanged(const QString& text);
    // Point `point` of `points` is running: run `done` of `total` (warm-up runs first).
    void progress(int point, int points, bool warmingUp, int done, int total);
    void pointDone(const onnxlens::engine::SweepPoint& point);
    void finished();
    void failed(const QString& message);
    void cancelled();

  private:
    struct Job;
    void finish();
    QThread* thread_ = nullptr;
    std::shared_ptr<Job> job_;
};

}  // namespace onnxlens::widgets
