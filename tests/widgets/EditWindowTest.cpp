// Editing in the window: an edit marks the tab modified and shows the edited model (graph, panels
// and engine follow it); undo and redo go through the history; Save and Save As write a model
// that passes the checker and reopens with the edit; a failed save or edit changes nothing and
// says why; closing a tab or the window with unsaved edits asks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QUndoStack>
#include <filesystem>
#include <fstream>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "onnxlens/layout/LayoutCache.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/workflows/EditScript.h"
#include "widgets/dialogs/AttributeDialog.h"
#include "widgets/dialogs/SetDimsDialog.h"
#include "widgets/edit/EditActions.h"
#include "widgets/edit/EditController.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/panels/RunPanel.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens {
namespace {

namespace fs = std::filesystem;
using gui::MainWindow;
using widgets::EditController;
using widgets::GraphPage;

// Clicks `button` of the next modal message box (polling until one shows, up to 20 s); the
// returned string is its text once answered.
class BoxAnswerer : public QObject {
  public:
    explicit BoxAnswerer(QMessageBox::StandardButton button) : button_(button) {
        QObject::connect(&timer_, &QTimer::timeout, this, [this] {
            auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
            if (!box) return;
            timer_.stop();
            text_ = box->text();
            name_ = box->objectName();
            if (QAbstractButton* b = box->button(button_))
                b->click();
            else
                box->reject();
        });
        timer_.start(20);
    }
    bool answered() const { return !name_.isEmpty() || !text_.isEmpty(); }
    QString name() const { return name_; }

  private:
    QMessageBox::StandardButton button_;
    QTimer timer_;
    QString text_, name_;
};

class EditWindowTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        testing::clearSettings();
        qRegisterMetaType<widgets::GraphPage*>();
        cnn_ = testing::writeModel(dir_, "small_cnn.onnx", *testing::makeSmallCnn());
    }

    // Applies the edits on the current tab and waits for the edited page.
    GraphPage* edit(MainWindow& window, std::vector<ModelEdit> edits) {
        QSignalSpy replaced(&window, &MainWindow::pageReplaced);
        if (!window.editActions()->applyEdits(std::move(edits))) return nullptr;
        if (!testing::waitFor([&] { return replaced.count() > 0; })) return nullptr;
        GraphPage* page = window.currentPage();
        if (!testing::waitFor([&] { return page->isDrawn(); })) return nullptr;
        return page;
    }

    // Triggers `action` (undo or redo) and waits for the page it brings.
    GraphPage* step(MainWindow& window, QAction* action) {
        QSignalSpy replaced(&window, &MainWindow::pageReplaced);
        action->trigger();
        if (!testing::waitFor([&] { return replaced.count() > 0; })) return nullptr;
        return window.currentPage();
    }

    static QString inputName(const GraphPage* page) {
        return QString::fromStdString(page->document().loaded.proto->graph().input(0).name());
    }

    static bool saveAndWait(MainWindow& window, const QString& path) {
        EditController* edits = EditController::of(window.currentPage());
        QSignalSpy saved(edits, &EditController::saved);
        QSignalSpy failed(edits, &EditController::saveFailed);
        if (!window.saveCurrentAs(path)) return false;
        testing::waitFor([&] { return saved.count() + failed.count() > 0; });
        return saved.count() == 1;
    }

    QTemporaryDir dir_;
    QString cnn_;
};

TEST_F(EditWindowTest, AnEditKeepsTheZoomThePlaceAndTheSelection) {
    // Zoomed in on the last operator with it selected, an edit elsewhere (metadata) must not
    // throw the view back to the graph's top, and no group of the unchanged drawing goes to
    // Graphviz again (the layout cache).
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    const auto& view = *page->shownViewGraph();
    int target = -1;
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n)
        if (view.nodes[static_cast<std::size_t>(n)].kind == ViewNode::Kind::Operator) target = n;
    ASSERT_GE(target, 0);
    const std::string targetName = view.nodes[static_cast<std::size_t>(target)].name;
    page->view()->setZoom(2.0);
    page->scene()->selectNode(target);
    page->view()->centerOn(page->scene()->nodeItem(target)->sceneBoundingRect().center());
    const std::size_t hitsBefore = LayoutCache::shared().hits();

    page = edit(window, {setMetadataEdit("author", "place test")});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    const auto& edited = *page->shownViewGraph();
    int same = -1;
    for (int n = 0; n < static_cast<int>(edited.nodes.size()); ++n)
        if (edited.nodes[static_cast<std::size_t>(n)].name == targetName) same = n;
    ASSERT_GE(same, 0);
    ASSERT_TRUE(testing::waitFor([&] { return page->scene()->selectedNode() == same; }));
    EXPECT_NEAR(page->view()->zoom(), 2.0, 1e-6);
    const QPointF centre = page->view()->mapToScene(page->view()->viewport()->rect().center());
    const QRectF box = page->scene()->nodeItem(same)->sceneBoundingRect();
    EXPECT_LT(QLineF(centre, box.center()).length(), 4.0)
        << "the view is not where it was: centre " << centre.x() << "," << centre.y() << " node "
        << box.center().x() << "," << box.center().y();
    EXPECT_GT(LayoutCache::shared().hits(), hitsBefore);
}

TEST_F(EditWindowTest, AnEditMarksTheTabModifiedUndoAndRedoGoThroughIt) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    auto* tabs = window.findChild<QTabWidget*>();
    EXPECT_EQ(tabs->tabText(0), QStringLiteral("small_cnn.onnx"));
    EXPECT_FALSE(window.isModified(page));
    EXPECT_FALSE(window.editActions()->undoAction()->isEnabled());

    page = edit(window, {renameEdit("input", "image", RenameTarget::Tensor)});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    EXPECT_EQ(inputName(page), QStringLiteral("image"));
    EXPECT_TRUE(window.isModified(page));
    EXPECT_EQ(tabs->tabText(0), QStringLiteral("small_cnn.onnx*"));
    EXPECT_TRUE(window.windowTitle().startsWith(QStringLiteral("small_cnn.onnx*")));
    // The tab still stands for the file opened; the graph, panels and engine show the edit.
    EXPECT_EQ(window.filePathOf(page), QFileInfo(cnn_).absoluteFilePath());
    EXPECT_NE(page->document().path, QFileInfo(cnn_).absoluteFilePath());
    EXPECT_EQ(page->controller()->document()->path, page->document().path);
    EXPECT_EQ(QFileInfo(page->document().path).fileName(), QStringLiteral("small_cnn.onnx"));
    EXPECT_EQ(page->document().editedFrom, QFileInfo(cnn_).absoluteFilePath());
    EXPECT_TRUE(page->document().summary.checker.ok) << page->document().summary.checker.message;
    EXPECT_GE(page->shownViewGraph()->findNodeByName("image"), 0);
    EXPECT_TRUE(window.editActions()->undoAction()->isEnabled());
    EXPECT_TRUE(window.editActions()->undoAction()->text().contains(QStringLiteral("image")))
        << window.editActions()->undoAction()->text().toStdString();

    page = step(window, window.editActions()->undoAction());
    ASSERT_TRUE(page);
    EXPECT_EQ(inputName(page), QStringLiteral("input"));
    EXPECT_FALSE(window.isModified(page));
    EXPECT_EQ(tabs->tabText(0), QStringLiteral("small_cnn.onnx"));
    // Back to the model as loaded: its own file again.
    EXPECT_EQ(page->document().path, QFileInfo(cnn_).absoluteFilePath());

    page = step(window, window.editActions()->redoAction());
    ASSERT_TRUE(page);
    EXPECT_EQ(inputName(page), QStringLiteral("image"));
    EXPECT_TRUE(window.isModified(page));

    // Two more steps, undone at once: the history replays once to where it ends up.
    page = edit(window, {setMetadataEdit("author", "edit-window test")});
    ASSERT_TRUE(page);
    page = edit(window, {setDimEdit("image", 0, "1")});
    ASSERT_TRUE(page);
    EditController* edits = EditController::of(page);
    EXPECT_EQ(edits->undoStack()->count(), 3);
    EXPECT_EQ(edits->appliedEdits().size(), 3u);
    QSignalSpy replaced(&window, &MainWindow::pageReplaced);
    window.editActions()->undoAction()->trigger();
    window.editActions()->undoAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return replaced.count() > 0 && !edits->isBusy(); }));
    testing::waitFor([&] { return edits->appliedEdits().size() == 1; }, 10000);
    EXPECT_EQ(edits->appliedEdits().size(), 1u);
    EXPECT_EQ(inputName(window.currentPage()), QStringLiteral("image"));
    EXPECT_EQ(window.currentPage()->document().loaded.proto->metadata_props_size(), 0);
}

TEST_F(EditWindowTest, AFailingEditNamesItselfAndChangesNothing) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    QSignalSpy replaced(&window, &MainWindow::pageReplaced);
    EditController* edits = EditController::of(page);
    QSignalSpy failed(edits, &EditController::editFailed);
    // conv.weight is a name in use.
    ASSERT_TRUE(window.editActions()->applyEdits(
        {renameEdit("input", "conv.weight", RenameTarget::Tensor)}));
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() > 0; }));
    EXPECT_EQ(replaced.count(), 0);
    EXPECT_EQ(window.currentPage(), page);
    EXPECT_FALSE(window.isModified(page));
    EXPECT_EQ(edits->undoStack()->count(), 0);
    EXPECT_TRUE(window.lastEditError().contains(QStringLiteral("conv.weight")))
        << window.lastEditError().toStdString();
    auto* box = window.findChild<QMessageBox*>(QStringLiteral("editErrorBox"));
    ASSERT_TRUE(box);
    EXPECT_TRUE(box->text().contains(QStringLiteral("conv.weight"))) << box->text().toStdString();
    box->close();
    // A dim <= 0 is refused the same way.
    failed.clear();
    ASSERT_TRUE(window.editActions()->applyEdits({setDimEdit("input", 0, "0")}));
    ASSERT_TRUE(testing::waitFor([&] { return failed.count() > 0; }));
    EXPECT_EQ(replaced.count(), 0);
    EXPECT_FALSE(window.isModified(page));
}

TEST_F(EditWindowTest, SaveAsWritesACheckedModelThatReopensWithTheEdit) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {setDimEdit("input", 0, "2"), setMetadataEdit("author", "me")});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    const QString out = dir_.filePath(QStringLiteral("edited.onnx"));
    ASSERT_TRUE(saveAndWait(window, out)) << window.lastEditError().toStdString();
    page = window.currentPage();
    EXPECT_FALSE(window.isModified(page));
    EXPECT_EQ(window.filePathOf(page), QFileInfo(out).absoluteFilePath());
    EXPECT_EQ(window.findChild<QTabWidget*>()->tabText(0), QStringLiteral("edited.onnx"));
    // The original is untouched, the saved file passes the checker and has both edits.
    auto original = loadModel(cnn_.toStdString());
    ASSERT_TRUE(original);
    EXPECT_EQ(original->proto->graph().input(0).type().tensor_type().shape().dim(0).dim_param(),
              "batch");
    auto saved = loadModel(out.toStdString());
    ASSERT_TRUE(saved) << saved.error().message;
    auto summary = summarizeModel(*saved);
    ASSERT_TRUE(summary);
    EXPECT_TRUE(summary->checker.ok) << summary->checker.message;
    EXPECT_EQ(saved->proto->graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 2);
    ASSERT_EQ(saved->proto->metadata_props_size(), 1);
    EXPECT_EQ(saved->proto->metadata_props(0).value(), "me");
    // Reopened in the window: a second tab of the saved file would be the same tab.
    window.openFile(out);
    EXPECT_EQ(window.pageCount(), 1);
    // The edit history, as the CLI's --script reads it.
    EditController* edits = EditController::of(page);
    const QString script = dir_.filePath(QStringLiteral("edits.json"));
    ASSERT_EQ(edits->exportHistory(script), QString());
    auto replayed = engine::readEditScriptFile(script.toStdString());
    ASSERT_TRUE(replayed) << replayed.error().message;
    ASSERT_EQ(replayed->size(), 2u);
    EXPECT_EQ((*replayed)[0], setDimEdit("input", 0, "2"));
}

TEST_F(EditWindowTest, SaveOverTheOpenedFileAsksFirst) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {setMetadataEdit("author", "me")});
    ASSERT_TRUE(page);
    const auto before = fs::file_size(cnn_.toStdString());
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        EXPECT_FALSE(window.saveCurrent());
        EXPECT_EQ(cancel.name(), QStringLiteral("overwriteBox"));
    }
    EXPECT_EQ(fs::file_size(cnn_.toStdString()), before);
    EXPECT_TRUE(window.isModified(page));
    EditController* edits = EditController::of(page);
    QSignalSpy saved(edits, &EditController::saved);
    {
        BoxAnswerer save(QMessageBox::Save);
        EXPECT_TRUE(window.saveCurrent());
    }
    ASSERT_TRUE(testing::waitFor([&] { return saved.count() > 0; }));
    EXPECT_FALSE(window.isModified(window.currentPage()));
    auto reloaded = loadModel(cnn_.toStdString());
    ASSERT_TRUE(reloaded);
    ASSERT_EQ(reloaded->proto->metadata_props_size(), 1);
}

TEST_F(EditWindowTest, AFailedSaveSaysWhyAndLeavesEveryFile) {
    QDir(dir_.path()).mkdir(QStringLiteral("ro"));
    fs::path folder = dir_.filePath(QStringLiteral("ro")).toStdString();
    ::chmod(folder.c_str(), 0555);
    if (::access(folder.c_str(), W_OK) == 0) {
        // root writes anywhere chmod allows; sysfs refuses new files even to root.
        folder = "/sys";
        if (::access(folder.c_str(), W_OK) == 0 && std::ofstream(folder / "onnxlens-probe"))
            GTEST_SKIP() << "no folder this user cannot write to";
    }
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {setMetadataEdit("author", "me")});
    ASSERT_TRUE(page);
    const QString target = QString::fromStdString((folder / "edited.onnx").string());
    EXPECT_FALSE(saveAndWait(window, target));
    EXPECT_FALSE(fs::exists(folder / "edited.onnx"));
    auto* box = window.findChild<QMessageBox*>(QStringLiteral("saveErrorBox"));
    ASSERT_TRUE(box);
    EXPECT_TRUE(box->text().contains(QStringLiteral("edited.onnx")));
    EXPECT_FALSE(box->informativeText().isEmpty());
    EXPECT_TRUE(window.isModified(window.currentPage()));
    EXPECT_EQ(window.filePathOf(window.currentPage()), QFileInfo(cnn_).absoluteFilePath());
    ::chmod(dir_.filePath(QStringLiteral("ro")).toLocal8Bit().constData(), 0755);
    EXPECT_TRUE(QDir(dir_.filePath(QStringLiteral("ro")))
                    .entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden)
                    .isEmpty());
}

TEST_F(EditWindowTest, ClosingWithUnsavedEditsAsks) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {setMetadataEdit("author", "me")});
    ASSERT_TRUE(page);
    auto* tabs = window.findChild<QTabWidget*>();
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        emit tabs->tabCloseRequested(0);
        EXPECT_EQ(cancel.name(), QStringLiteral("unsavedEditsBox"));
    }
    EXPECT_EQ(window.pageCount(), 1);
    {
        BoxAnswerer cancel(QMessageBox::Cancel);
        EXPECT_FALSE(window.close());
        EXPECT_EQ(cancel.name(), QStringLiteral("unsavedEditsBox"));
    }
    EXPECT_TRUE(window.isVisible());
    {
        BoxAnswerer discard(QMessageBox::Discard);
        emit tabs->tabCloseRequested(0);
        EXPECT_TRUE(discard.answered());
    }
    EXPECT_EQ(window.pageCount(), 0);
    // An unmodified tab closes without asking.
    ASSERT_TRUE(testing::openAndDraw(window, cnn_));
    emit tabs->tabCloseRequested(0);
    EXPECT_EQ(window.pageCount(), 0);
}

TEST_F(EditWindowTest, SaveChosenWhenClosingSavesThenCloses) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {setMetadataEdit("author", "closing")});
    ASSERT_TRUE(page);
    auto* tabs = window.findChild<QTabWidget*>();
    {
        BoxAnswerer save(QMessageBox::Save);
        emit tabs->tabCloseRequested(0);
        EXPECT_EQ(save.name(), QStringLiteral("unsavedEditsBox"));
    }
    ASSERT_TRUE(testing::waitFor([&] { return window.pageCount() == 0; }));
    auto saved = loadModel(cnn_.toStdString());
    ASSERT_TRUE(saved);
    ASSERT_EQ(saved->proto->metadata_props_size(), 1);
    EXPECT_EQ(saved->proto->metadata_props(0).value(), "closing");
}

TEST_F(EditWindowTest, AModelWithExternalDataIsEditedBesideItsWeightsWithoutCopyingThem) {
    QDir(dir_.path()).mkdir(QStringLiteral("ext"));
    const QString path = dir_.filePath(QStringLiteral("ext/model.onnx"));
    {
        auto model = testing::makeSmallCnn();
        ModelWriteOptions options;
        options.forceExternalData = true;
        ASSERT_TRUE(writeModelFile(*model, path.toStdString(), options));
    }
    const QDir folder(dir_.filePath(QStringLiteral("ext")));
    const auto filesNow = [&] { return folder.entryList(QDir::Files | QDir::Hidden, QDir::Name); };
    const QStringList before = filesNow();
    ASSERT_EQ(before, (QStringList{"model.onnx", "model.onnx.data"}));
    const auto dataBytes = QFileInfo(folder.filePath("model.onnx.data")).size();
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, path);
    ASSERT_TRUE(page);
    page = edit(window, {setMetadataEdit("author", "me")});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    // The edited model sits beside the original, reading the same data file.
    EXPECT_EQ(QFileInfo(page->document().path).absolutePath(), folder.absolutePath());
    EXPECT_TRUE(QFileInfo(page->document().path).fileName().startsWith(QStringLiteral(".")));
    EXPECT_EQ(filesNow().size(), 3) << filesNow().join(' ').toStdString();
    EXPECT_LT(QFileInfo(page->document().path).size(), 4096);
    EXPECT_GE(page->document().summary.initializers.externalCount, 1);
    // Saved elsewhere: its weights go to a data file beside the new model.
    QDir(dir_.path()).mkdir(QStringLiteral("out"));
    const QString out = dir_.filePath(QStringLiteral("out/edited.onnx"));
    ASSERT_TRUE(saveAndWait(window, out)) << window.lastEditError().toStdString();
    EXPECT_EQ(QFileInfo(out + QStringLiteral(".data")).size(), dataBytes);
    auto saved = loadModel(out.toStdString());
    ASSERT_TRUE(saved) << saved.error().message;
    EXPECT_EQ(saved->proto->metadata_props_size(), 1);
    EXPECT_TRUE(summarizeModel(*saved)->checker.ok);
    // The saved file is the tab's model now; closing the tab leaves the folders as they were.
    testing::waitFor([&] { return window.currentPage()->isDrawn(); });
    EXPECT_FALSE(window.isModified(window.currentPage()));
    emit window.findChild<QTabWidget*>()->tabCloseRequested(0);
    EXPECT_EQ(window.pageCount(), 0);
    QTest::qWait(100);
    EXPECT_EQ(filesNow(), before);
}

TEST_F(EditWindowTest, SavingOverAModelWithExternalDataRewritesItsDataFileSafely) {
    const QString path = dir_.filePath(QStringLiteral("model.onnx"));
    auto model = testing::makeSmallCnn();
    const std::string weights = model->graph().initializer(2).raw_data();
    ModelWriteOptions options;
    options.forceExternalData = true;
    ASSERT_TRUE(writeModelFile(*model, path.toStdString(), options));
    MainWindow window;
    window.show();
    ASSERT_TRUE(testing::openAndDraw(window, path));
    ASSERT_TRUE(
        edit(window, {addOutputEdit("logits"), removeOutputEdit("probabilities"), pruneEdit()}))
        << window.lastEditError().toStdString();
    EditController* edits = EditController::of(window.currentPage());
    QSignalSpy saved(edits, &EditController::saved);
    {
        BoxAnswerer save(QMessageBox::Save);
        EXPECT_TRUE(window.saveCurrent());
    }
    ASSERT_TRUE(testing::waitFor([&] { return saved.count() == 1; }))
        << window.lastEditError().toStdString();
    // The tab's model is the saved file now, its history restarted from it.
    EXPECT_EQ(window.currentPage()->document().path, QFileInfo(path).absoluteFilePath());
    EXPECT_FALSE(window.isModified(window.currentPage()));
    EXPECT_EQ(edits->undoStack()->count(), 0);
    auto reloaded = loadModel(path.toStdString());
    ASSERT_TRUE(reloaded) << reloaded.error().message;
    ASSERT_EQ(reloaded->proto->graph().output_size(), 1);
    EXPECT_EQ(reloaded->proto->graph().output(0).name(), "logits");
    EXPECT_EQ(reloaded->proto->graph().node_size(), 5);  // the Softmax pruned
    const auto& fc = reloaded->proto->graph().initializer(2);
    ASSERT_EQ(fc.name(), "fc.weight");
    auto bytes = readExternalData(fc, reloaded->directory);
    ASSERT_TRUE(bytes) << bytes.error().message;
    EXPECT_EQ(*bytes, weights);
    EXPECT_FALSE(QDir(dir_.path())
                     .entryList(QStringList{QStringLiteral(".model.onnx.onnxlens-edit-*")},
                                QDir::Files | QDir::Hidden)
                     .size());
}

TEST(EditDialogs, SetDimsRefusesADimOfZeroAndGivesOneEditPerChangedAxis) {
    widgets::SetDimsDialog dialog(QStringLiteral("input"), {"batch", "1", "28", "28"});
    EXPECT_FALSE(dialog.okButton()->isEnabled());  // nothing changed yet
    dialog.axisEdit(0)->setText(QStringLiteral("0"));
    EXPECT_FALSE(dialog.okButton()->isEnabled());
    EXPECT_TRUE(dialog.problem().contains(QStringLiteral("positive")));
    dialog.axisEdit(0)->setText(QStringLiteral("-3"));
    EXPECT_FALSE(dialog.okButton()->isEnabled());
    dialog.axisEdit(0)->setText(QStringLiteral("4"));
    dialog.axisEdit(2)->setText(QStringLiteral("height"));
    EXPECT_TRUE(dialog.okButton()->isEnabled());
    const auto edits = dialog.edits();
    ASSERT_EQ(edits.size(), 2u);
    EXPECT_EQ(edits[0], setDimEdit("input", 0, "4"));
    EXPECT_EQ(edits[1], setDimEdit("input", 2, "height"));
}

TEST(EditDialogs, AttributeDialogOffersTheSchemaAttributesAndChecksTheValueType) {
    auto model = testing::makeSmallCnn();
    const onnx::NodeProto& conv = model->graph().node(0);
    widgets::AttributeDialog dialog(conv, QStringLiteral("conv1"), 13);
    QStringList names;
    for (int i = 0; i < dialog.attributeBox()->count(); ++i)
        names << dialog.attributeBox()->itemText(i);
    EXPECT_TRUE(names.contains(QStringLiteral("group")));
    EXPECT_TRUE(names.contains(QStringLiteral("kernel_shape")));
    dialog.attributeBox()->setCurrentText(QStringLiteral("kernel_shape"));
    EXPECT_EQ(dialog.valueEdit()->text(), QStringLiteral("[3, 3]"));
    EXPECT_FALSE(dialog.okButton()->isEnabled());  // unchanged
    dialog.attributeBox()->setCurrentText(QStringLiteral("group"));
    dialog.valueEdit()->setText(QStringLiteral("two"));
    EXPECT_FALSE(dialog.okButton()->isEnabled());
    dialog.valueEdit()->setText(QStringLiteral("2"));
    EXPECT_TRUE(dialog.okButton()->isEnabled());
    EXPECT_EQ(dialog.edit(), setAttributeEdit("conv1", "group", "2"));
}

TEST_F(EditWindowTest, TheEditMenuAndTheSaveShortcuts) {
    MainWindow window;
    QStringList menus;
    for (QAction* action : window.menuBar()->actions()) menus << action->text();
    ASSERT_GE(menus.size(), 2);
    EXPECT_EQ(menus[1], QStringLiteral("&Edit"));
    auto* undo = window.editActions()->undoAction();
    EXPECT_EQ(undo->shortcut(), QKeySequence(QStringLiteral("Ctrl+Z")));
    EXPECT_EQ(window.editActions()->redoAction()->shortcut(),
              QKeySequence(QStringLiteral("Ctrl+Shift+Z")));
    QStringList keys;
    for (QAction* action : window.findChildren<QAction*>())
        if (!action->shortcut().isEmpty())
            keys << action->shortcut().toString(QKeySequence::PortableText);
    EXPECT_TRUE(keys.contains(QStringLiteral("Ctrl+S")));
    EXPECT_TRUE(keys.contains(QStringLiteral("Ctrl+Shift+S")));
}

TEST_F(EditWindowTest, RunUsesTheEditedModel) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {addOutputEdit("relu_out")});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    auto* run = window.runPanel();
    ASSERT_TRUE(testing::waitFor([&] { return run->isReady(); }, 60000));
    QSignalSpy finished(run, &widgets::RunPanel::runFinished);
    run->runAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 60000));
    ASSERT_TRUE(run->lastOutcome());
    QStringList outputs;
    for (const auto& output : run->lastOutcome()->outputs)
        outputs << QString::fromStdString(output.name);
    EXPECT_TRUE(outputs.contains(QStringLiteral("relu_out"))) << outputs.join(' ').toStdString();
    EXPECT_TRUE(outputs.contains(QStringLiteral("probabilities")));
}

TEST_F(EditWindowTest, ContextMenusOfferTheEditsThatFitWhatWasClicked) {
    MainWindow window;
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    auto* actions = window.editActions();
    using Target = widgets::EditActions::Target;
    auto texts = [&](const Target& target) {
        std::unique_ptr<QMenu> menu(actions->contextMenuFor(target, &window));
        QStringList list;
        for (QAction* a : menu->actions()) list << a->text().remove('&');
        return list;
    };
    const auto& view = *page->shownViewGraph();
    const int input = view.findNodeByName("input");
    ASSERT_GE(input, 0);
    page->scene()->selectNode(input);
    Target selected = actions->selectedTarget();
    EXPECT_EQ(selected.kind, Target::Kind::Input);
    EXPECT_EQ(selected.name, QStringLiteral("input"));
    EXPECT_TRUE(texts(selected).contains(QStringLiteral("Set Dimensions…")));
    EXPECT_TRUE(texts(selected).contains(QStringLiteral("Make Batch Dynamic")));
    int conv = -1;
    for (std::size_t n = 0; n < view.nodes.size(); ++n)
        if (view.nodes[n].name == "conv1") conv = static_cast<int>(n);
    ASSERT_GE(conv, 0);
    page->scene()->selectNode(conv);
    selected = actions->selectedTarget();
    EXPECT_EQ(selected.kind, Target::Kind::Operator);
    const QStringList node = texts(selected);
    EXPECT_TRUE(node.contains(QStringLiteral("Delete Node")));
    EXPECT_TRUE(node.contains(QStringLiteral("Edit Attribute…")));
    EXPECT_TRUE(node.contains(QStringLiteral("Add conv_out as Graph Output")));
    EXPECT_TRUE(node.contains(QStringLiteral("Replace Initializer conv.weight…")));
    const QStringList tensor =
        texts(Target{Target::Kind::Tensor, QStringLiteral("relu_out"), -1, 0});
    EXPECT_TRUE(tensor.contains(QStringLiteral("Add as Graph Output")));
    EXPECT_TRUE(tensor.contains(QStringLiteral("Extract Subgraph Up To Here…")));
    // Deleting the selected Relu from the Edit menu's action: bypassed, the graph one node less.
    int relu = -1;
    for (std::size_t n = 0; n < view.nodes.size(); ++n)
        if (view.nodes[n].name == "relu1") relu = static_cast<int>(n);
    page->scene()->selectNode(relu);
    const int before = page->document().loaded.proto->graph().node_size();
    page = edit(window, {deleteNodeEdit(actions->selectedTarget().name.toStdString())});
    ASSERT_TRUE(page) << window.lastEditError().toStdString();
    EXPECT_EQ(page->document().loaded.proto->graph().node_size(), before - 1);
    EXPECT_TRUE(page->document().summary.checker.ok);
}

// ONNXLENS_SCREENSHOT_DIR=DIR: the Edit menu and an edited, modified tab, for a look.
TEST_F(EditWindowTest, Screenshot) {
    const QByteArray out = qgetenv("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "ONNXLENS_SCREENSHOT_DIR not set";
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = testing::openAndDraw(window, cnn_);
    ASSERT_TRUE(page);
    page = edit(window, {renameEdit("input", "image", RenameTarget::Tensor)});
    ASSERT_TRUE(page);
    page = edit(window, {addOutputEdit("relu_out")});
    ASSERT_TRUE(page);
    QTest::qWait(300);
    const QDir dir(QString::fromLocal8Bit(out));
    EXPECT_TRUE(window.grab().save(dir.filePath(QStringLiteral("edit-window.png"))));
    QMenu* editMenu = nullptr;
    for (QAction* action : window.menuBar()->actions())
        if (action->text() == QStringLiteral("&Edit")) editMenu = action->menu();
    ASSERT_TRUE(editMenu);
    editMenu->popup(window.mapToGlobal(QPoint(60, 30)));
    QTest::qWait(200);
    EXPECT_TRUE(editMenu->grab().save(dir.filePath(QStringLiteral("edit-menu.png"))));
    editMenu->hide();
}

}  // namespace
}  // namespace onnxlens
