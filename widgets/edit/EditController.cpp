#include "widgets/edit/EditController.h"

#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QUndoCommand>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>

#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/workflows/EditScript.h"

namespace onnxlens::widgets {

namespace fs = std::filesystem;

// One edit on the undo stack. Its first redo() is the push itself: the edit was applied before
// it was pushed (a failing edit never reaches the stack).
class EditCommand : public QUndoCommand {
  public:
    EditCommand(EditController* controller, const QString& text)
        : QUndoCommand(text), controller_(controller) {}
    void undo() override { controller_->scheduleReplay(); }
    void redo() override {
        if (pushed_) controller_->scheduleReplay();
        pushed_ = true;
    }

  private:
    EditController* controller_;
    bool pushed_ = false;
};

namespace {

using DocumentPtr = std::shared_ptr<const ModelDocument>;

bool graphHasExternalTensors(const onnx::GraphProto& graph);

bool nodeHasExternalTensors(const onnx::NodeProto& node) {
    for (const auto& attribute : node.attribute()) {
        if (attribute.has_t() && usesExternalData(attribute.t())) return true;
        for (const auto& t : attribute.tensors())
            if (usesExternalData(t)) return true;
        if (attribute.has_g() && graphHasExternalTensors(attribute.g())) return true;
        for (const auto& g : attribute.graphs())
            if (graphHasExternalTensors(g)) return true;
    }
    return false;
}

bool graphHasExternalTensors(const onnx::GraphProto& graph) {
    for (const auto& t : graph.initializer())
        if (usesExternalData(t)) return true;
    for (const auto& node : graph.node())
        if (nodeHasExternalTensors(node)) return true;
    return false;
}

bool hasExternalTensors(const onnx::ModelProto& model) {
    if (graphHasExternalTensors(model.graph())) return true;
    for (const auto& function : model.functions())
        for (const auto& node : function.node())
            if (nodeHasExternalTensors(node)) return true;
    return false;
}

struct Replayed {
    DocumentPtr document;
    std::size_t applied = 0;
    QString file;  // the work file written (empty: the loaded document itself)
};

// The loaded model with `steps` applied, written and loaded again. A model that keeps weights in
// external data files is written beside its source (`besideFile`) with the same locations, so
// nothing is copied; when that folder is not writable (or the model has outgrown one protobuf)
// it goes to the private `privateFile`, its external weights copied into a data file beside it.
Result<Replayed> replay(DocumentPtr loaded, std::vector<std::vector<ModelEdit>> steps,
                        fs::path besideFile, fs::path privateFile,
                        std::shared_ptr<const std::atomic<bool>> alive) {
    onnx::ModelProto model = *loaded->loaded.proto;
    ModelEditOptions options;
    options.baseDirectory = loaded->loaded.directory;
    options.checkNode = engine::checkNodeWithEngineKernel;
    for (const auto& step : steps)
        for (const ModelEdit& edit : step)
            if (auto status = applyModelEdit(model, edit, options); !status) return status.error();
    const bool external = hasExternalTensors(model);
    fs::path written;
    if (external && model.ByteSizeLong() < (std::uint64_t{2} << 30) - 1) {
        std::string bytes;
        if (model.SerializeToString(&bytes) && writeFileAtomically(besideFile, bytes))
            written = besideFile;
    }
    if (written.empty()) {
        ModelWriteOptions writeOptions;
        writeOptions.sourceDirectory = loaded->loaded.directory;
        writeOptions.forceExternalData = external;
        auto result = writeModelFile(model, privateFile, writeOptions);
        if (!result) return result.error();
        written = privateFile;
    }
    auto document = loadModelDocument(QString::fromStdString(written.string()), loaded->path);
    if (!document || !*alive) {  // a tab closed meanwhile leaves no file behind either
        std::error_code ignored;
        fs::remove(written, ignored);
        fs::remove(fs::path(written).concat(".data"), ignored);
        if (!document) return document.error();
        return makeError(written.string(), "the tab was closed");
    }
    return Replayed{std::move(*document), steps.size(), QString::fromStdString(written.string())};
}

struct SavedModel {
    DocumentPtr reloaded;  // the saved file loaded again, when it keeps external data
};

Result<SavedModel> saveModel(DocumentPtr shown, fs::path target) {
    onnx::ModelProto model = *shown->loaded.proto;  // writeModelFile moves weights out of it
    const bool external = hasExternalTensors(model);
    ModelWriteOptions options;
    options.sourceDirectory = shown->loaded.directory;
    options.forceExternalData = external;
    auto written = writeModelFile(model, target, options);
    if (!written) return written.error();
    SavedModel saved;
    if (external) {
        // The tab's model named data files by location; the saved model's are new (and may have
        // replaced the old ones): from now on the tab is the saved file.
        auto document = loadModelDocument(QString::fromStdString(target.string()));
        if (!document)
            return makeError(target.string(), "saved, but it could not be loaded again: " +
                                                  document.error().message);
        saved.reloaded = std::move(*document);
    }
    return saved;
}

}  // namespace

EditController::EditController(DocumentPtr loaded, QObject* parent)
    : QObject(parent),
      loaded_(loaded),
      current_(std::move(loaded)),
      sourcePath_(loaded_->path),
      undo_(new QUndoStack(this)) {
    connect(undo_, &QUndoStack::indexChanged, this, [this] {
        if (isModified() != wasModified_) {
            wasModified_ = isModified();
            emit modifiedChanged(wasModified_);
        }
    });
}

EditController::~EditController() {
    *alive_ = false;
    removeWorkFilesExcept(QString());
}

EditController* EditController::of(const QObject* page) {
    return page ? page->findChild<EditController*>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
}

bool EditController::isModified() const { return undo_->index() != savedIndex_; }

std::vector<ModelEdit> EditController::appliedEdits() const {
    std::vector<ModelEdit> edits;
    for (std::size_t i = 0; i < appliedCount_; ++i)
        edits.insert(edits.end(), steps_[i].begin(), steps_[i].end());
    return edits;
}

QString EditController::describe(const std::vector<ModelEdit>& edits) {
    QStringList parts;
    for (const auto& edit : edits) parts << QString::fromStdString(edit.describe());
    return parts.join(QStringLiteral("; "));
}

bool EditController::apply(ModelEdit edit, QString* why) {
    return apply(std::vector<ModelEdit>{std::move(edit)}, why);
}

void EditController::setBusy(bool busy) {
    if (jobRunning_ == busy) return;
    jobRunning_ = busy;
    emit busyChanged(busy);
}

fs::path EditController::nextWorkFile(bool besideSource) {
    ++generation_;
    const QFileInfo source(loaded_->path);
    if (besideSource)
        return fs::path(source.absolutePath().toStdString()) /
               QStringLiteral(".%1.onnxlens-edit-%2-%3.onnx")
                   .arg(source.fileName())
                   .arg(::getpid())
                   .arg(generation_)
                   .toStdString();
    if (!workDir_)
        workDir_ = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                                   QStringLiteral("/onnxlens-edit-XXXXXX"));
    // The same file name as the source, so every message about the edited model names it.
    const QString folder = workDir_->filePath(QString::number(generation_));
    QDir().mkpath(folder);
    return fs::path(folder.toStdString()) / source.fileName().toStdString();
}

bool EditController::apply(std::vector<ModelEdit> step, QString* why) {
    if (step.empty()) {
        if (why) *why = tr("Nothing to change");
        return false;
    }
    if (jobRunning_) {
        if (why) *why = tr("Another edit or a save is still running");
        return false;
    }
    const std::size_t base = static_cast<std::size_t>(undo_->index());
    std::vector<std::vector<ModelEdit>> steps(steps_.begin(),
                                              steps_.begin() + static_cast<std::ptrdiff_t>(base));
    steps.push_back(step);
    setBusy(true);
    auto* watcher = new QFutureWatcher<Result<Replayed>>(this);
    connect(watcher, &QFutureWatcher<Result<Replayed>>::finished, this,
            [this, watcher, step, base] {
                watcher->deleteLater();
                const Result<Replayed>& result = watcher->result();
                setBusy(false);
                const QString description = describe(step);
                if (!result) {
                    emit editFailed(description, QString::fromStdString(result.error().message));
                } else if (static_cast<std::size_t>(undo_->index()) != base) {
                    // Undone or redone meanwhile: the edit was made on a model no longer shown.
                    removeWorkFilesExcept(current_->path);
                    emit editFailed(description, tr("the history changed while it was applied; "
                                                    "nothing was changed, make it again"));
                } else {
                    steps_.resize(base);
                    steps_.push_back(step);
                    if (savedIndex_ > static_cast<int>(base)) savedIndex_ = -1;  // unreachable now
                    workFiles_ << result->file;
                    install(result->document, base + 1);
                    undo_->push(new EditCommand(this, description));
                }
                if (replayQueued_) startReplay();
            });
    const fs::path beside = nextWorkFile(true);
    const fs::path privateFile = nextWorkFile(false);
    watcher->setFuture(
        QtConcurrent::run(replay, loaded_, std::move(steps), beside, privateFile, alive_));
    return true;
}

void EditController::install(DocumentPtr document, std::size_t applied) {
    current_ = std::move(document);
    appliedCount_ = applied;
    removeWorkFilesExcept(current_->path);
    emit documentChanged(current_);
}

void EditController::scheduleReplay() {
    if (replayQueued_) return;
    replayQueued_ = true;
    if (!jobRunning_)
        QMetaObject::invokeMethod(this, &EditController::startReplay, Qt::QueuedConnection);
}

void EditController::startReplay() {
    if (jobRunning_) return;  // runs again when the job ends
    replayQueued_ = false;
    const auto wanted = static_cast<std::size_t>(undo_->index());
    if (wanted == appliedCount_) return;
    if (wanted == 0) {  // the model as loaded: nothing to replay
        install(loaded_, 0);
        return;
    }
    std::vector<std::vector<ModelEdit>> steps(steps_.begin(),
                                              steps_.begin() + static_cast<std::ptrdiff_t>(wanted));
    setBusy(true);
    auto* watcher = new QFutureWatcher<Result<Replayed>>(this);
    connect(watcher, &QFutureWatcher<Result<Replayed>>::finished, this, [this, watcher, wanted] {
        watcher->deleteLater();
        const Result<Replayed>& result = watcher->result();
        setBusy(false);
        if (result) {
            workFiles_ << result->file;
            install(result->document, wanted);
        } else {
            // A replay that worked before (a replacement tensor's file since removed): the stack
            // goes back to what is shown.
            const QString text = wanted > appliedCount_ ? undo_->text(static_cast<int>(wanted) - 1)
                                                        : undo_->text(static_cast<int>(wanted));
            replayQueued_ = true;  // setIndex below must not queue another replay
            undo_->setIndex(static_cast<int>(appliedCount_));
            replayQueued_ = false;
            emit editFailed(text, QString::fromStdString(result.error().message));
            return;
        }
        if (replayQueued_ || static_cast<std::size_t>(undo_->index()) != appliedCount_)
            startReplay();
    });
    const fs::path beside = nextWorkFile(true);
    const fs::path privateFile = nextWorkFile(false);
    watcher->setFuture(
        QtConcurrent::run(replay, loaded_, std::move(steps), beside, privateFile, alive_));
}

bool EditController::save(const QString& path, QString* why) {
    if (jobRunning_) {
        if (why) *why = tr("An edit is still being applied");
        return false;
    }
    const QString target = QFileInfo(path).absoluteFilePath();
    // The steps the written model has (an undo made just before may not be replayed yet).
    const int index = static_cast<int>(appliedCount_);
    setBusy(true);
    auto* watcher = new QFutureWatcher<Result<SavedModel>>(this);
    connect(watcher, &QFutureWatcher<Result<SavedModel>>::finished, this,
            [this, watcher, target, index] {
                watcher->deleteLater();
                const Result<SavedModel>& result = watcher->result();
                setBusy(false);
                if (!result) {
                    emit saveFailed(target, QString::fromStdString(result.error().message));
                    if (replayQueued_) startReplay();
                    return;
                }
                sourcePath_ = target;
                if (result->reloaded) {
                    // Its weights are in the saved data files now: the saved file is the new
                    // base, and the history starts again from it.
                    loaded_ = result->reloaded;
                    steps_.clear();
                    savedIndex_ = 0;
                    undo_->clear();
                    install(loaded_, 0);
                } else {
                    savedIndex_ = index;
                }
                if (isModified() != wasModified_) {
                    wasModified_ = isModified();
                    emit modifiedChanged(wasModified_);
                }
                emit saved(target);
                if (replayQueued_) startReplay();
            });
    watcher->setFuture(QtConcurrent::run(saveModel, current_, fs::path(target.toStdString())));
    return true;
}

QString EditController::exportHistory(const QString& path) const {
    if (auto status = engine::writeEditScriptFile(fs::path(path.toStdString()), appliedEdits());
        !status)
        return QString::fromStdString(status.error().message);
    return {};
}

void EditController::removeWorkFilesExcept(const QString& keep) {
    QStringList kept;
    for (const QString& file : workFiles_) {
        if (file == keep) {
            kept << file;
            continue;
        }
        QFile::remove(file);
        QFile::remove(file + QStringLiteral(".data"));
        // A private file's own folder (workDir/N/name).
        if (workDir_ && file.startsWith(workDir_->path()))
            QDir().rmdir(QFileInfo(file).absolutePath());
    }
    workFiles_ = kept;
}

}  // namespace onnxlens::widgets
