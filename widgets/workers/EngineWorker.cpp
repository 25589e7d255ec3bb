#include "widgets/workers/EngineWorker.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPointer>
#include <algorithm>

namespace onnxlens::widgets {

bool CompareOutcome::passed() const {
    for (const auto& o : outputs)
        if (!o.result.passed) return false;
    return !outputs.empty();
}

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {}
EngineWorker::~EngineWorker() = default;

void EngineWorker::cancel() {
    cancelledThrough_.store(submitted_.load());
    control_.cancel.store(true);
    std::lock_guard lock(benchmarkMutex_);
    if (benchmark_) benchmark_->cancel();
}

void EngineWorker::enqueue(EngineJob kind, std::function<void()> job, bool cancellable) {
    const std::uint64_t id = ++submitted_;
    ++pending_;
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, cancellable, job = std::move(job)] {
            job_ = kind;
            // Reset before the check: a cancel() racing with this start either lands in
            // cancelledThrough_ (seen below) or sets the flag after the reset (seen by the run).
            control_.cancel.store(false);
            if (cancellable && id <= cancelledThrough_.load()) {
                emit cancelled(kind);
            } else {
                try {
                    job();
                } catch (const std::exception& e) {
                    emit failed(kind, QString::fromStdString(e.what()));
                }
            }
            emit jobDone(kind);
            if (--pending_ == 0) emit idle();
        },
        Qt::QueuedConnection);
}

void EngineWorker::requestCompile(std::shared_ptr<const ModelDocument> document,
                                  engine::SessionOptions options) {
    enqueue(
        EngineJob::Compile,
        [this, document = std::move(document), options] {
            compileOnWorkerThread(document, options);
        },
        false);
}

void EngineWorker::requestRelease() {
    enqueue(
        EngineJob::Compile,
        [this] {
            session_.reset();
            document_.reset();
        },
        false);
}

void EngineWorker::requestRun(FeedsJob feeds) {
    enqueue(EngineJob::Run, [this, feeds = std::move(feeds)] { runOnWorkerThread(feeds); });
}

void EngineWorker::requestCompare(CompareRequest request) {
    enqueue(EngineJob::Compare,
            [this, request = std::move(request)] { compareOnWorkerThread(request); });
}

void EngineWorker::requestDynamicAxesCheck(engine::DynamicAxesCheckOptions options) {
    enqueue(EngineJob::DynamicAxes,
            [this, options = std::move(options)] { dynamicAxesCheckOnWorkerThread(options); });
}

void EngineWorker::requestBenchmark(BenchmarkSettings settings, BenchmarkFeeds feeds) {
    enqueue(EngineJob::Benchmark, [this, settings, feeds = std::move(feeds)] {
        benchmarkOnWorkerThread(settings, feeds);
    });
}

void EngineWorker::requestOptimizedGraph() {
    enqueue(EngineJob::OptimizedGraph, [this] { optimizedGraphOnWorkerThread(); });
}

QString EngineWorker::compileOnWorkerThread(const std::shared_ptr<const ModelDocument>& document,
                                            engine::SessionOptions options) {
    session_.reset();  // before compiling: never two sessions' weights at once
    document_ = document;
    options_ = options;
    if (!document) return tr("No model is open.");
    emit started(tr("Compiling %1").arg(QFileInfo(document->path).fileName()));
    QElapsedTimer timer;
    timer.start();
    ++sessionsCompiled_;
    auto session = engine::Session::create(document->loaded, options);
    if (!session) {
        const QString message = QString::fromStdString(session.error().message);
        emit compileFailed(document->path, message);
        return message;
    }
    session_ = std::move(*session);
    auto model = std::make_shared<CompiledModel>();
    model->path = document->path;
    model->inputs = session_->inputs();
    model->outputs = session_->outputs();
    model->threads = session_->threads();
    model->optimize = options.optimize;
    model->compileMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    compileMs_ = model->compileMs;
    auto sets = discoverTestDataSets(document->path.toStdString(), *document->loaded.proto);
    if (sets)
        model->dataSets = std::move(*sets);
    else
        model->dataSetProblem = QString::fromStdString(sets.error().message);
    emit compiled(model);
    return {};
}

bool EngineWorker::reportRunErrorOnWorkerThread(const Error& error) {
    if (control_.cancel.load()) {
        emit cancelled(job_);
        return true;
    }
    emit failed(job_, QString::fromStdString(error.message));
    return false;
}

namespace {

OutputView summarizeOutput(std::string name, engine::Value value) {
    OutputView view;
    view.name = std::move(name);
    view.value = std::move(value);
    if (!view.value.isTensor()) return view;
    const engine::Tensor& t = view.value.tensor();
    view.statistics = engine::computeTensorStatistics(t);
    view.histogram = engine::histogramOf(t);
    if (engine::looksLikeLogits(t) && t.dim(0) >= 1) view.top5 = engine::topK(t, 5, 0);
    return view;
}

}  // namespace

void EngineWorker::runOnWorkerThread(const FeedsJob& feeds) {
    if (!session_) {
        emit failed(job_, tr("No model is compiled yet."));
        return;
    }
    emit started(tr("Running"));
    QElapsedTimer timer;
    timer.start();
    PreparedFeeds prepared = feeds();
    auto outcome = std::make_shared<RunOutcome>();
    outcome->prepareMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (!prepared.ok()) {
        emit inputsRejected(
            job_, std::make_shared<const std::map<std::string, std::string>>(prepared.inputErrors));
        return;
    }
    for (const auto& [name, value] : prepared.feeds)
        if (value.isTensor()) outcome->feedShapes[name] = value.tensor().shape();
    timer.restart();
    auto outputs = session_->run(prepared.feeds, &control_);
    if (!outputs) {
        reportRunErrorOnWorkerThread(outputs.error());
        return;
    }
    outcome->runMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    for (std::size_t k = 0; k < outputs->size() && k < session_->outputs().size(); ++k)
        outcome->outputs.push_back(
            summarizeOutput(session_->outputs()[k].name, std::move((*outputs)[k])));
    emit runFinished(outcome);
}

void EngineWorker::compareOnWorkerThread(const CompareRequest& request) {
    if (!session_) {
        emit failed(job_, tr("No model is compiled yet."));
        return;
    }
    emit started(tr("Comparing with %1").arg(request.source));
    Result<std::map<std::string, engine::Value>> feeds = std::map<std::string, engine::Value>{};
    engine::ReferenceFiles references = request.references;
    if (request.dataSet) {
        feeds = engine::feedsFromTestDataSet(*session_, *request.dataSet);
        references = engine::referencesOfTestDataSet(*request.dataSet);
        if (!feeds) {
            emit failed(job_, QString::fromStdString(feeds.error().message));
            return;
        }
    } else {
        PreparedFeeds prepared = request.feeds ? request.feeds() : PreparedFeeds{};
        if (!prepared.ok()) {
            emit inputsRejected(job_, std::make_shared<const std::map<std::string, std::string>>(
                                          prepared.inputErrors));
            return;
        }
        feeds = std::move(prepared.feeds);
    }
    if (references.empty()) {
        emit failed(
            job_, tr("Nothing to compare with: choose a reference file for at least one output."));
        return;
    }
    auto result =
        engine::runAndCompare(*session_, *feeds, references, request.tolerance, &control_);
    if (!result) {
        reportRunErrorOnWorkerThread(result.error());
        return;
    }
    auto outcome = std::make_shared<CompareOutcome>();
    outcome->source = request.source;
    outcome->tolerance = request.tolerance;
    outcome->outputs = std::move(result->outputs);
    outcome->runMs = result->runMs;
    emit compareFinished(outcome);
}

void EngineWorker::dynamicAxesCheckOnWorkerThread(const engine::DynamicAxesCheckOptions& options) {
    if (!session_) {
        emit failed(job_, tr("No model is compiled yet."));
        return;
    }
    emit started(tr("Checking dynamic axes"));
    engine::DynamicAxesCheckOptions withProgress = options;
    withProgress.progress = [this](int step, int steps, const std::string& what) {
        emit progress(QString::fromStdString(what), step, steps);
    };
    auto result = engine::checkDynamicAxes(*session_, withProgress, &control_);
    if (!result) {
        reportRunErrorOnWorkerThread(result.error());
        return;
    }
    emit dynamicAxesFinished(
        std::make_shared<const engine::DynamicAxesCheckResult>(std::move(*result)));
}

void EngineWorker::benchmarkOnWorkerThread(const BenchmarkSettings& settings,
                                           const BenchmarkFeeds& feeds) {
    if (!document_) {
        emit failed(job_, tr("No model is open."));
        return;
    }
    const bool sameSession =
        session_ && options_.threads == settings.threads && options_.optimize == settings.optimize;
    if (!sameSession) {
        engine::SessionOptions options = options_;
        options.threads = settings.threads;
        options.optimize = settings.optimize;
        if (QString problem = compileOnWorkerThread(document_, options); !problem.isEmpty()) {
            emit failed(job_, problem);
            return;
        }
    }
    if (control_.cancel.load()) {
        emit cancelled(job_);
        return;
    }
    emit started(tr("Benchmarking"));
    auto inputs = feeds ? feeds() : engine::prepareSessionFeeds(*session_, {}, {}, 1);
    if (control_.cancel.load()) {
        emit cancelled(job_);
        return;
    }
    if (!inputs) {
        emit failed(job_, tr("Inputs: %1").arg(QString::fromStdString(inputs.error().message)));
        return;
    }
    engine::BenchmarkRunner runner(*session_,
                                   {settings.warmupRuns, settings.runs, settings.profile});
    {
        std::lock_guard lock(benchmarkMutex_);
        if (control_.cancel.load()) {
            emit cancelled(job_);
            return;
        }
        benchmark_ = &runner;
    }
    // A model of a few microseconds per run must not flood the GUI's event loop.
    QElapsedTimer sinceReport;
    runner.setProgressCallback([&](const engine::BenchmarkProgress& p) {
        const bool phaseEnd = p.done == p.total;
        if (!phaseEnd && sinceReport.isValid() && sinceReport.elapsed() < 50) return;
        sinceReport.start();
        emit benchmarkProgress(p.warmingUp, p.done, p.total, p.lastMs);
    });
    auto result = runner.run(*inputs);
    {
        std::lock_guard lock(benchmarkMutex_);
        benchmark_ = nullptr;
    }
    if (runner.isCancelled() || control_.cancel.load()) {
        emit cancelled(job_);
        return;
    }
    if (!result) {
        emit failed(job_, QString::fromStdString(result.error().message));
        return;
    }
    auto shared = std::make_shared<engine::BenchmarkResult>(std::move(result.value()));
    shared->model = document_->path.toStdString();
    shared->loadMs = compileMs_;  // the session's compile, whenever it happened
    emit benchmarkFinished(shared);
}

void EngineWorker::optimizedGraphOnWorkerThread() {
    if (!session_) {
        emit failed(job_, tr("No model is compiled yet."));
        return;
    }
    auto graph = buildOptimizedGraph(*session_, document_->path.toStdString());
    if (!graph) {
        emit failed(job_, QString::fromStdString(graph.error().message));
        return;
    }
    emit optimizedGraphFinished(*graph);
}

namespace {

// Engine threads whose model's tab closed while a job that cannot be interrupted (a compile) was
// still going: they end on their own; the application waits for them as it quits.
std::vector<QPointer<QThread>>& detachedThreads() {
    static std::vector<QPointer<QThread>> threads;
    return threads;
}

void waitForDetachedThreads() {
    for (const auto& thread : detachedThreads()) {
        if (!thread) continue;  // finished and deleted itself already
        thread->wait();
        delete thread.data();
    }
    detachedThreads().clear();
}

}  // namespace

EngineThread::EngineThread() : thread_(new QThread), worker_(new EngineWorker) {
    static const bool registered = [] {
        qAddPostRoutine(waitForDetachedThreads);
        return true;
    }();
    (void)registered;
    thread_->setObjectName(QStringLiteral("onnxlens-engine"));
    worker_->moveToThread(thread_);
    // The worker (and the session it owns) is deleted on its own thread as the thread ends.
    QObject::connect(thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_->start();
}

EngineThread::~EngineThread() {
    worker_->cancel();
    thread_->quit();
    // Runs and benchmarks stop between two nodes, but a compile goes on to its end: closing a
    // tab while its model compiles must not freeze the window, so that thread is left to finish
    // and delete itself.
    if (thread_->wait(200)) {
        delete thread_;
        return;
    }
    QObject::connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
    detachedThreads().erase(
        std::remove(detachedThreads().begin(), detachedThreads().end(), nullptr),
        detachedThreads().end());
    detachedThreads().emplace_back(thread_);
}

}  // namespace onnxlens::widgets
