#pragma once
// The inspector window: one tab per opened model, the Model/Node/Tensor panels as docks, menus
// and shortcuts, drag-and-drop anywhere, recent files and window geometry in QSettings.
// Models are loaded on a worker thread; a file that fails shows the error and changes nothing.
#include <QMainWindow>
#include <QStringList>
#include <map>
#include <memory>
#include <string>

class QTabWidget;
class QMenu;
class QDockWidget;
class QAction;
class QDialog;

namespace onnxlens::widgets {
class BenchmarkPanel;
class ExportDialog;
class QuantizeDialog;
class GraphPage;
class ModelPanel;
class NodePanel;
class TensorPanel;
class RunPanel;
class ComparePanel;
class ModelDiffPanel;
class ModelDiffWorker;
struct ModelComparison;
struct ModelDocument;
class EditActions;
class EditController;
}  // namespace onnxlens::widgets

namespace onnxlens::gui {

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void openFiles(const QStringList& paths);
    void openFile(const QString& path);
    QStringList recentFiles() const;
    void openRecent(int index);

    widgets::GraphPage* currentPage() const;
    widgets::GraphPage* page(int index) const;
    int pageCount() const;
    int pendingLoads() const { return pendingLoads_; }
    QString lastError() const { return lastError_; }
    widgets::NodePanel* nodePanel() const { return nodePanel_; }
    widgets::ModelPanel* modelPanel() const { return modelPanel_; }
    widgets::TensorPanel* tensorPanel() const { return tensorPanel_; }
    widgets::BenchmarkPanel* benchmarkPanel() const { return benchmarkPanel_; }
    QDockWidget* benchmarkDock() const { return benchmarkDock_; }
    QAction* showOptimizedAction() const { return showOptimizedAction_; }
    QAction* showConstantsAction() const { return showConstantsAction_; }
    QAction* foldRepeatsAction() const { return foldRepeatsAction_; }
    widgets::RunPanel* runPanel() const { return runPanel_; }
    widgets::ComparePanel* comparePanel() const { return comparePanel_; }
    QDockWidget* runDock() const { return runDock_; }
    QDockWidget* compareDock() const { return compareDock_; }

    // A tab's title: the file name, or the folder's name for the many files called model.onnx.
    static QString tabTitleFor(const QString& path);

    // Tools > Export from PyTorch & Benchmark (created on first use).
    widgets::ExportDialog* exportDialog();
    void showExportDialog();

    // Tools > Quantize Model... on the current tab's model (created on first use).
    widgets::QuantizeDialog* quantizeDialog();
    void showQuantizeDialog();
    void showSettingsDialog();
    // View > Colour by Quantization Error (checkable; needs a report for the current model).
    QAction* quantizationErrorAction() const { return quantizationErrorAction_; }
    // View > Colour by FLOPs / Parameters / Memory (checkable, exclusive with each other, the
    // profile's time and the quantization error; remembered).
    QAction* colourByFlopsAction() const { return costColourActions_[0]; }
    QAction* colourByParametersAction() const { return costColourActions_[1]; }
    QAction* colourByMemoryAction() const { return costColourActions_[2]; }

    // Tools > Compare Models…: the current model against `otherPath` on a worker thread (the
    // structure, then with `numeric` both runs on the same inputs); the Model Diff dock shows the
    // result and the graph its differences.
    void compareCurrentWith(const QString& otherPath, bool numeric = true);
    widgets::ModelDiffPanel* modelDiffPanel() const { return modelDiffPanel_; }
    QDockWidget* modelDiffDock() const { return modelDiffDock_; }
    QAction* colourByErrorAction() const { return colourByErrorAction_; }
    QAction* firstDivergenceAction() const { return firstDivergenceAction_; }

    // File > Export: by the file's extension (.svg or .png). Empty string on success.
    QString exportCurrent(const QString& path);

    // Editing (MainWindowEditing.cpp): the Edit menu and context menus, Save (Ctrl+S) and Save
    // As (Ctrl+Shift+S). A tab's file is its EditController's source path (the file opened, or
    // last saved to); its page is replaced by one of the edited model after every edit, undo and
    // redo (pageReplaced).
    widgets::EditActions* editActions() const { return editActions_; }
    // The file the tab stands for (its document may be an edited copy elsewhere).
    QString filePathOf(const widgets::GraphPage* page) const;
    bool isModified(const widgets::GraphPage* page) const;
    // File > Save: asks before overwriting the opened file, then saves on a worker thread
    // (saved() or a message saying why not). False when nothing was started.
    bool saveCurrent();
    // File > Save As without the file dialog (asks only when `path` is the tab's own file).
    bool saveCurrentAs(const QString& path);
    QString lastEditError() const { return lastEditError_; }

  signals:
    void documentOpened(onnxlens::widgets::GraphPage* page);
    void pageReplaced(onnxlens::widgets::GraphPage* page);  // an edit, undo or redo shown
    void openFailed(const QString& path, const QString& message);

  protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

  private:
    void createEditMenu(QMenu* file);
    void wirePage(widgets::GraphPage* page);
    void connectEdits(widgets::EditController* edits);
    void replacePage(widgets::EditController* edits,
                     std::shared_ptr<const widgets::ModelDocument> document);
    void updateTabTitle(widgets::GraphPage* page);
    void closeTab(int index);
    // Save / Discard / Cancel for a tab with unsaved edits: true when it may close now.
    bool confirmUnsaved(widgets::GraphPage* page, bool quitting = false);
    bool saveTab(widgets::GraphPage* page, const QString& path);
    void chooseAndSaveAs();
    void openDialog(QDialog* dialog);
    void fitToScreen();
    void showBottomDock(QDockWidget* dock);
    void fitBottomDock(QDockWidget* dock);
    void fitModelDock();
    void explainWhenDisabled(QAction* action, QDockWidget* dock);
    void createActions();
    void createDocks();
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void showOpenError(const QString& path, const QString& message);
    void onCurrentTabChanged();
    void chooseAndOpen();
    void chooseAndExport(const QString& format);
    void createCostColourActions(QMenu* view);
    void applyCostColouring(widgets::GraphPage* page);

    QTabWidget* tabs_;
    widgets::ModelPanel* modelPanel_;
    widgets::NodePanel* nodePanel_;
    widgets::TensorPanel* tensorPanel_;
    QDockWidget* modelDock_;
    QDockWidget* nodeDock_;
    QDockWidget* tensorDock_;
    widgets::BenchmarkPanel* benchmarkPanel_;
    QDockWidget* benchmarkDock_;
    QAction* showOptimizedAction_;
    QAction* showConstantsAction_ = nullptr;
    QAction* foldRepeatsAction_ = nullptr;
    bool fittedToScreen_ = false;
    bool modelDockFitted_ = false;  // sized to the first model's values (fitModelDock)
    static constexpr int kModelDockMinWidth = 220;
    bool restoredState_ = false;  // the docks' places from the last session
    // The Run and Compare docks show the current tab's ModelController (GraphPage::controller).
    widgets::RunPanel* runPanel_;
    widgets::ComparePanel* comparePanel_;
    QDockWidget* runDock_;
    QDockWidget* compareDock_;
    QMenu* recentMenu_;
    widgets::ExportDialog* exportDialog_ = nullptr;
    widgets::QuantizeDialog* quantizeDialog_ = nullptr;
    QAction* quantizationErrorAction_ = nullptr;
    QAction* costColourActions_[3] = {nullptr, nullptr, nullptr};
    void showComparison(widgets::GraphPage* page);
    void revealNodeNamed(const QString& profileName);
    widgets::ModelDiffPanel* modelDiffPanel_ = nullptr;
    QDockWidget* modelDiffDock_ = nullptr;
    widgets::ModelDiffWorker* modelDiffWorker_ = nullptr;
    QAction* colourByErrorAction_ = nullptr;
    QAction* firstDivergenceAction_ = nullptr;
    // The latest comparison per model path (the first model's).
    std::map<QString, std::shared_ptr<const widgets::ModelComparison>> comparisons_;
    // Per model file (absolute path): profileNameOf -> SQNR of the last quantization report.
    std::map<QString, std::map<std::string, double>> quantizationErrors_;
    int pendingLoads_ = 0;
    QString lastError_;
    widgets::EditActions* editActions_ = nullptr;
    QString lastEditError_;
    bool quitAfterSave_ = false;  // a Save chosen while quitting: close again once saved
};

}  // namespace onnxlens::gui
