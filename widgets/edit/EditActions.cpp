#include "widgets/edit/EditActions.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsItem>
#include <QInputDialog>
#include <QMenu>
#include <QUndoGroup>
#include <QUndoStack>

#include "onnxlens/model/NodeNames.h"
#include "widgets/dialogs/AttributeDialog.h"
#include "widgets/dialogs/ExtractDialog.h"
#include "widgets/dialogs/MetadataDialog.h"
#include "widgets/dialogs/SetDimsDialog.h"
#include "widgets/edit/EditController.h"
#include "widgets/graph/GraphEdgeItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"

namespace onnxlens::widgets {

using Kind = EditActions::Target::Kind;

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

EditActions::EditActions(QWidget* window) : QObject(window), window_(window) {
    group_ = new QUndoGroup(this);
    undo_ = group_->createUndoAction(this, tr("&Undo"));
    undo_->setShortcut(QKeySequence(tr("Ctrl+Z")));
    undo_->setObjectName(QStringLiteral("undoAction"));
    redo_ = group_->createRedoAction(this, tr("&Redo"));
    redo_->setShortcut(QKeySequence(tr("Ctrl+Shift+Z")));
    redo_->setObjectName(QStringLiteral("redoAction"));
    exportHistory_ = new QAction(tr("E&xport Edit History…"), this);
    exportHistory_->setStatusTip(
        tr("Save the edits made to this model as an edit script (onnxlens-cli edit --script)"));
    connect(exportHistory_, &QAction::triggered, this, &EditActions::exportHistory);
}

EditController* EditActions::controller() const { return EditController::of(page_); }

void EditActions::setPage(GraphPage* page) {
    if (page != page_) extractionInputs_.clear();
    page_ = page;
    EditController* edits = controller();
    group_->setActiveStack(edits ? edits->undoStack() : nullptr);
    updateActions();
}

void EditActions::attach(GraphPage* page) {
    if (EditController* edits = EditController::of(page)) {
        group_->addStack(edits->undoStack());
        connect(edits, &EditController::busyChanged, this, &EditActions::updateActions,
                Qt::UniqueConnection);
    }
    GraphView* view = page->view();
    view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(view, &QWidget::customContextMenuRequested, this, [this, page, view](QPoint at) {
        if (page != page_) return;
        const Target target = targetAt(page, at);
        if (target.kind == Kind::None) return;
        if (target.node >= 0) page->scene()->selectNode(target.node);
        QMenu* menu = contextMenuFor(target, view);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(view->viewport()->mapToGlobal(at));
    });
}

QString EditActions::editingRefused() const {
    if (!page_) return tr("Open a model to edit it");
    if (!controller()) return tr("This tab cannot be edited");
    if (page_->isShowingOptimized())
        return tr(
            "The optimized graph is shown: turn off View > Show Optimized Graph to edit the "
            "model");
    if (controller()->isBusy()) return tr("An edit or a save of this model is still running");
    return {};
}

void EditActions::updateActions() {
    const QString why = editingRefused();
    for (QAction* action : editActions_) {
        action->setEnabled(why.isEmpty());
        action->setToolTip(why);
    }
    exportHistory_->setEnabled(controller() && !controller()->appliedEdits().empty());
}

EditActions::Target EditActions::selectedTarget() const {
    Target target;
    if (!page_) return target;
    const int node = page_->scene()->selectedNode();
    const auto view = page_->shownViewGraph();
    if (!view || node < 0 || node >= static_cast<int>(view->nodes.size())) return target;
    const ViewNode& n = view->nodes[static_cast<std::size_t>(node)];
    target.node = node;
    switch (n.kind) {
        case ViewNode::Kind::Input:
            target.kind = Kind::Input;
            target.tensor = n.outputs.empty() ? -1 : n.outputs[0];
            target.name = qs(n.name);
            break;
        case ViewNode::Kind::Output:
            target.kind = Kind::Output;
            target.tensor = n.inputs.empty() ? -1 : n.inputs[0];
            target.name = qs(n.name);
            break;
        case ViewNode::Kind::Operator:
            target.kind = Kind::Operator;
            target.name =
                n.proto ? qs(n.proto->name().empty() ? profileNameOf(*n.proto) : n.proto->name())
                        : qs(n.name);
            break;
    }
    return target;
}

EditActions::Target EditActions::targetAt(GraphPage* page, QPoint viewPosition) const {
    Target target;
    for (QGraphicsItem* item = page->view()->itemAt(viewPosition); item;
         item = item->parentItem()) {
        if (auto* edge = qgraphicsitem_cast<GraphEdgeItem*>(item)) {
            const auto view = page->shownViewGraph();
            target.kind = Kind::Tensor;
            target.tensor = edge->tensorIndex();
            target.name = qs(view->tensors[static_cast<std::size_t>(target.tensor)].name);
            return target;
        }
        if (auto* node = qgraphicsitem_cast<GraphNodeItem*>(item)) {
            page->scene()->selectNode(node->nodeIndex());
            return selectedTarget();
        }
    }
    return target;
}

QStringList EditActions::initializersOf(const Target& target) const {
    QStringList names;
    if (!page_ || target.kind != Kind::Operator) return names;
    const auto view = page_->shownViewGraph();
    for (const ViewRow& row : view->nodes[static_cast<std::size_t>(target.node)].rows)
        if (row.kind == ViewRow::Kind::Initializer && row.tensor >= 0)
            names << qs(view->tensors[static_cast<std::size_t>(row.tensor)].name);
    return names;
}

QMenu* EditActions::contextMenuFor(const Target& target, QWidget* parent) {
    auto* menu = new QMenu(parent);
    menu->setObjectName(QStringLiteral("editContextMenu"));
    const QString refused = editingRefused();
    auto add = [&](const QString& text, auto slot) {
        QAction* action = menu->addAction(text, this, slot);
        action->setEnabled(refused.isEmpty());
        action->setToolTip(refused);
        return action;
    };
    switch (target.kind) {
        case Kind::Input:
            add(tr("Set &Dimensions…"), [this, target] { setDims(target); });
            add(tr("Make &Batch Dynamic"), [this] { makeBatchDynamic(); });
            add(tr("&Rename Input…"), [this, target] { rename(target); });
            add(tr("Use as E&xtraction Input"),
                [this, target] { extractionInputs_ << target.name; });
            break;
        case Kind::Output:
            add(tr("Set &Dimensions…"), [this, target] { setDims(target); });
            add(tr("&Rename Output…"), [this, target] { rename(target); });
            add(tr("Re&move Output"), [this, target] { removeOutput(target); });
            add(tr("E&xtract Subgraph Up To Here…"), [this, target] { extract(target); });
            break;
        case Kind::Tensor:
            add(tr("&Rename Tensor…"), [this, target] { rename(target); });
            add(tr("&Add as Graph Output"), [this, target] { addOutput(target); });
            add(tr("Use as E&xtraction Input"),
                [this, target] { extractionInputs_ << target.name; });
            add(tr("E&xtract Subgraph Up To Here…"), [this, target] { extract(target); });
            break;
        case Kind::Operator: {
            add(tr("&Rename Node…"), [this, target] { rename(target); });
            add(tr("Edit &Attribute…"), [this, target] { editAttribute(target); });
            add(tr("&Delete Node"), [this, target] { deleteNode(target); });
            add(tr("E&xtract Subgraph Up To Here…"), [this, target] { extract(target); });
            const auto view = page_->shownViewGraph();
            for (int t : view->nodes[static_cast<std::size_t>(target.node)].outputs) {
                Target tensor{Kind::Tensor, qs(view->tensors[static_cast<std::size_t>(t)].name), -1,
                              t};
                add(tr("Add %1 as Graph &Output").arg(tensor.name),
                    [this, tensor] { addOutput(tensor); });
            }
            for (const QString& initializer : initializersOf(target))
                add(tr("Replace Initializer %1…").arg(initializer),
                    [this, initializer] { replaceInitializer(initializer); });
            break;
        }
        case Kind::None:
            break;
    }
    return menu;
}

void EditActions::populate(QMenu* menu) {
    menu->addAction(undo_);
    menu->addAction(redo_);
    menu->addSeparator();
    auto add = [&](const QString& text, const QString& tip, auto slot) {
        QAction* action = menu->addAction(text, this, slot);
        action->setStatusTip(tip);
        editActions_.push_back(action);
        return action;
    };
    add(tr("Set &Dimensions…"), tr("Fix or name the dims of the selected input or output"),
        [this] { setDims(selectedTarget()); });
    add(tr("Make &Batch Dynamic"),
        tr("Make dim 0 of the inputs and outputs symbolic, repairing the shape constants that "
           "bake the exported batch"),
        [this] { makeBatchDynamic(); });
    add(tr("&Rename…"), tr("Rename the selected node, input or output"),
        [this] { rename(selectedTarget()); });
    add(tr("Add Graph &Output…"), tr("Make a tensor (the selected node's output) a graph output"),
        [this] { addOutput(selectedTarget()); });
    add(tr("Re&move Output"), tr("Remove the selected graph output"),
        [this] { removeOutput(selectedTarget()); });
    add(tr("E&xtract Subgraph…"),
        tr("Keep only the part of the model between chosen input and output tensors"),
        [this] { extract(selectedTarget()); });
    add(tr("&Delete Node"), tr("Delete the selected node (bypassed where its input can stand in)"),
        [this] { deleteNode(selectedTarget()); });
    add(tr("Edit &Attribute…"), tr("Change an attribute of the selected node"),
        [this] { editAttribute(selectedTarget()); });
    add(tr("Replace &Initializer…"), tr("Replace a weight's data from a .npy or .pb file"),
        [this] { replaceInitializer(QString()); });
    menu->addSeparator();
    add(tr("&Metadata…"), tr("Edit the model's metadata, doc string or producer"),
        [this] { editMetadata(); });
    add(tr("Convert &Opset…"), tr("Convert the model to another opset (onnx's version converter)"),
        [this] { convertOpset(); });
    add(tr("&Prune Dead Nodes"), tr("Remove nodes whose outputs nothing reads, and unused weights"),
        [this] { prune(); });
    menu->addSeparator();
    menu->addAction(exportHistory_);
    connect(menu, &QMenu::aboutToShow, this, &EditActions::updateActions);
    updateActions();
}

bool EditActions::applyEdits(std::vector<ModelEdit> edits) {
    if (const QString why = editingRefused(); !why.isEmpty()) {
        emit statusMessage(why);
        return false;
    }
    QString why;
    if (!controller()->apply(std::move(edits), &why)) {
        emit statusMessage(why);
        return false;
    }
    emit statusMessage(tr("Applying the edit…"));
    return true;
}

void EditActions::setDims(const Target& target) {
    if (target.kind != Kind::Input && target.kind != Kind::Output) {
        emit statusMessage(tr("Select a graph input or output to set its dimensions"));
        return;
    }
    const auto view = page_->shownViewGraph();
    std::vector<QString> dims;
    for (const ViewDim& dim : view->tensors[static_cast<std::size_t>(target.tensor)].type.dims)
        dims.push_back(qs(dim.text()));
    SetDimsDialog dialog(target.name, dims, window_);
    if (dialog.exec() == QDialog::Accepted) applyEdits(dialog.edits());
}

void EditActions::makeBatchDynamic() {
    bool ok = false;
    const QString symbol =
        QInputDialog::getText(window_, tr("Make Batch Dynamic"), tr("Name of the batch dimension:"),
                              QLineEdit::Normal, QStringLiteral("batch"), &ok);
    if (ok && !symbol.trimmed().isEmpty())
        applyEdits({makeBatchDynamicEdit(symbol.trimmed().toStdString())});
}

void EditActions::rename(const Target& target) {
    if (target.kind == Kind::None) {
        emit statusMessage(tr("Select a node, input or output to rename"));
        return;
    }
    bool ok = false;
    const QString to =
        QInputDialog::getText(window_, tr("Rename"), tr("New name for %1:").arg(target.name),
                              QLineEdit::Normal, target.name, &ok);
    if (!ok || to.isEmpty() || to == target.name) return;
    const RenameTarget what =
        target.kind == Kind::Operator ? RenameTarget::Node : RenameTarget::Tensor;
    applyEdits({renameEdit(target.name.toStdString(), to.toStdString(), what)});
}

void EditActions::addOutput(const Target& target) {
    QString tensor = target.kind == Kind::Tensor ? target.name : QString();
    if (tensor.isEmpty() && target.kind == Kind::Operator) {
        const auto view = page_->shownViewGraph();
        QStringList outputs;
        for (int t : view->nodes[static_cast<std::size_t>(target.node)].outputs)
            outputs << qs(view->tensors[static_cast<std::size_t>(t)].name);
        bool ok = false;
        tensor = outputs.size() == 1 ? outputs.front()
                                     : QInputDialog::getItem(window_, tr("Add Graph Output"),
                                                             tr("Tensor:"), outputs, 0, false, &ok);
    }
    if (tensor.isEmpty()) {
        bool ok = false;
        tensor = QInputDialog::getText(window_, tr("Add Graph Output"), tr("Tensor name:"),
                                       QLineEdit::Normal, QString(), &ok);
        if (!ok) return;
    }
    if (!tensor.isEmpty()) applyEdits({addOutputEdit(tensor.toStdString())});
}

void EditActions::removeOutput(const Target& target) {
    if (target.kind != Kind::Output) {
        emit statusMessage(tr("Select a graph output to remove it"));
        return;
    }
    applyEdits({removeOutputEdit(target.name.toStdString())});
}

void EditActions::extract(const Target& outputTarget) {
    QStringList outputs;
    if (outputTarget.kind == Kind::Tensor || outputTarget.kind == Kind::Output)
        outputs << outputTarget.name;
    else if (outputTarget.kind == Kind::Operator) {
        const auto view = page_->shownViewGraph();
        for (int t : view->nodes[static_cast<std::size_t>(outputTarget.node)].outputs)
            outputs << qs(view->tensors[static_cast<std::size_t>(t)].name);
    }
    ExtractDialog dialog(extractionInputs_, outputs, window_);
    if (dialog.exec() != QDialog::Accepted) return;
    if (applyEdits({dialog.edit()})) extractionInputs_.clear();
}

void EditActions::deleteNode(const Target& target) {
    if (target.kind != Kind::Operator) {
        emit statusMessage(tr("Select a node to delete it"));
        return;
    }
    applyEdits({deleteNodeEdit(target.name.toStdString())});
}

void EditActions::editAttribute(const Target& target) {
    if (target.kind != Kind::Operator) {
        emit statusMessage(tr("Select a node to edit its attributes"));
        return;
    }
    const auto view = page_->shownViewGraph();
    const ViewNode& node = view->nodes[static_cast<std::size_t>(target.node)];
    if (!node.proto) return;
    AttributeDialog dialog(*node.proto, target.name, view->opsetOf(node.domain), window_);
    if (dialog.exec() == QDialog::Accepted) applyEdits({dialog.edit()});
}

void EditActions::replaceInitializer(const QString& initializer) {
    if (!page_) return;
    QString name = initializer;
    if (name.isEmpty()) {
        QStringList names = initializersOf(selectedTarget());
        if (names.isEmpty())
            for (const auto& init : page_->document().loaded.proto->graph().initializer())
                names << qs(init.name());
        if (names.isEmpty()) {
            emit statusMessage(tr("The model has no initializers"));
            return;
        }
        bool ok = false;
        name = QInputDialog::getItem(window_, tr("Replace Initializer"), tr("Initializer:"), names,
                                     0, false, &ok);
        if (!ok) return;
    }
    const QString file = QFileDialog::getOpenFileName(
        window_, tr("Replace %1 with").arg(name), QFileInfo(page_->document().path).absolutePath(),
        tr("Tensor files (*.npy *.pb);;All files (*)"));
    if (!file.isEmpty()) applyEdits({setInitializerEdit(name.toStdString(), file.toStdString())});
}

void EditActions::editMetadata() {
    if (!page_) return;
    MetadataDialog dialog(*page_->document().loaded.proto, window_);
    if (dialog.exec() == QDialog::Accepted) applyEdits({dialog.edit()});
}

void EditActions::convertOpset() {
    if (!page_) return;
    bool ok = false;
    const int current = page_->shownViewGraph()->opsetOf("");
    const int opset = QInputDialog::getInt(
        window_, tr("Convert Opset"),
        tr("Target opset of the default domain (now %1):").arg(current), current, 1, 30, 1, &ok);
    if (ok && opset != current) applyEdits({convertOpsetEdit(opset)});
}

void EditActions::prune() { applyEdits({pruneEdit()}); }

void EditActions::exportHistory() {
    EditController* edits = controller();
    if (!edits) return;
    const QString path = QFileDialog::getSaveFileName(
        window_, tr("Export Edit History"),
        QFileInfo(edits->sourcePath()).completeBaseName() + QStringLiteral(".edits.json"),
        tr("Edit scripts (*.json)"));
    if (path.isEmpty()) return;
    const QString error = edits->exportHistory(path);
    emit statusMessage(error.isEmpty() ? tr("Edit history written to %1").arg(path)
                                       : tr("Could not write the edit history: %1").arg(error));
}

}  // namespace onnxlens::widgets
