#include "widgets/workers/BenchmarkWorker.h"

#include <QThread>
#include <atomic>
#include <chrono>
#include <mutex>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Value.h"
#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::widgets {

// Shared by the GUI thread (cancel) and the worker thread (everything else).
struct BenchmarkWorker::Job {
    std::atomic<bool> cancelRequested{false};
    std::mutex mutex;
    engine::BenchmarkRunner* runner = nullptr;  // while the counted part runs
};

BenchmarkWorker::BenchmarkWorker(QObject* parent) : QObject(parent) {}

BenchmarkWorker::~BenchmarkWorker() {
    if (!thread_) return;
    cancel();
    thread_->wait();
    delete thread_;
}

Result<std::map<std::string, engine::Value>> BenchmarkWorker::randomFeeds(
    const engine::Session& session) {
    return engine::prepareSessionFeeds(session, {}, {}, 1);
}

void BenchmarkWorker::cancel() {
    if (!job_) return;
    job_->cancelRequested.store(true);
    std::lock_guard lock(job_->mutex);
    if (job_->runner) job_->runner->cancel();
}

void BenchmarkWorker::finish() {
    if (!thread_) return;
    thread_->wait();  // the thread function has returned: this is immediate
    delete thread_;
    thread_ = nullptr;
    job_.reset();
}

bool BenchmarkWorker::start(std::shared_ptr<const ModelDocument> document, const Settings& settings,
                            FeedsProvider feeds) {
    if (thread_ || !document) return false;
    job_ = std::make_shared<Job>();
    auto job = job_;
    // Everything below the lambda's first line runs on the worker thread; results come back
    // through queued calls on this object (dropped if it is gone, which ~BenchmarkWorker prevents
    // by waiting).
    thread_ = QThread::create([this, job, document, settings, feeds = std::move(feeds)] {
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
        const auto loadStart = std::chrono::steady_clock::now();
        engine::SessionOptions options;
        options.threads = settings.threads;
        options.optimize = settings.optimize;
        auto session = engine::Session::create(document->loaded, options);
        const double loadMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - loadStart)
                .count();
        if (job->cancelRequested) return cancelled();
        if (!session) return fail(QString::fromStdString(session.error().message));
        auto inputs = feeds ? feeds() : randomFeeds(**session);
        if (job->cancelRequested) return cancelled();
        if (!inputs)
            return fail(tr("Inputs: %1").arg(QString::fromStdString(inputs.error().message)));

        engine::BenchmarkRunner runner(**session,
                                       {settings.warmupRuns, settings.runs, settings.profile});
        {
            std::lock_guard lock(job->mutex);
            if (job->cancelRequested) return cancelled();
            job->runner = &runner;
        }
        auto lastReport = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        bool warming = settings.warmupRuns > 0;
        post([this, warming] { emit phaseChanged(warming ? tr("Warming up…") : tr("Running…")); });
        runner.setProgressCallback([&](const engine::BenchmarkProgress& p) {
            const auto now = std::chrono::steady_clock::now();
            const bool phaseEnd = p.done == p.total;
            if (!phaseEnd && now - lastReport < std::chrono::milliseconds(50)) return;
            lastReport = now;
            post([this, p] { emit progress(p.warmingUp, p.done, p.total, p.lastMs); });
            if (p.warmingUp && phaseEnd) post([this] { emit phaseChanged(tr("Running…")); });
        });
        auto result = runner.run(*inputs);
        {
            std::lock_guard lock(job->mutex);
            job->runner = nullptr;
        }
        if (runner.isCancelled() || job->cancelRequested) return cancelled();
        if (!result) return fail(QString::fromStdString(result.error().message));
        auto shared = std::make_shared<engine::BenchmarkResult>(std::move(result.value()));
        shared->model = document->path.toStdString();
        shared->loadMs = loadMs;
        post([this, shared] {
            finish();
            emit finished(shared);
        });
    });
    thread_->setObjectName(QStringLiteral("benchmark"));
    thread_->start();
    return true;
}

}  // namespace onnxlens::widgets
