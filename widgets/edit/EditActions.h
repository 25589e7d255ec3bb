#pragma once
// The window's edits as actions: the Edit menu (Undo/Redo through a QUndoGroup that follows the
// current tab, the edits of the selected node, input, output or tensor, and the model-wide ones)
// and the context menus of a tab's graph (right-click a node, an input, an output or an edge).
// Each edit goes to the tab's EditController (EditController::of(page)); the small dialogs are in
// widgets/dialogs (SetDims, Attribute, Extract, Metadata). Nothing here applies or checks an edit
// itself: a refused or failing edit comes back from the controller (editFailed).
#include <QObject>
#include <QPoint>
#include <QString>
#include <QStringList>
#include <vector>

#include "onnxlens/model/ModelEdits.h"

class QAction;
class QMenu;
class QUndoGroup;
class QWidget;

namespace onnxlens::widgets {

class EditController;
class GraphPage;

class EditActions : public QObject {
    Q_OBJECT
  public:
    explicit EditActions(QWidget* window);

    // The current tab (nullptr: none); its controller's stack becomes the active one.
    void setPage(GraphPage* page);
    // A new tab's graph gets the context menus; its controller's stack joins the group.
    void attach(GraphPage* page);
    // The Edit menu's items (called once).
    void populate(QMenu* menu);

    QUndoGroup* undoGroup() const { return group_; }
    QAction* undoAction() const { return undo_; }
    QAction* redoAction() const { return redo_; }
    QAction* exportHistoryAction() const { return exportHistory_; }

    // What an edit applies to: a graph node of the shown graph, or one tensor.
    struct Target {
        enum class Kind { None, Operator, Input, Output, Tensor } kind = Kind::None;
        QString name;     // node (edit naming), input, output or tensor name
        int node = -1;    // view node index (Operator, Input, Output)
        int tensor = -1;  // view tensor index (Input, Output, Tensor)
    };
    // The current page's selection as a target.
    Target selectedTarget() const;
    // The context menu for `target` on the current page (also what the tests open).
    QMenu* contextMenuFor(const Target& target, QWidget* parent);

    // Tensors marked with "Use as Extraction Input" (cleared when a tab changes).
    QStringList extractionInputs() const { return extractionInputs_; }

    // The edits, with their dialogs where they need values (target kinds as their menus).
    void setDims(const Target& target);
    void makeBatchDynamic();
    void rename(const Target& target);
    void addOutput(const Target& target);
    void removeOutput(const Target& target);
    void extract(const Target& outputTarget);
    void deleteNode(const Target& target);
    void editAttribute(const Target& target);
    void replaceInitializer(const QString& initializer);
    void editMetadata();
    void convertOpset();
    void prune();
    void exportHistory();
    // Sends the edits, as one undoable step, to the current tab's controller; false (with a
    // status message) when there is none or it is busy.
    bool applyEdits(std::vector<ModelEdit> edits);

  signals:
    void statusMessage(const QString& message);

  private:
    EditController* controller() const;
    Target targetAt(GraphPage* page, QPoint viewPosition) const;
    QStringList initializersOf(const Target& target) const;
    QString editingRefused() const;  // why the current page cannot be edited now (empty: it can)
    void updateActions();

    QWidget* window_;
    GraphPage* page_ = nullptr;
    QUndoGroup* group_;
    QAction* undo_;
    QAction* redo_;
    QAction* exportHistory_;
    QStringList extractionInputs_;
    std::vector<QAction*> editActions_;  // greyed while no tab can be edited
};

}  // namespace onnxlens::widgets
