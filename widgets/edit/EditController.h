#pragma once
// One tab's edits: the model as loaded plus the list of edits applied to it, with undo and redo
// (QUndoStack) through every edit, and saving. The tab's model is always "the loaded model with
// edits [0, undo index) applied": a new edit, an undo or a redo replays that prefix on a copy of
// the loaded model on a worker thread, writes the result to a private file (see workFile in the
// .cpp: a temporary folder, or beside the original when it keeps weights in external data files,
// so their relative locations still resolve) and loads it as a new ModelDocument, which the
// window then shows in place of the tab's page (graph, panels and engine process follow it). The
// GUI thread never parses, applies or writes.
//
// An edit that fails changes nothing: editFailed names it, and the history and the shown model
// stay as they were. Saving goes through writeModelFile (atomic: a temporary file in the target
// folder renamed over the target), on a worker thread.
#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <atomic>
#include <filesystem>
#include <memory>
#include <vector>

#include "onnxlens/model/ModelEdits.h"
#include "widgets/workers/ModelDocument.h"

class QUndoStack;

namespace onnxlens::widgets {

class EditController : public QObject {
    Q_OBJECT
  public:
    // `loaded`: the tab's model as opened from its file.
    explicit EditController(std::shared_ptr<const ModelDocument> loaded, QObject* parent = nullptr);
    ~EditController() override;  // removes its work files

    // The controller a tab's page holds (a direct child), or nullptr.
    static EditController* of(const QObject* page);

    // The user's file: the one opened, or the one last saved to.
    QString sourcePath() const { return sourcePath_; }
    // The model as shown now (the loaded one while no edit is applied).
    std::shared_ptr<const ModelDocument> document() const { return current_; }
    QUndoStack* undoStack() const { return undo_; }
    bool isModified() const;
    // A new edit, a replay or a save is running on the worker thread.
    bool isBusy() const { return jobRunning_; }
    // The edits the shown model has, in order (the undo stack's index of them).
    std::vector<ModelEdit> appliedEdits() const;

    // Applies `edit` after the applied edits (on a worker thread): documentChanged, or
    // editFailed(edit.describe(), why) and nothing changes. Refused (false, `why` set) while
    // another edit or a save runs.
    bool apply(ModelEdit edit, QString* why = nullptr);
    // Several edits as one step of the history (one undo): all apply or none does.
    bool apply(std::vector<ModelEdit> edits, QString* why = nullptr);
    // The Undo text of a step: its edits' descriptions.
    static QString describe(const std::vector<ModelEdit>& edits);
    // Writes the shown model to `path` (writeModelFile, on a worker thread): saved(path), after
    // which the tab is unmodified and its file is `path`; or saveFailed(path, why) and every file
    // is as it was. Refused like apply().
    bool save(const QString& path, QString* why = nullptr);
    // Edit > Export Edit History: the applied edits as `onnxlens-cli edit --script` reads them.
    // Empty on success, else why.
    QString exportHistory(const QString& path) const;

  signals:
    void documentChanged(std::shared_ptr<const onnxlens::widgets::ModelDocument> document);
    void editFailed(const QString& description, const QString& message);
    void modifiedChanged(bool modified);
    void busyChanged(bool busy);
    void saved(const QString& path);
    void saveFailed(const QString& path, const QString& message);

  private:
    friend class EditCommand;
    void scheduleReplay();  // after an undo or a redo: replays the new prefix (coalesced)
    void startReplay();
    void setBusy(bool busy);
    void install(std::shared_ptr<const ModelDocument> document, std::size_t applied);
    std::filesystem::path nextWorkFile(bool besideSource);
    void removeWorkFilesExcept(const QString& keep);

    std::shared_ptr<const ModelDocument> loaded_;  // the base every replay starts from
    std::shared_ptr<const ModelDocument> current_;
    QString sourcePath_;
    QUndoStack* undo_;
    std::vector<std::vector<ModelEdit>> steps_;  // every step on the stack; [0, undo index) applied
    std::size_t appliedCount_ = 0;               // the steps current_ has
    int savedIndex_ = 0;                         // the undo index the file on disk has; -1: none
    bool wasModified_ = false;
    bool jobRunning_ = false;
    bool replayQueued_ = false;
    std::unique_ptr<QTemporaryDir> workDir_;
    std::uint64_t generation_ = 0;
    // False once the controller is gone: a replay still running then removes what it wrote.
    std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
    QStringList workFiles_;  // written by replays (and their .data files), removed when replaced
};

}  // namespace onnxlens::widgets
