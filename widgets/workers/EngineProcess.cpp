#include "widgets/workers/EngineProcess.h"

#include <signal.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <cstdio>

namespace onnxlens::widgets {

namespace {

// A cancelled job the worker has not stopped after this long is killed.
constexpr int kCancelGraceMs = 5000;
constexpr qsizetype kErrorTailBytes = 4096;

QString signalName(int signal) {
    switch (signal) {
        case SIGABRT:
            return QStringLiteral("SIGABRT");
        case SIGSEGV:
            return QStringLiteral("SIGSEGV");
        case SIGFPE:
            return QStringLiteral("SIGFPE");
        case SIGBUS:
            return QStringLiteral("SIGBUS");
        case SIGILL:
            return QStringLiteral("SIGILL");
        case SIGKILL:
            return QStringLiteral("SIGKILL");
        case SIGTERM:
            return QStringLiteral("SIGTERM");
        case SIGTRAP:
            return QStringLiteral("SIGTRAP");
        default:
            return {};
    }
}

}  // namespace

EngineProcess::EngineProcess() = default;

EngineProcess::~EngineProcess() { stop(); }

QString EngineProcess::defaultWorkerProgram() {
    QString fromEnvironment = qEnvironmentVariable("ONNXLENS_ENGINE_WORKER");
    if (!fromEnvironment.isEmpty()) return fromEnvironment;
    const QString name = QStringLiteral("onnxlens-engine-worker");
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& candidate :
         {dir + "/" + name, dir + "/../lib/onnxlens/" + name, dir + "/../engineworker/" + name,
          dir + "/../app/engineworker/" + name}) {
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
    }
    QString onPath = QStandardPaths::findExecutable(name);
    return onPath.isEmpty() ? name : onPath;
}

QString EngineProcess::workFolder(QString* error) {
    if (!folder_) {
        const QFileInfo shm(QStringLiteral("/dev/shm"));
        const QString base = shm.isDir() && shm.isWritable() ? shm.filePath() : QDir::tempPath();
        folder_ = std::make_unique<QTemporaryDir>(base + QStringLiteral("/onnxlens-engine-XXXXXX"));
        if (!folder_->isValid()) {
            if (error)
                *error = QCoreApplication::translate("EngineProcess",
                                                     "Cannot make a folder for the engine's "
                                                     "tensors in %1: %2")
                             .arg(base, folder_->errorString());
            folder_.reset();
            return {};
        }
    }
    return folder_->path();
}

bool EngineProcess::isRunning() const {
    return process_ && process_->state() != QProcess::NotRunning;
}

Result<QProcess*> EngineProcess::ensureStarted() {
    if (isRunning()) return process_.get();
    stop();
    const QString program = defaultWorkerProgram();
    process_ = std::make_unique<QProcess>();
    process_->setProgram(program);
    process_->setProcessChannelMode(QProcess::SeparateChannels);
    process_->start();
    if (!process_->waitForStarted(30000)) {
        const QString message =
            QCoreApplication::translate("EngineProcess", "Cannot start the engine process %1: %2")
                .arg(program, process_->errorString());
        stop();
        return Error{message.toStdString()};
    }
    pid_->store(process_->processId());
    errorTail_.clear();
    return process_.get();
}

void EngineProcess::stop() {
    pid_->store(0);
    if (!process_) return;
    if (process_->state() != QProcess::NotRunning) {
        process_->kill();
        process_->waitForFinished(5000);
    }
    process_.reset();
}

std::function<void()> EngineProcess::killer() const {
    return [pid = pid_] {
        if (const qint64 id = pid->load(); id > 0) ::kill(static_cast<pid_t>(id), SIGKILL);
    };
}

void EngineProcess::cancelThrough(std::uint64_t job) {
    std::uint64_t seen = cancelledThrough_.load();
    while (seen < job && !cancelledThrough_.compare_exchange_weak(seen, job)) {
    }
    const qint64 pid = pid_->load();
    if (pid <= 0) return;
    sigval value{};
    value.sival_int = static_cast<int>(job);
    sigqueue(static_cast<pid_t>(pid), SIGUSR1, value);
}

void EngineProcess::readStandardError() {
    QByteArray text = process_->readAllStandardError();
    if (text.isEmpty()) return;
    // The worker's own warnings go where the window's go.
    std::fwrite(text.constData(), 1, static_cast<std::size_t>(text.size()), stderr);
    errorTail_ += text;
    if (errorTail_.size() > kErrorTailBytes) errorTail_ = errorTail_.right(kErrorTailBytes);
}

QString EngineProcess::deathMessage(const QString& doing, const QString& retryHint) {
    QString how;
    if (process_->exitStatus() == QProcess::CrashExit) {
        const int signal = process_->exitCode();
        const QString name = signalName(signal);
        how = name.isEmpty() ? QCoreApplication::translate("EngineProcess", "signal %1").arg(signal)
                             : QCoreApplication::translate("EngineProcess", "signal %1, %2")
                                   .arg(signal)
                                   .arg(name);
        if (signal == SIGKILL)
            how += QCoreApplication::translate("EngineProcess", ", perhaps out of memory");
    } else {
        how =
            QCoreApplication::translate("EngineProcess", "exit code %1").arg(process_->exitCode());
    }
    QString message = QCoreApplication::translate("EngineProcess",
                                                  "The engine process stopped (%1) while %2; the "
                                                  "window and the other tabs are unaffected.")
                          .arg(how, doing);
    // The last line it wrote: "terminate called after throwing an instance of ...".
    const QList<QByteArray> lines = errorTail_.trimmed().split('\n');
    if (!lines.isEmpty() && !lines.last().trimmed().isEmpty())
        message += QCoreApplication::translate("EngineProcess", " It said: %1")
                       .arg(QString::fromUtf8(lines.last().trimmed()));
    if (!retryHint.isEmpty()) message += QLatin1Char(' ') + retryHint;
    return message;
}

void EngineProcess::answer(const nlohmann::json& message) {
    if (!isRunning()) return;
    std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    line.push_back('\n');
    process_->write(line.data(), static_cast<qint64>(line.size()));
}

Result<nlohmann::json> EngineProcess::request(const nlohmann::json& request, const QString& doing,
                                              const QString& retryHint,
                                              const MessageHandler& onMessage) {
    auto started = ensureStarted();
    if (!started) return started.error();
    QProcess* process = *started;
    requestJob_ = request.value("job", std::uint64_t{0});
    // A cancel that came before the worker knew this job's number.
    if (requestJob_ != 0 && requestJob_ <= cancelledThrough_.load()) cancelThrough(requestJob_);
    answer(request);
    QElapsedTimer sinceCancel;
    for (;;) {
        while (process->canReadLine()) {
            const QByteArray line = process->readLine();
            nlohmann::json message = nlohmann::json::parse(
                line.constData(), line.constData() + line.size(), nullptr, false);
            if (message.is_discarded() || !message.is_object()) {
                readStandardError();
                stop();
                return Error{QCoreApplication::translate(
                                 "EngineProcess",
                                 "The engine process sent an invalid reply while %1 and was "
                                 "stopped; the window and the other tabs are unaffected. %2")
                                 .arg(doing, retryHint)
                                 .trimmed()
                                 .toStdString()};
            }
            if (message.contains("ok")) return message;
            if (onMessage) onMessage(message);
        }
        readStandardError();
        if (process->state() == QProcess::NotRunning) {
            const QString message = deathMessage(doing, retryHint);
            stop();
            return Error{message.toStdString()};
        }
        if (requestJob_ != 0 && requestJob_ <= cancelledThrough_.load()) {
            if (!sinceCancel.isValid()) sinceCancel.start();
            if (sinceCancel.elapsed() > kCancelGraceMs) {
                stop();
                return Error{QCoreApplication::translate(
                                 "EngineProcess",
                                 "The engine process did not stop within %1 s of the cancel "
                                 "while %2 and was ended.")
                                 .arg(kCancelGraceMs / 1000)
                                 .arg(doing)
                                 .toStdString()};
            }
        }
        // Wakes as soon as a line (or the worker's end) arrives; the timeout only paces the
        // cancel check.
        process->waitForReadyRead(200);
    }
}

}  // namespace onnxlens::widgets
