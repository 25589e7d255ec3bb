#include "widgets/workers/LayoutClient.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QStandardPaths>
#include <QtConcurrent/QtConcurrentRun>

namespace onnxlens::widgets {

LayoutClient::LayoutClient(QObject* parent) : QObject(parent), program_(defaultWorkerProgram()) {
    bool ok = false;
    int limit = qEnvironmentVariableIntValue("ONNXLENS_LAYOUT_TIMEOUT_MS", &ok);
    if (ok && limit > 0) timeLimitMs_ = limit;
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, &LayoutClient::onTimeout);
}

LayoutClient::~LayoutClient() { stopProcess(); }

QString LayoutClient::defaultWorkerProgram() {
    QString fromEnvironment = qEnvironmentVariable("ONNXLENS_LAYOUT_WORKER");
    if (!fromEnvironment.isEmpty()) return fromEnvironment;
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& candidate : {dir + QStringLiteral("/onnxlens-layout"),
                                     dir + QStringLiteral("/../lib/onnxlens/onnxlens-layout"),
                                     dir + QStringLiteral("/../layout/onnxlens-layout"),
                                     dir + QStringLiteral("/../app/layout/onnxlens-layout")}) {
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
    }
    QString onPath = QStandardPaths::findExecutable(QStringLiteral("onnxlens-layout"));
    return onPath.isEmpty() ? QStringLiteral("onnxlens-layout") : onPath;
}

void LayoutClient::stopProcess() {
    timer_.stop();
    if (!process_) return;
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
        process_->kill();
        process_->waitForFinished(1000);
    }
    process_->deleteLater();
    process_ = nullptr;
}

void LayoutClient::start(const LayoutRequest& request) {
    if (running_) cancel();
    ++run_;
    running_ = true;
    clock_.start();
    // Groups laid out before with the same content (this tab's earlier layouts, the model before
    // an edit, another tab of the same model) come from the shared cache; only the rest goes to
    // the worker.
    plan_ = std::make_shared<LayoutCache::Plan>(LayoutCache::shared().plan(request));
    if (plan_->complete()) {
        const quint64 run = run_;
        QTimer::singleShot(0, this, [this, run, plan = plan_] {
            if (run != run_) return;
            running_ = false;
            auto merged = LayoutCache::shared().complete(*plan, LayoutResult{});
            if (!merged)
                emit failed(QString::fromStdString(merged.error().message));
            else
                emit finished(merged.value());
        });
        return;
    }
    process_ = new QProcess(this);
    process_->setProgram(program_);
    connect(process_, &QProcess::finished, this, &LayoutClient::onProcessFinished);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return;
        const QString message =
            tr("Cannot start the layout worker %1: %2").arg(program_, process_->errorString());
        stopProcess();
        running_ = false;
        emit failed(message);
    });
    process_->start();
    if (!running_) return;  // failed to start, already reported
    const std::string text = serializeLayoutRequest(plan_->missing);
    process_->write(text.data(), static_cast<qint64>(text.size()));
    process_->closeWriteChannel();
    timer_.start(timeLimitMs_);
}

void LayoutClient::cancel() {
    if (!running_) return;
    ++run_;
    stopProcess();
    running_ = false;
    emit cancelled();
}

void LayoutClient::onTimeout() {
    if (!running_) return;
    ++run_;
    stopProcess();
    running_ = false;
    emit failed(tr("The layout did not finish within %1 s and was stopped. Collapse groups or "
                   "expand fewer at once.")
                    .arg(timeLimitMs_ / 1000.0, 0, 'f', 1));
}

void LayoutClient::onProcessFinished(int exitCode, QProcess::ExitStatus status) {
    timer_.stop();
    QByteArray out = process_->readAllStandardOutput();
    QString err = QString::fromUtf8(process_->readAllStandardError()).trimmed();
    process_->deleteLater();
    process_ = nullptr;
    if (status == QProcess::CrashExit) {
        running_ = false;
        emit failed(tr("The layout worker crashed. The graph could not be laid out."));
        return;
    }
    if (exitCode != 0) {
        running_ = false;
        emit failed(err.isEmpty() ? tr("The layout worker failed (exit code %1).").arg(exitCode)
                                  : err);
        return;
    }
    // Large results are megabytes of JSON: parse them off the GUI thread.
    const quint64 run = run_;
    auto* watcher = new QFutureWatcher<Result<LayoutResult>>(this);
    connect(watcher, &QFutureWatcher<Result<LayoutResult>>::finished, this, [this, watcher, run] {
        watcher->deleteLater();
        if (run != run_) return;  // cancelled or restarted meanwhile
        running_ = false;
        const auto& parsed = watcher->result();
        if (!parsed)
            emit failed(tr("The layout worker sent an invalid result: %1")
                            .arg(QString::fromStdString(parsed.error().message)));
        else
            emit finished(parsed.value());
    });
    watcher->setFuture(QtConcurrent::run([out, plan = plan_]() -> Result<LayoutResult> {
        auto parsed = parseLayoutResult(
            std::string_view(out.constData(), static_cast<std::size_t>(out.size())));
        if (!parsed) return parsed;
        return LayoutCache::shared().complete(*plan, *parsed);
    }));
}

}  // namespace onnxlens::widgets
