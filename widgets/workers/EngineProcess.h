#pragma once
// One open model's engine process (onnxlens-engine-worker, app/engineworker), seen from the
// model's engine thread (EngineWorker): started on the first request, kept for the next ones (it
// holds the compiled session), started again on the request after it died. request() sends one
// JSON line and waits for the reply line, handing the lines before it (progress, requests for
// feeds) to a callback. A worker that crashes, aborts, is killed or writes garbage ends the
// request with an error naming the signal and what it was doing, never with a lost window.
// Feeds and outputs travel as .pb files in workFolder(): a private folder in /dev/shm when it
// exists (memory, not disk), else in the temporary folder.
//
// Every method but cancelThrough() and kill() is called on the engine thread only.
#include <QString>
#include <QTemporaryDir>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "onnxlens/model/Result.h"

class QProcess;

namespace onnxlens::widgets {

class EngineProcess {
  public:
    EngineProcess();
    ~EngineProcess();  // kills the worker
    EngineProcess(const EngineProcess&) = delete;
    EngineProcess& operator=(const EngineProcess&) = delete;

    // The worker: $ONNXLENS_ENGINE_WORKER, else onnxlens-engine-worker beside this executable,
    // in ../lib/onnxlens (installed), in ../engineworker or ../app/engineworker (the build tree),
    // or on PATH.
    static QString defaultWorkerProgram();

    // The folder for the request's files; empty with `error` set when none can be made.
    QString workFolder(QString* error);
    bool isRunning() const;

    using MessageHandler = std::function<void(const nlohmann::json& message)>;
    // Sends `request` (starting the worker when it is not running) and returns its reply, an
    // object with "ok". `doing` ("running model.onnx") names the work in the error when the
    // worker dies; `retryHint` follows it ("Run again restarts it."). A job the window cancelled
    // and the worker does not stop within a few seconds is killed: the error says so.
    Result<nlohmann::json> request(const nlohmann::json& request, const QString& doing,
                                   const QString& retryHint, const MessageHandler& onMessage = {});
    // Writes one line to the worker (an answer to a message, from the handler).
    void answer(const nlohmann::json& message);

    // Any thread: stops the worker's jobs numbered up to `job` between two nodes (SIGUSR1
    // carrying the number).
    void cancelThrough(std::uint64_t job);
    // Any thread, also after this object is gone: ends the worker at once (a tab closing while
    // its model compiles).
    std::function<void()> killer() const;
    // Stops the worker (its session's memory is freed); the next request starts it again.
    void stop();

  private:
    Result<QProcess*> ensureStarted();
    QString deathMessage(const QString& doing, const QString& retryHint);
    void readStandardError();

    std::unique_ptr<QProcess> process_;
    std::unique_ptr<QTemporaryDir> folder_;
    // The running worker's process id (0: none), shared with killer().
    std::shared_ptr<std::atomic<qint64>> pid_ = std::make_shared<std::atomic<qint64>>(0);
    std::atomic<std::uint64_t> cancelledThrough_{0};
    std::uint64_t requestJob_ = 0;  // the running request's job number
    QByteArray errorTail_;          // the last lines the worker wrote on stderr
};

}  // namespace onnxlens::widgets
