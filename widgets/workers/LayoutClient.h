#pragma once
// Runs a layout request in the onnxlens-layout worker process: the request goes in on stdin,
// the result comes back on stdout and is parsed off the GUI thread. A time limit, cancel(), and
// a worker that crashes, hangs or writes garbage all end in failed(message), never in a lost
// window.
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QTimer>
#include <memory>

#include "onnxlens/layout/GraphLayout.h"
#include "onnxlens/layout/LayoutCache.h"

namespace onnxlens::widgets {

class LayoutClient : public QObject {
    Q_OBJECT
  public:
    explicit LayoutClient(QObject* parent = nullptr);
    ~LayoutClient() override;

    // The worker: $ONNXLENS_LAYOUT_WORKER, else onnxlens-layout beside this executable, in
    // ../lib/onnxlens (installed), in ../layout (the build tree), or on PATH.
    static QString defaultWorkerProgram();
    void setWorkerProgram(const QString& program) { program_ = program; }
    QString workerProgram() const { return program_; }
    // Default 60 s, or $ONNXLENS_LAYOUT_TIMEOUT_MS.
    void setTimeLimit(int milliseconds) { timeLimitMs_ = milliseconds; }
    int timeLimit() const { return timeLimitMs_; }

    bool isRunning() const { return running_; }
    // Starts a layout; a running one is cancelled first (its result is never delivered).
    void start(const LayoutRequest& request);
    void cancel();
    qint64 elapsedMs() const { return clock_.isValid() ? clock_.elapsed() : 0; }

  signals:
    void finished(const onnxlens::LayoutResult& result);
    void failed(const QString& message);
    void cancelled();

  private:
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onTimeout();
    void stopProcess();

    QString program_;
    int timeLimitMs_ = 60000;
    QProcess* process_ = nullptr;
    QTimer timer_;
    QElapsedTimer clock_;
    bool running_ = false;
    quint64 run_ = 0;  // identifies the current run, so stale parses are dropped
    std::shared_ptr<LayoutCache::Plan> plan_;  // the current run's split between cache and worker
};

}  // namespace onnxlens::widgets
