#include "widgets/workers/ModelController.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "onnxlens/engine/OpsetSupport.h"
#include "onnxlens/model/NewerOpsets.h"
#include "onnxlens/workflows/InputPreparation.h"

namespace onnxlens::widgets {

ModelController::ModelController(std::shared_ptr<const ModelDocument> document, QObject* parent)
    : QObject(parent), document_(std::move(document)), engine_(std::make_unique<EngineThread>()) {
    cost_ = document_ ? costOfDocument(*document_) : std::make_shared<const CostAtDims>();
    if (document_ && document_->loaded.proto)
        if (auto problem =
                engine::newerOpsetProblem(*document_->loaded.proto, onnxLibraryOpset(),
                                          QFileInfo(document_->path).fileName().toStdString()))
            newerOpset_ = QString::fromStdString(*problem) +
                          tr("; its operators may have changed in ways the engine does not "
                             "implement.");
    connectWorker();
}

ModelController::~ModelController() = default;

int ModelController::sessionsCompiled() const { return engine_->worker()->sessionsCompiled(); }

void ModelController::connectWorker() {
    EngineWorker* worker = engine_->worker();
    connect(worker, &EngineWorker::started, this, [this](const QString& what) {
        busyWhat_ = what;
        emit started(what);
    });
    connect(worker, &EngineWorker::progress, this,
            [this](const QString& what, int step, int steps) { emit progress(what, step, steps); });
    connect(worker, &EngineWorker::compiled, this,
            [this](std::shared_ptr<const CompiledModel> model) {
                // A folder the user added stays listed when a benchmark recompiles.
                if (compiled_ && compiled_->dataSets.size() > model->dataSets.size()) {
                    auto copy = std::make_shared<CompiledModel>(*model);
                    copy->dataSets = compiled_->dataSets;
                    model = copy;
                }
                compiled_ = std::move(model);
                compileError_.clear();
                compiling_ = false;
                emit compiled();
            });
    connect(worker, &EngineWorker::compileFailed, this,
            [this](const QString&, const QString& message) {
                compiled_.reset();
                compileError_ = message;
                compiling_ = false;
                emit compileFailed(message);
            });
    connect(worker, &EngineWorker::runFinished, this,
            [this](std::shared_ptr<const RunOutcome> outcome) {
                lastRun_ = std::move(outcome);
                emit runFinished();
                if (compiled_)
                    countCostAt(engine::bindingsOfShapes(compiled_->inputs, lastRun_->feedShapes),
                                tr("the last run's inputs"));
            });
    connect(worker, &EngineWorker::compareFinished, this,
            [this](std::shared_ptr<const CompareOutcome> outcome) {
                lastComparison_ = std::move(outcome);
                emit compareFinished();
            });
    connect(worker, &EngineWorker::dynamicAxesFinished, this,
            [this](std::shared_ptr<const engine::DynamicAxesCheckResult> result) {
                lastDynamicAxes_ = std::move(result);
                emit dynamicAxesFinished();
            });
    connect(worker, &EngineWorker::benchmarkProgress, this, &ModelController::benchmarkProgress);
    connect(worker, &EngineWorker::benchmarkFinished, this,
            [this](std::shared_ptr<const engine::BenchmarkResult> result) {
                lastBenchmark_ = std::move(result);
                emit benchmarkFinished();
                countCostAt({lastBenchmark_->dims.begin(), lastBenchmark_->dims.end()},
                            tr("the last benchmark's inputs"));
            });
    connect(worker, &EngineWorker::optimizedGraphFinished, this,
            [this](std::shared_ptr<const OptimizedGraph> graph) {
                optimized_ = std::move(graph);
                emit optimizedGraphReady();
            });
    connect(worker, &EngineWorker::decodeStep, this, &ModelController::decodeStep);
    connect(worker, &EngineWorker::decodeFinished, this,
            [this](std::shared_ptr<const DecodeOutcome> outcome) {
                lastDecode_ = std::move(outcome);
                emit decodeFinished();
            });
    connect(worker, &EngineWorker::inputsRejected, this, &ModelController::inputsRejected);
    connect(worker, &EngineWorker::failed, this, &ModelController::failed);
    connect(worker, &EngineWorker::cancelled, this, &ModelController::cancelled);
    connect(worker, &EngineWorker::jobDone, this, &ModelController::finishedJob);
}

void ModelController::queued(EngineJob job) {
    ++queuedJobs_[job];
    if (!busy_) {
        busy_ = true;
        emit busyChanged(true);
    }
}

void ModelController::finishedJob(EngineJob job) {
    if (auto it = queuedJobs_.find(job); it != queuedJobs_.end() && --it->second == 0)
        queuedJobs_.erase(it);
    if (job == EngineJob::Compile) compiling_ = false;
    if (queuedJobs_.empty() && busy_) {
        busy_ = false;
        busyWhat_.clear();
        emit busyChanged(false);
    }
}

QString ModelController::unavailableReason() const {
    if (compiled_) return {};
    const QString file = document_ ? QFileInfo(document_->path).fileName() : QString();
    if (compileError_.isEmpty()) return tr("%1 is being compiled for the engine…").arg(file);
    return compileError_.startsWith(file) ? compileError_ : tr("%1: %2").arg(file, compileError_);
}

bool ModelController::isRunning(EngineJob job) const { return queuedJobs_.count(job) > 0; }

void ModelController::compile() {
    if (compileRequested_ || !document_) return;
    if (!newerOpset_.isEmpty() && !newerOpsetAllowed_) {
        if (compileError_ != newerOpset_) {
            compileError_ = newerOpset_;
            emit compileFailed(compileError_);
        }
        return;
    }
    compileRequested_ = true;
    compiling_ = true;
    queued(EngineJob::Compile);
    engine_->worker()->requestCompile(document_);
}

void ModelController::allowNewerOpset() {
    if (newerOpset_.isEmpty() || newerOpsetAllowed_) return;
    newerOpsetAllowed_ = true;
    compileError_.clear();
    compile();
}

bool ModelController::refuse(EngineJob job) {
    if (compiled_ || compileError_.isEmpty() || compiling_) return false;
    emit failed(job, compileError_);
    return true;
}

void ModelController::addDataSet(TestDataSet set) {
    if (!compiled_) return;
    auto model = std::make_shared<CompiledModel>(*compiled_);
    model->dataSets.push_back(std::move(set));
    compiled_ = std::move(model);
    emit dataSetsChanged();
}

void ModelController::setInputChoices(InputChoices choices) { choices_ = std::move(choices); }

void ModelController::run() {
    compile();
    if (refuse(EngineJob::Run)) return;
    queued(EngineJob::Run);
    engine_->worker()->requestRun(
        [choices = choices_.value_or(InputChoices{})] { return prepareInputFeeds(choices); });
}

void ModelController::compare(CompareRequest request) {
    compile();
    if (refuse(EngineJob::Compare)) return;
    queued(EngineJob::Compare);
    engine_->worker()->requestCompare(std::move(request));
}

void ModelController::checkDynamicAxes(engine::DynamicAxesCheckOptions options) {
    compile();
    if (refuse(EngineJob::DynamicAxes)) return;
    queued(EngineJob::DynamicAxes);
    engine_->worker()->requestDynamicAxesCheck(std::move(options));
}

void ModelController::benchmark(const BenchmarkSettings& settings, BenchmarkFeeds feeds) {
    compile();
    if (refuse(EngineJob::Benchmark)) return;
    if (!feeds && choices_)
        feeds = [choices = *choices_]() -> Result<std::map<std::string, engine::Value>> {
            PreparedFeeds prepared = prepareInputFeeds(choices);
            if (!prepared.ok()) return prepared.combinedError();
            return std::move(prepared.feeds);
        };
    queued(EngineJob::Benchmark);
    engine_->worker()->requestBenchmark(settings, std::move(feeds));
}

void ModelController::buildOptimizedGraph() {
    if (optimized_) {
        emit optimizedGraphReady();
        return;
    }
    if (isRunning(EngineJob::OptimizedGraph)) return;
    compile();
    if (refuse(EngineJob::OptimizedGraph)) return;
    queued(EngineJob::OptimizedGraph);
    engine_->worker()->requestOptimizedGraph();
}

void ModelController::decode(DecodeSettings settings) {
    compile();
    if (refuse(EngineJob::Decode)) return;
    queued(EngineJob::Decode);
    engine_->worker()->requestDecode(std::move(settings));
}

void ModelController::cancel() {
    if (busy_) engine_->worker()->cancel();
}

void ModelController::countCostAt(const std::map<std::string, std::int64_t>& dims,
                                  const QString& source) {
    if (!document_ || !document_->loaded.proto) return;
    // The count binds every symbolic dim (1 when not given): compare what it would bind.
    auto bound = [this](const std::map<std::string, std::int64_t>& given) {
        std::map<std::string, std::int64_t> all =
            cost_->cost ? cost_->cost->dims : std::map<std::string, std::int64_t>{};
        for (auto& [symbol, value] : all) value = 1;
        for (const auto& [symbol, value] : given) all[symbol] = value;
        return all;
    };
    const auto wanted = bound(dims);
    if (countingDims_ ? *countingDims_ == wanted : cost_->cost && cost_->cost->dims == wanted) {
        if (!countingDims_ && cost_->source != source) {  // the same count, now from a run
            auto relabelled = std::make_shared<CostAtDims>(*cost_);
            relabelled->source = source;
            cost_ = std::move(relabelled);
            emit costChanged();
        }
        return;
    }
    countingDims_ = wanted;
    using Counted = std::shared_ptr<const CostAtDims>;
    auto* watcher = new QFutureWatcher<Counted>(this);
    connect(watcher, &QFutureWatcher<Counted>::finished, this, [this, watcher, wanted] {
        watcher->deleteLater();
        if (!countingDims_ || *countingDims_ != wanted) return;  // a later count replaced it
        countingDims_.reset();
        cost_ = watcher->result();
        emit costChanged();
    });
    watcher->setFuture(QtConcurrent::run(
        [document = document_, dims, source] { return countCostAtDims(*document, dims, source); }));
}

}  // namespace onnxlens::widgets
