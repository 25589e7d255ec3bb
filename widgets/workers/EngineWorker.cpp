#include "widgets/workers/EngineWorker.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/EngineWorkerProtocol.h"

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
    process_.cancelThrough(cancelledThrough_.load());
}

void EngineWorker::enqueue(EngineJob kind, std::function<void()> job, bool cancellable) {
    const std::uint64_t id = ++submitted_;
    ++pending_;
    QMetaObject::invokeMethod(
        this,
        [this, id, kind, cancellable, job = std::move(job)] {
            job_ = kind;
            // Requests of a job that cannot be cancelled carry no number: a cancel never reaches
            // them in the engine process.
            jobNumber_ = cancellable ? id : 0;
            // Reset before the check: a cancel() racing with this start either lands in
            // cancelledThrough_ (seen below, and by the engine process through the number) or
            // sets the flag after the reset.
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

void EngineWorker::requestDecode(DecodeSettings settings) {
    enqueue(EngineJob::Decode,
            [this, settings = std::move(settings)] { decodeOnWorkerThread(settings); });
}

void EngineWorker::requestOptimizedGraph() {
    enqueue(EngineJob::OptimizedGraph, [this] { optimizedGraphOnWorkerThread(); });
}

QString EngineWorker::modelFileName() const {
    return document_ ? QFileInfo(document_->path).fileName() : QString();
}

std::optional<nlohmann::json> EngineWorker::askEngine(
    nlohmann::json request, const QString& doing, const EngineProcess::MessageHandler& onMessage) {
    if (jobNumber_ != 0) request["job"] = jobNumber_;
    const QString what = doing + QLatin1Char(' ') + modelFileName();
    auto reply = process_.request(request, what, tr("Run again restarts it."), onMessage);
    if (!reply) {
        // The process is gone: the next job compiles the model in a new one.
        sessionCompiled_ = false;
        if (control_.cancel.load())
            emit cancelled(job_);
        else
            emit failed(job_, QString::fromStdString(reply.error().message));
        return std::nullopt;
    }
    if (reply->value("ok", false)) {
        // A cancel that raced with the job's start: the job ran to its end, its result is
        // not wanted.
        if (control_.cancel.load()) {
            emit cancelled(job_);
            return std::nullopt;
        }
        return std::move(*reply);
    }
    if (reply->value("cancelled", false) || control_.cancel.load())
        emit cancelled(job_);
    else
        emit failed(job_, QString::fromStdString(reply->value("error", std::string("failed"))));
    return std::nullopt;
}

QString EngineWorker::compileOnWorkerThread(const std::shared_ptr<const ModelDocument>& document,
                                            engine::SessionOptions options) {
    sessionCompiled_ = false;
    document_ = document;
    options_ = options;
    if (!document) return tr("No model is open.");
    emit started(tr("Compiling %1").arg(modelFileName()));
    ++sessionsCompiled_;
    const nlohmann::json request = {{"op", "compile"},
                                    {"model", document->path.toStdString()},
                                    {"threads", options.threads},
                                    {"optimize", options.optimize}};
    auto reply =
        process_.request(request, tr("compiling") + QLatin1Char(' ') + modelFileName(), QString());
    QString problem;
    std::vector<engine::Session::IoInfo> inputs, outputs;
    if (!reply) {
        problem = QString::fromStdString(reply.error().message);
    } else if (!reply->value("ok", false)) {
        problem = QString::fromStdString(reply->value("error", std::string("failed")));
    } else {
        auto in = engine::ioInfosFromJson(reply->value("inputs", nlohmann::json::array()));
        auto out = engine::ioInfosFromJson(reply->value("outputs", nlohmann::json::array()));
        if (!in || !out)
            problem = QString::fromStdString((!in ? in.error() : out.error()).message);
        else {
            inputs = std::move(*in);
            outputs = std::move(*out);
        }
    }
    if (!problem.isEmpty()) {
        emit compileFailed(document->path, problem);
        return problem;
    }
    inputs_ = std::move(inputs);
    outputs_ = std::move(outputs);
    sessionCompiled_ = true;
    auto model = std::make_shared<CompiledModel>();
    model->path = document->path;
    model->inputs = inputs_;
    model->outputs = outputs_;
    model->threads = reply->value("threads", 0);
    compiledThreads_ = model->threads;
    model->optimize = options.optimize;
    model->compileMs = reply->value("compileMs", 0.0);
    compileMs_ = model->compileMs;
    auto sets = discoverTestDataSets(document->path.toStdString(), *document->loaded.proto);
    if (sets)
        model->dataSets = std::move(*sets);
    else
        model->dataSetProblem = QString::fromStdString(sets.error().message);
    emit compiled(model);
    return {};
}

bool EngineWorker::ensureSessionOnWorkerThread() {
    if (sessionCompiled_ && process_.isRunning()) return true;
    if (!document_) {
        emit failed(job_, tr("No model is compiled yet."));
        return false;
    }
    if (QString problem = compileOnWorkerThread(document_, options_); !problem.isEmpty()) {
        emit failed(job_, problem);
        return false;
    }
    return true;
}

Result<nlohmann::json> EngineWorker::writeFeedFiles(
    const std::map<std::string, engine::Value>& feeds, const QString& prefix) {
    QString problem;
    const QString folder = process_.workFolder(&problem);
    if (folder.isEmpty()) return Error{problem.toStdString()};
    nlohmann::json list = nlohmann::json::array();
    int k = 0;
    for (const auto& [name, value] : feeds) {
        const onnx::TypeProto* type = nullptr;
        for (const auto& input : inputs_)
            if (input.name == name) type = &input.type;
        const std::string file =
            QStringLiteral("%1/%2_%3.pb").arg(folder, prefix).arg(k++).toStdString();
        if (auto st = engine::writeValuePbFile(file, value, name, type); !st) return st.error();
        list.push_back({{"name", name}, {"file", file}});
    }
    return list;
}

std::optional<nlohmann::json> EngineWorker::writeFeedsOnWorkerThread(
    const std::map<std::string, engine::Value>& feeds, const QString& prefix) {
    auto files = writeFeedFiles(feeds, prefix);
    if (!files) {
        emit failed(job_, QString::fromStdString(files.error().message));
        return std::nullopt;
    }
    return std::move(*files);
}

std::optional<EngineWorker::EngineRun> EngineWorker::runInEngineOnWorkerThread(
    const std::map<std::string, engine::Value>& feeds, const QString& doing) {
    auto files = writeFeedsOnWorkerThread(feeds, QStringLiteral("feed"));
    if (!files) return std::nullopt;
    auto reply = askEngine(
        {{"op", "run"}, {"feeds", *files}, {"outDir", process_.workFolder(nullptr).toStdString()}},
        doing);
    for (const auto& entry : *files) std::remove(entry.at("file").get<std::string>().c_str());
    if (!reply) return std::nullopt;
    EngineRun run;
    run.runMs = reply->value("runMs", 0.0);
    const auto outputs = reply->value("outputs", nlohmann::json::array());
    std::optional<Error> problem;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        const std::string file = outputs[k].get<std::string>();
        if (!problem) {
            auto value =
                engine::readValueFile(file, k < outputs_.size() ? &outputs_[k].type : nullptr);
            if (value)
                run.outputs.push_back(std::move(*value));
            else
                problem = value.error();
        }
        std::remove(file.c_str());
    }
    if (problem) {
        emit failed(job_, QString::fromStdString(problem->message));
        return std::nullopt;
    }
    return run;
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
    if (!ensureSessionOnWorkerThread()) return;
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
    auto run = runInEngineOnWorkerThread(prepared.feeds, tr("running"));
    if (!run) return;
    outcome->runMs = run->runMs;
    for (std::size_t k = 0; k < run->outputs.size() && k < outputs_.size(); ++k)
        outcome->outputs.push_back(summarizeOutput(outputs_[k].name, std::move(run->outputs[k])));
    emit runFinished(outcome);
}

void EngineWorker::compareOnWorkerThread(const CompareRequest& request) {
    if (!ensureSessionOnWorkerThread()) return;
    emit started(tr("Comparing with %1").arg(request.source));
    Result<std::map<std::string, engine::Value>> feeds = std::map<std::string, engine::Value>{};
    engine::ReferenceFiles references = request.references;
    if (request.dataSet) {
        feeds = engine::feedsFromTestDataSet(inputs_, *request.dataSet);
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
    // As engine::runAndCompare: the run in the engine process, the comparison here.
    auto run = runInEngineOnWorkerThread(*feeds, tr("comparing"));
    if (!run) return;
    auto comparisons =
        engine::compareWithReferences(outputs_, run->outputs, references, request.tolerance);
    if (!comparisons) {
        emit failed(job_, QString::fromStdString(comparisons.error().message));
        return;
    }
    auto outcome = std::make_shared<CompareOutcome>();
    outcome->source = request.source;
    outcome->tolerance = request.tolerance;
    outcome->outputs = std::move(*comparisons);
    outcome->runMs = run->runMs;
    emit compareFinished(outcome);
}

void EngineWorker::dynamicAxesCheckOnWorkerThread(const engine::DynamicAxesCheckOptions& options) {
    if (!ensureSessionOnWorkerThread()) return;
    emit started(tr("Checking dynamic axes"));
    int feedRound = 0;
    auto onMessage = [&](const nlohmann::json& message) {
        if (message.contains("step")) {
            const auto& step = message.at("step");
            emit progress(QString::fromStdString(step.at(2).get<std::string>()),
                          step.at(0).get<int>(), step.at(1).get<int>());
        } else if (message.contains("feedsFor")) {
            // The check's runs take their feeds from the Run dock's choices, made here.
            auto feeds = options.makeFeeds(message.at("feedsFor").get<engine::SymbolBindings>());
            if (!feeds) {
                process_.answer({{"error", feeds.error().message}});
                return;
            }
            auto files = writeFeedFiles(*feeds, QStringLiteral("axes%1").arg(feedRound));
            if (!files) {
                process_.answer({{"error", files.error().message}});
                return;
            }
            ++feedRound;
            process_.answer({{"feeds", std::move(*files)}});
        }
    };
    auto reply = askEngine({{"op", "dynamicAxes"},
                            {"options", engine::dynamicAxesOptionsToJson(options)},
                            {"windowFeeds", static_cast<bool>(options.makeFeeds)}},
                           tr("checking the dynamic axes of"), onMessage);
    if (!process_.workFolder(nullptr).isEmpty())
        for (const QString& file :
             QDir(process_.workFolder(nullptr)).entryList({QStringLiteral("axes*.pb")}))
            QFile::remove(process_.workFolder(nullptr) + QLatin1Char('/') + file);
    if (!reply) return;
    auto result = engine::dynamicAxesResultFromJson(reply->value("result", nlohmann::json{}));
    if (!result) {
        emit failed(job_, QString::fromStdString(result.error().message));
        return;
    }
    emit dynamicAxesFinished(
        std::make_shared<const engine::DynamicAxesCheckResult>(std::move(*result)));
}

bool EngineWorker::ensureSessionWithOnWorkerThread(int threads, bool optimize) {
    if (!document_) {
        emit failed(job_, tr("No model is open."));
        return false;
    }
    const bool sameSession = sessionCompiled_ && process_.isRunning() &&
                             options_.threads == threads && options_.optimize == optimize;
    if (sameSession) return true;
    engine::SessionOptions options = options_;
    options.threads = threads;
    options.optimize = optimize;
    if (QString problem = compileOnWorkerThread(document_, options); !problem.isEmpty()) {
        emit failed(job_, problem);
        return false;
    }
    return true;
}

void EngineWorker::benchmarkOnWorkerThread(const BenchmarkSettings& settings,
                                           const BenchmarkFeeds& feeds) {
    if (!ensureSessionWithOnWorkerThread(settings.threads, settings.optimize)) return;
    if (control_.cancel.load()) {
        emit cancelled(job_);
        return;
    }
    emit started(tr("Benchmarking"));
    nlohmann::json request = {{"op", "benchmark"},
                              {"warmup", settings.warmupRuns},
                              {"runs", settings.runs},
                              {"profile", settings.profile}};
    // Without feeds the engine process makes seeded random data, every symbolic dim 1.
    nlohmann::json feedFiles = nlohmann::json::array();
    if (feeds) {
        auto inputs = feeds();
        if (control_.cancel.load()) {
            emit cancelled(job_);
            return;
        }
        if (!inputs) {
            emit failed(job_, tr("Inputs: %1").arg(QString::fromStdString(inputs.error().message)));
            return;
        }
        auto files = writeFeedsOnWorkerThread(*inputs, QStringLiteral("bench"));
        if (!files) return;
        feedFiles = std::move(*files);
        request["feeds"] = feedFiles;
    }
    auto reply = askEngine(std::move(request), tr("benchmarking"), [&](const nlohmann::json& m) {
        if (!m.contains("progress")) return;
        const auto& p = m.at("progress");
        emit benchmarkProgress(p.at(0).get<bool>(), p.at(1).get<int>(), p.at(2).get<int>(),
                               p.at(3).get<double>());
    });
    for (const auto& entry : feedFiles) std::remove(entry.at("file").get<std::string>().c_str());
    if (!reply) return;
    auto result =
        engine::benchmarkFromMeasurementsJson(reply->value("benchmark", nlohmann::json{}));
    if (!result) {
        emit failed(job_, QString::fromStdString(result.error().message));
        return;
    }
    auto shared = std::make_shared<engine::BenchmarkResult>(std::move(result.value()));
    shared->model = document_->path.toStdString();
    shared->loadMs = compileMs_;  // the session's compile, whenever it happened
    emit benchmarkFinished(shared);
}

void EngineWorker::decodeOnWorkerThread(const DecodeSettings& settings) {
    // The decode runs on the session as compiled (optimized or not), with the tab's threads.
    if (!ensureSessionWithOnWorkerThread(settings.threads, document_ ? options_.optimize : true))
        return;
    if (control_.cancel.load()) {
        emit cancelled(job_);
        return;
    }
    emit started(tr("Decoding"));
    const nlohmann::json request = {
        {"op", "decode"},
        {"promptIds", settings.promptIds},
        {"newTokens", settings.newTokens},
        {"indexRanges", engine::valueRangesToJson(settings.indexRanges)}};
    auto reply = askEngine(request, tr("decoding with"), [&](const nlohmann::json& m) {
        if (!m.contains("decodeStep")) return;
        auto step = engine::decodeStepFromJson(m.at("decodeStep"));
        if (step) emit decodeStep(step->index, step->context, step->token, step->ms);
    });
    if (!reply) return;
    auto result = engine::decodeFromMeasurementsJson(reply->value("decode", nlohmann::json{}));
    if (!result) {
        emit failed(job_, QString::fromStdString(result.error().message));
        return;
    }
    auto outcome = std::make_shared<DecodeOutcome>();
    outcome->result = std::move(*result);
    outcome->threads = compiledThreads_;
    emit decodeFinished(outcome);
}

void EngineWorker::optimizedGraphOnWorkerThread() {
    if (!ensureSessionOnWorkerThread()) return;
    QString problem;
    const QString folder = process_.workFolder(&problem);
    if (folder.isEmpty()) {
        emit failed(job_, problem);
        return;
    }
    const std::string file = (folder + QStringLiteral("/optimized.onnx")).toStdString();
    auto reply =
        askEngine({{"op", "optimizedGraph"}, {"file", file}}, tr("writing the optimized graph of"));
    if (!reply) return;
    auto model = std::make_shared<onnx::ModelProto>();
    {
        std::ifstream in(file, std::ios::binary);
        const bool parsed = in && model->ParseFromIstream(&in);
        std::remove(file.c_str());
        if (!parsed) {
            emit failed(job_, tr("%1: the engine process wrote no readable optimized model")
                                  .arg(QString::fromStdString(file)));
            return;
        }
    }
    auto report = engine::optimizationReportFromJson(reply->value("report", nlohmann::json{}));
    if (!report) {
        emit failed(job_, QString::fromStdString(report.error().message));
        return;
    }
    auto graph =
        buildOptimizedGraph(std::move(model), std::move(*report), document_->path.toStdString());
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
    killEngineProcess_ = worker_->engineProcessKiller();
    worker_->moveToThread(thread_);
    // The worker (and the session it owns) is deleted on its own thread as the thread ends.
    QObject::connect(thread_, &QThread::finished, worker_, &QObject::deleteLater);
    thread_->start();
}

EngineThread::~EngineThread() {
    worker_->cancel();
    thread_->quit();
    // Runs and benchmarks stop between two nodes, but a compile goes on to its end: closing a
    // tab while its model compiles ends its engine process instead of waiting.
    if (thread_->wait(200)) {
        delete thread_;
        return;
    }
    killEngineProcess_();
    if (thread_->wait(5000)) {
        delete thread_;
        return;
    }
    // Still not ended (the engine process would not start or die): the thread is left to finish
    // and delete itself, so the window does not freeze.
    QObject::connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
    detachedThreads().erase(
        std::remove(detachedThreads().begin(), detachedThreads().end(), nullptr),
        detachedThreads().end());
    detachedThreads().emplace_back(thread_);
}

}  // namespace onnxlens::widgets
