#include "widgets/workers/SweepWorker.h"

#include <QThread>
#include <atomic>
#include <chrono>
#include <mutex>

#include "onnxlens/engine/Session.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::widgets {

// Shared by the GUI thread (cancel) and the worker thread (everything else).
struct SweepWorker::Job {
    std::atomic<bool> cancelRequested{false};
    std::mutex mutex;
    engine::SweepRunner* runner = nullptr;  // while the sweep runs
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
    if (job_->runner) job_->runner->cancel();
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
        post([this] { emit phaseChanged(tr("Compiling the model…")); });
        engine::SessionOptions options;
        options.threads = settings.threads;
        auto session = engine::Session::create(document->loaded, options);
        if (job->cancelRequested) return cancelled();
        if (!session) return fail(QString::fromStdString(session.error().message));
        if (auto unknown = engine::unknownSweepSymbol((*session)->inputs(), settings.axes);
            !unknown.empty())
            return fail(QString::fromStdString(unknown));
        engine::SweepRunner runner(**session, settings.warmupRuns, settings.runs);
        {
            std::lock_guard lock(job->mutex);
            if (job->cancelRequested) return cancelled();
            job->runner = &runner;
        }
        auto lastReport = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        runner.setProgressCallback([&](const engine::SweepProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            if (p.run.done != p.run.total && now - lastReport < std::chrono::milliseconds(50))
                return;
            lastReport = now;
            post([this, p] {
                emit progress(p.point, p.points, p.run.warmingUp, p.run.done, p.run.total);
            });
        });
        runner.setPointCallback([&](const engine::SweepPoint& point) {
            post([this, point] { emit pointDone(point); });
        });
        post([this] { emit phaseChanged(tr("Sweeping…")); });
        const engine::Session& compiled = **session;
        auto points = runner.run(engine::sweepCombinations(settings.axes),
                                 [&compiled](const engine::SymbolBindings& dims) {
                                     return engine::prepareSessionFeeds(compiled, {}, dims, 1);
                                 });
        {
            std::lock_guard lock(job->mutex);
            job->runner = nullptr;
        }
        if (runner.isCancelled() || job->cancelRequested) return cancelled();
        if (!points) return fail(QString::fromStdString(points.error().message));
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
