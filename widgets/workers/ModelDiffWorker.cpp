#include "widgets/workers/ModelDiffWorker.h"

#include <QFileInfo>
#include <QThread>
#include <atomic>
#include <chrono>

namespace onnxlens::widgets {

struct ModelDiffWorker::Job {
    std::atomic<bool> cancelRequested{false};
};

ModelDiffWorker::ModelDiffWorker(QObject* parent) : QObject(parent) {}

ModelDiffWorker::~ModelDiffWorker() {
    if (!thread_) return;
    cancel();
    thread_->wait();
    delete thread_;
}

void ModelDiffWorker::cancel() {
    if (job_) job_->cancelRequested.store(true);
}

void ModelDiffWorker::finish() {
    if (!thread_) return;
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
    job_.reset();
}

bool ModelDiffWorker::start(std::shared_ptr<const ModelDocument> document, const QString& otherPath,
                            bool numeric, const engine::NumericDiffOptions& options) {
    if (thread_ || !document) return false;
    job_ = std::make_shared<Job>();
    auto job = job_;
    thread_ = QThread::create([this, job, document, otherPath, numeric, options] {
        auto post = [this](auto function) {
            QMetaObject::invokeMethod(this, std::move(function), Qt::QueuedConnection);
        };
        auto stopped = [&] {
            if (!job->cancelRequested.load()) return false;
            post([this] {
                finish();
                emit cancelled();
            });
            return true;
        };
        post([this] { emit progress(tr("Reading the second model…"), 0, 0); });
        auto comparison = std::make_shared<ModelComparison>();
        comparison->pathA = document->path;
        comparison->pathB = QFileInfo(otherPath).absoluteFilePath();
        {
            auto other = loadModel(otherPath.toStdString());
            if (!other) {
                const QString message = QString::fromStdString(other.error().message);
                post([this, message] {
                    finish();
                    emit failed(message);
                });
                return;
            }
            if (stopped()) return;
            post([this] { emit progress(tr("Comparing the structure…"), 0, 0); });
            engine::ModelDiffOptions structureOptions;
            structureOptions.directoryA = document->loaded.directory;
            structureOptions.directoryB = other->directory;
            comparison->structure =
                engine::diffModels(*document->loaded.proto, *other->proto, structureOptions);
            comparison->structure.nameA = QFileInfo(document->path).fileName().toStdString();
            comparison->structure.nameB = QFileInfo(otherPath).fileName().toStdString();
            comparison->skeletonB = engine::modelSkeleton(*other->proto);
        }  // the second model's weights are let go before the runs read it again
        if (stopped()) return;
        if (numeric) {
            auto throttle = std::make_shared<std::chrono::steady_clock::time_point>();
            auto onProgress = [this, post, throttle](const engine::NumericDiffProgress& p) {
                const auto now = std::chrono::steady_clock::now();
                if (p.total > 0 && p.done < p.total &&
                    now - *throttle < std::chrono::milliseconds(100))
                    return;
                *throttle = now;
                const QString step = QString::fromStdString(p.step);
                const int done = p.done, total = p.total;
                post([this, step, done, total] { emit progress(step, done, total); });
            };
            LoadedModel a = document->loaded;  // shared proto: the session copies it
            auto result =
                engine::numericDiff(std::move(a), std::filesystem::path(otherPath.toStdString()),
                                    options, onProgress, &job->cancelRequested);
            if (stopped()) return;
            if (result) {
                comparison->numeric = std::move(*result);
                comparison->numeric->structure = comparison->structure;
            } else {
                comparison->numericError = QString::fromStdString(result.error().message);
            }
        }
        post([this, comparison] {
            finish();
            emit finished(comparison);
        });
    });
    thread_->start();
    return true;
}

}  // namespace onnxlens::widgets
