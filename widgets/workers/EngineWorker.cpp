#include "widgets/workers/EngineWorker.h"

#include <QElapsedTimer>
#include <QFileInfo>

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
}

void EngineWorker::enqueue(std::function<void()> job, bool cancellable) {
    const std::uint64_t id = ++submitted_;
    ++pending_;
    QMetaObject::invokeMethod(
        this,
        [this, id, cancellable, job = std::move(job)] {
            // Reset before the check: a cancel() racing with this start either lands in
            // cancelledThrough_ (seen below) or sets the flag after the reset (seen by the run).
            control_.cancel.store(false);
            if (cancellable && id <= cancelledThrough_.load()) {
                emit cancelled();
            } else {
                try {
                    job();
                } catch (const std::exception& e) {
                    emit failed(QString::fromStdString(e.what()));
                }
            }
            if (--pending_ == 0) emit idle();
        },
        Qt::QueuedConnection);
}

void EngineWorker::requestCompile(std::shared_ptr<const ModelDocument> document,
                                  engine::SessionOptions options) {
    enqueue([this, document = std::move(document),
             options] { compileOnWorkerThread(document, options); },
            false);
}

void EngineWorker::requestRelease() {
    enqueue(
        [this] {
            session_.reset();
            document_.reset();
        },
        false);
}

void EngineWorker::requestRun(FeedsJob feeds) {
    enqueue([this, feeds = std::move(feeds)] { runOnWorkerThread(feeds); });
}

void EngineWorker::requestCompare(CompareRequest request) {
    enqueue([this, request = std::move(request)] { compareOnWorkerThread(request); });
}

void EngineWorker::requestDynamicAxesCheck(engine::DynamicAxesCheckOptions options) {
    enqueue([this, options = std::move(options)] { dynamicAxesCheckOnWorkerThread(options); });
}

void EngineWorker::compileOnWorkerThread(const std::shared_ptr<const ModelDocument>& document,
                                         engine::SessionOptions options) {
    session_.reset();
    document_ = document;
    if (!document) return;
    emit started(tr("Compiling %1").arg(QFileInfo(document->path).fileName()));
    QElapsedTimer timer;
    timer.start();
    auto session = engine::Session::create(document->loaded, options);
    if (!session) {
        emit compileFailed(document->path, QString::fromStdString(session.error().message));
        return;
    }
    session_ = std::move(*session);
    auto model = std::make_shared<CompiledModel>();
    model->path = document->path;
    model->inputs = session_->inputs();
    model->outputs = session_->outputs();
    model->threads = session_->threads();
    model->compileMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    auto sets = discoverTestDataSets(document->path.toStdString(), *document->loaded.proto);
    if (sets)
        model->dataSets = std::move(*sets);
    else
        model->dataSetProblem = QString::fromStdString(sets.error().message);
    emit compiled(model);
}

bool EngineWorker::reportRunErrorOnWorkerThread(const Error& error) {
    if (control_.cancel.load()) {
        emit cancelled();
        return true;
    }
    emit failed(QString::fromStdString(error.message));
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
        emit failed(tr("No model is compiled yet."));
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
            std::make_shared<const std::map<std::string, std::string>>(prepared.inputErrors));
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
        emit failed(tr("No model is compiled yet."));
        return;
    }
    emit started(tr("Comparing with %1").arg(request.source));
    Result<std::map<std::string, engine::Value>> feeds = std::map<std::string, engine::Value>{};
    engine::ReferenceFiles references = request.references;
    if (request.dataSet) {
        feeds = engine::feedsFromTestDataSet(*session_, *request.dataSet);
        references = engine::referencesOfTestDataSet(*request.dataSet);
        if (!feeds) {
            emit failed(QString::fromStdString(feeds.error().message));
            return;
        }
    } else {
        PreparedFeeds prepared = request.feeds ? request.feeds() : PreparedFeeds{};
        if (!prepared.ok()) {
            emit inputsRejected(
                std::make_shared<const std::map<std::string, std::string>>(prepared.inputErrors));
            return;
        }
        feeds = std::move(prepared.feeds);
    }
    if (references.empty()) {
        emit failed(
            tr("Nothing to compare with: choose a reference file for at least one output."));
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
        emit failed(tr("No model is compiled yet."));
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

EngineThread::EngineThread() : worker_(new EngineWorker) {
    thread_.setObjectName(QStringLiteral("onnxlens-engine"));
    worker_->moveToThread(&thread_);
    // The worker (and the session it owns) is deleted on its own thread as the thread ends.
    QObject::connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_.start();
}

EngineThread::~EngineThread() {
    worker_->cancel();
    thread_.quit();
    thread_.wait();
}

}  // namespace onnxlens::widgets
