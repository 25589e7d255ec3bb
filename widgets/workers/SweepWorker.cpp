#include "widgets/workers/SweepWorker.h"

#include <QFileInfo>
#include <QThread>
#include <atomic>
#include <functional>
#include <mutex>
#include <optional>

#include "onnxlens/workflows/EngineWorkerProtocol.h"
#include "widgets/workers/EngineProcess.h"

namespace onnxlens::widgets {

namespace {
constexpr std::uint64_t kSweepJob = 1;  // the sweep's number for cancel in its engine process
}  // namespace

// Shared by the GUI thread (cancel) and the sweep's thread (everything else).
struct SweepWorker::Job {
    std::atomic<bool> cancelRequested{false};
    std::mutex mutex;
    EngineProcess* process = nullptr;  // while the sweep's thread runs
    bool compiling = false;            // a compile cannot stop between nodes: the process is ended
    std::function<void()> kill;        // the process's killer()
};

SweepWorker::SweepWorker(QObject* parent) : QObject(parent) {}

SweepWorker::~SweepWorker() {
    if (!thread_) return;
    cancel();
    thread_->wait();
    delete thread_;
}

void SweepWorker::cancel() {
    if (!job_) return;
    job_->cancelRequested.store(true);
    std::lock_guard lock(job_->mutex);
    if (!job_->process) return;
    if (job_->compiling)
        job_->kill();
    else
        job_->process->cancelThrough(kSweepJob);
}

void SweepWorker::finish() {
    if (!thread_) return;
    thread_->wait();  // the thread function has returned: immediate
    delete thread_;
    thread_ = nullptr;
    job_.reset();
}

bool SweepWorker::start(std::shared_ptr<const ModelDocument> document, const Settings& settings) {
    if (thread_ || !document) return false;
    job_ = std::make_shared<Job>();
    auto job = job_;
    thread_ = QThread::create([this, job, document, settings] {
        auto post = [this](auto function) {
            QMetaObject::invokeMethod(this, std::move(function), Qt::QueuedConnection);
        };
        auto fail = [this, &post](const QString& message) {
            post([this, message] {
                finish();
                emit failed(message);
            });
        };
        auto cancelled = [this, &post] {
            post([this] {
                finish();
                emit this->cancelled();
            });
        };
        // The sweep compiles its own session in an engine process of its own: a crash there is
        // an error on the sweep, never a lost window.
        EngineProcess process;
        {
            std::lock_guard lock(job->mutex);
            if (job->cancelRequested) return cancelled();
            job->process = &process;
            job->compiling = true;
            job->kill = process.killer();
        }
        const QString name = QFileInfo(document->path).fileName();
        // The job's end: its process is stopped on this thread, where it was started.
        auto release = [&] {
            std::lock_guard lock(job->mutex);
            job->process = nullptr;
        };
        post([this] { emit phaseChanged(tr("Compiling the model…")); });
        auto compiled = process.request({{"op", "compile"},
                                         {"model", document->path.toStdString()},
                                         {"threads", settings.threads},
                                         {"optimize", true}},
                                        tr("compiling %1 for the sweep").arg(name), QString());
        {
            std::lock_guard lock(job->mutex);
            job->compiling = false;
        }
        if (job->cancelRequested) return release(), cancelled();
        if (!compiled) return release(), fail(QString::fromStdString(compiled.error().message));
        if (!compiled->value("ok", false))
            return release(),
                   fail(QString::fromStdString(compiled->value("error", std::string("failed"))));
        post([this] { emit phaseChanged(tr("Sweeping…")); });
        nlohmann::json axes = nlohmann::json::array();
        for (const auto& axis : settings.axes)
            axes.push_back({{"symbol", axis.symbol}, {"values", axis.values}});
        std::optional<QString> problem;
        auto reply = process.request(
            {{"op", "sweep"},
             {"job", kSweepJob},
             {"warmup", settings.warmupRuns},
             {"runs", settings.runs},
             {"axes", std::move(axes)}},
            tr("sweeping %1").arg(name), tr("Start the sweep again to restart it."),
            [&](const nlohmann::json& message) {
                if (message.contains("sweepProgress")) {
                    const auto& p = message.at("sweepProgress");
                    const int point = p.at(0).get<int>(), points = p.at(1).get<int>();
                    const bool warmingUp = p.at(2).get<bool>();
                    const int done = p.at(3).get<int>(), total = p.at(4).get<int>();
                    post([this, point, points, warmingUp, done, total] {
                        emit progress(point, points, warmingUp, done, total);
                    });
                } else if (message.contains("point")) {
                    auto point = engine::sweepPointFromJson(message.at("point"));
                    if (!point) {
                        problem = QString::fromStdString(point.error().message);
                        return;
                    }
                    post([this, point = std::move(*point)] { emit pointDone(point); });
                }
            });
        release();
        if (job->cancelRequested) return cancelled();
        if (!reply) return fail(QString::fromStdString(reply.error().message));
        if (reply->value("cancelled", false)) return cancelled();
        if (!reply->value("ok", false))
            return fail(QString::fromStdString(reply->value("error", std::string("failed"))));
        if (problem) return fail(*problem);
        post([this] {
            finish();
            emit finished();
        });
    });
    thread_->setObjectName(QStringLiteral("sweep"));
    thread_->start();
    return true;
}

}  // namespace onnxlens::widgets
