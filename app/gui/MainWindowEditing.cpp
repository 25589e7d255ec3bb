// MainWindow's editing: the Edit menu and the graph's context menus (widgets/edit/EditActions),
// Save and Save As, the tab's modified mark, asking before unsaved edits are lost, and replacing a
// tab's page by the edited model's (see EditController for how the edited model is made).
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QTabWidget>
#include <QUndoStack>

#include "MainWindow.h"
#include "widgets/edit/EditActions.h"
#include "widgets/edit/EditController.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphViewPlace.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ModelDiffPanel.h"
#include "widgets/panels/ModelPanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens::gui {

using widgets::EditController;
using widgets::GraphPage;

void MainWindow::createEditMenu(QMenu* file) {
    QAction* save = file->addAction(tr("&Save"), this, &MainWindow::saveCurrent);
    save->setShortcut(QKeySequence::Save);
    save->setStatusTip(tr("Write the edited model over its file (asks first)"));
    QAction* saveAs = file->addAction(tr("Save &As…"), this, &MainWindow::chooseAndSaveAs);
    saveAs->setShortcut(QKeySequence(tr("Ctrl+Shift+S")));
    saveAs->setStatusTip(tr("Write the edited model to another file"));
    editActions_ = new widgets::EditActions(this);
    connect(editActions_, &widgets::EditActions::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    editActions_->populate(menuBar()->addMenu(tr("&Edit")));
}

QString MainWindow::filePathOf(const GraphPage* page) const {
    if (!page) return {};
    const EditController* edits = EditController::of(page);
    return edits ? edits->sourcePath() : page->document().path;
}

bool MainWindow::isModified(const GraphPage* page) const {
    const EditController* edits = EditController::of(page);
    return edits && edits->isModified();
}

// The signals of a tab's page, for a page opened or made by an edit.
void MainWindow::wirePage(GraphPage* page) {
    page->setRunTimeHeatShown(benchmarkPanel_->heatAction()->isChecked());
    connect(page, &GraphPage::nodeSelected, this, [this, page](int node) {
        if (page != currentPage()) return;
        if (node < 0)
            nodePanel_->clear();
        else {
            nodePanel_->showNode(page->shownViewGraph(), node, page->controller()->cost().get());
            nodeDock_->raise();
        }
        // Both versions of the node, when this model was compared with another.
        if (modelDiffPanel_->comparison() &&
            modelDiffPanel_->comparison()->pathA == page->document().path) {
            const auto& nodes = page->shownViewGraph()->nodes;
            modelDiffPanel_->showNode(
                node >= 0 && node < static_cast<int>(nodes.size()) ? nodes[node].proto : nullptr);
        }
    });
    connect(page, &GraphPage::drawn, this, [this, page] {
        statusBar()->showMessage(tr("%1: %2 nodes, laid out in %3 ms")
                                     .arg(tabTitleFor(filePathOf(page)))
                                     .arg(page->shownViewGraph()->operatorCount)
                                     .arg(page->lastLayoutMs(), 0, 'f', 0),
                                 8000);
    });
    connect(page, &GraphPage::viewGraphChanged, this, [this, page] {
        if (page == currentPage()) nodePanel_->clear();
    });
    connect(page, &GraphPage::optimizedGraphFailed, this, [this, page](const QString& message) {
        if (page != currentPage()) return;
        QSignalBlocker quiet(showOptimizedAction_);
        showOptimizedAction_->setChecked(false);
        statusBar()->showMessage(message, 8000);
    });
    connect(page, &GraphPage::layoutFailed, this,
            [this](const QString& message) { statusBar()->showMessage(message, 8000); });
    // A run or benchmark at other dims was counted: the Model and Node panels show the new count.
    connect(page->controller(), &widgets::ModelController::costChanged, this, [this, page] {
        if (page != currentPage()) return;
        modelPanel_->showCost(*page->controller()->cost());
        if (const int node = page->scene()->selectedNode(); node >= 0)
            nodePanel_->showNode(page->shownViewGraph(), node, page->controller()->cost().get());
    });
    applyCostColouring(page);
    editActions_->attach(page);
}

void MainWindow::connectEdits(EditController* edits) {
    connect(edits, &EditController::documentChanged, this,
            [this, edits](std::shared_ptr<const widgets::ModelDocument> document) {
                replacePage(edits, std::move(document));
            });
    connect(edits, &EditController::modifiedChanged, this,
            [this, edits] { updateTabTitle(qobject_cast<GraphPage*>(edits->parent())); });
    connect(edits, &EditController::editFailed, this,
            [this](const QString& edit, const QString& message) {
                lastEditError_ = edit + QStringLiteral(": ") + message;
                statusBar()->showMessage(tr("Could not %1").arg(edit), 8000);
                // Non-modal, as a failed open: the model is as it was.
                auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not apply the edit"),
                                            tr("Could not %1; the model is unchanged.").arg(edit),
                                            QMessageBox::Ok, this);
                box->setInformativeText(message);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->setObjectName(QStringLiteral("editErrorBox"));
                box->open();
            });
    connect(edits, &EditController::saved, this, [this, edits](const QString& path) {
        addRecentFile(path);
        updateTabTitle(qobject_cast<GraphPage*>(edits->parent()));
        statusBar()->showMessage(tr("Saved %1").arg(path), 8000);
    });
    connect(edits, &EditController::saveFailed, this,
            [this](const QString& path, const QString& message) {
                quitAfterSave_ = false;
                lastEditError_ = message;
                auto* box =
                    new QMessageBox(QMessageBox::Warning, tr("Could not save"),
                                    tr("Could not save %1; every file is as it was.").arg(path),
                                    QMessageBox::Ok, this);
                box->setInformativeText(message);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->setObjectName(QStringLiteral("saveErrorBox"));
                box->open();
            });
}

// The tab shows the edited model: a new page (a new engine process that compiles the edited file;
// only the changed groups laid out again) in place of the old one, at the same place.
void MainWindow::replacePage(EditController* edits,
                             std::shared_ptr<const widgets::ModelDocument> document) {
    auto* old = qobject_cast<GraphPage*>(edits->parent());
    const int index = tabs_->indexOf(old);
    if (index < 0) return;
    const bool current = index == tabs_->currentIndex();
    // The zoom, the place in the graph, the open groups and the selection go over to the new
    // page (the groups the edit did not change come from the layout cache).
    const widgets::GraphViewPlace place = widgets::graphViewPlaceOf(*old);
    auto* page = new GraphPage(std::move(document), tabs_);
    widgets::carryGraphViewPlace(page, place);
    edits->setParent(page);
    wirePage(page);
    {
        QSignalBlocker quiet(tabs_);
        tabs_->insertTab(index, page, QString());
        tabs_->removeTab(index + 1);
        if (current) tabs_->setCurrentIndex(index);
    }
    // View > Show Constants and Fold Repeated Blocks stay as they were on this tab.
    const ViewGraphOptions options = old->viewGraphOptions();
    old->deleteLater();
    updateTabTitle(page);
    page->start();
    if (options.foldConstants != ViewGraphOptions{}.foldConstants ||
        options.foldRepeats != ViewGraphOptions{}.foldRepeats)
        page->setViewGraphOptions(options);
    if (current) onCurrentTabChanged();
    emit pageReplaced(page);
}

void MainWindow::updateTabTitle(GraphPage* page) {
    const int index = tabs_->indexOf(page);
    if (index < 0) return;
    const QString path = filePathOf(page);
    const QString mark = isModified(page) ? QStringLiteral("*") : QString();
    tabs_->setTabText(index, tabTitleFor(path) + mark);
    tabs_->setTabToolTip(index, path);
    if (page == currentPage())
        setWindowTitle(QStringLiteral("%1%2 — onnxlens").arg(tabTitleFor(path), mark));
}

void MainWindow::closeTab(int index) {
    GraphPage* closing = page(index);
    if (!closing || !confirmUnsaved(closing)) return;
    tabs_->removeTab(index);
    closing->deleteLater();
}

bool MainWindow::confirmUnsaved(GraphPage* page, bool quitting) {
    EditController* edits = EditController::of(page);
    if (!edits || !edits->isModified()) return true;
    tabs_->setCurrentWidget(page);
    QMessageBox box(QMessageBox::Warning, tr("Unsaved edits"),
                    tr("%1 has edits that are not saved.").arg(tabTitleFor(filePathOf(page))),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setInformativeText(tr("Save them before closing?"));
    box.setObjectName(QStringLiteral("unsavedEditsBox"));
    box.setDefaultButton(QMessageBox::Save);
    switch (box.exec()) {
        case QMessageBox::Discard:
            return true;
        case QMessageBox::Save: {
            // Closes once saved (the window too, when quitting); a failed save keeps it open.
            if (saveTab(page, edits->sourcePath())) {
                quitAfterSave_ = quitting;
                auto onSaved = std::make_shared<QMetaObject::Connection>();
                auto onFailed = std::make_shared<QMetaObject::Connection>();
                *onSaved =
                    connect(edits, &EditController::saved, this, [this, edits, onSaved, onFailed] {
                        disconnect(*onSaved);
                        disconnect(*onFailed);
                        if (quitAfterSave_) {
                            quitAfterSave_ = false;
                            close();
                        } else if (int i = tabs_->indexOf(qobject_cast<QWidget*>(edits->parent()));
                                   i >= 0) {
                            closeTab(i);
                        }
                    });
                *onFailed = connect(edits, &EditController::saveFailed, this, [onSaved, onFailed] {
                    disconnect(*onSaved);
                    disconnect(*onFailed);
                });
            }
            return false;
        }
        default:
            quitAfterSave_ = false;
            return false;
    }
}

bool MainWindow::saveTab(GraphPage* page, const QString& path) {
    EditController* edits = EditController::of(page);
    if (!edits) return false;
    QString why;
    if (!edits->save(path, &why)) {
        statusBar()->showMessage(tr("Cannot save now: %1").arg(why), 8000);
        return false;
    }
    statusBar()->showMessage(tr("Saving %1…").arg(path));
    return true;
}

bool MainWindow::saveCurrent() {
    GraphPage* p = currentPage();
    if (!p) return false;
    const QString path = filePathOf(p);
    QMessageBox box(QMessageBox::Question, tr("Overwrite the model?"),
                    tr("Replace %1 with the edited model?").arg(path),
                    QMessageBox::Save | QMessageBox::Cancel, this);
    box.setInformativeText(tr("The file as it is now is lost (Save As keeps it)."));
    box.setObjectName(QStringLiteral("overwriteBox"));
    if (box.exec() != QMessageBox::Save) return false;
    return saveTab(p, path);
}

bool MainWindow::saveCurrentAs(const QString& path) {
    GraphPage* p = currentPage();
    if (!p || path.isEmpty()) return false;
    if (QFileInfo(path).absoluteFilePath() == filePathOf(p)) return saveCurrent();
    return saveTab(p, path);
}

void MainWindow::chooseAndSaveAs() {
    GraphPage* p = currentPage();
    if (!p) return;
    QString path = QFileDialog::getSaveFileName(this, tr("Save model as"), filePathOf(p),
                                                tr("ONNX models (*.onnx);;All files (*)"));
    if (path.isEmpty()) return;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".onnx");
    saveCurrentAs(path);
}

}  // namespace onnxlens::gui
