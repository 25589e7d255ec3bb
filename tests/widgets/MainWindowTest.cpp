// The window as a user drives it: opening from the command line, by dropping files, from the
// recent-files menu; a failed open; find; the node panel; export.
#include <gtest/gtest.h>

#include <QDockWidget>
#include <QDropEvent>
#include <QImage>
#include <QMimeData>
#include <QProcess>
#include <QScreen>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QXmlStreamReader>
#include <map>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/FindBar.h"
#include "widgets/graph/GraphExport.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphStyle.h"
#include "widgets/graph/GraphView.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/ComparePanel.h"
#include "widgets/panels/NodePanel.h"
#include "widgets/panels/RunPanel.h"

namespace onnxlens {
namespace {

using gui::MainWindow;
using widgets::GraphPage;

class MainWindowTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(dir_.isValid());
        testing::clearSettings();
        cnn_ = testing::writeModel(dir_, "small_cnn.onnx", *testing::makeSmallCnn());
        bert_ = testing::writeModel(dir_, "encoder.onnx", *testing::makeTransformerLike(40));
    }

    // Opens and waits until drawn.
    GraphPage* openAndDraw(MainWindow& window, const QString& path) {
        return testing::openAndDraw(window, path);
    }

    QTemporaryDir dir_;
    QString cnn_, bert_;
};

TEST_F(MainWindowTest, OpensModelsGivenOnTheCommandLineAsTabs) {
    // The real executable, offscreen: `onnxlens --new-instance a.onnx b.onnx`.
    QProcess gui;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir_.filePath("config"));
    gui.setProcessEnvironment(env);
    gui.start(ONNXLENS_GUI, {"--new-instance", "--exit-when-drawn", cnn_, bert_});
    ASSERT_TRUE(gui.waitForFinished(60000)) << "onnxlens did not finish";
    const QString out = QString::fromUtf8(gui.readAllStandardOutput());
    EXPECT_EQ(gui.exitCode(), 0) << gui.readAllStandardError().toStdString();
    EXPECT_TRUE(out.contains("drawn " + cnn_)) << out.toStdString();
    EXPECT_TRUE(out.contains("drawn " + bert_)) << out.toStdString();
    std::printf("[ timing ] onnxlens process start to both models drawn: %s",
                out.split('\n').filter("drawn").join(" | ").toStdString().c_str());
    std::printf("\n");
}

TEST_F(MainWindowTest, OpensAFileDroppedOnTheGraphView) {
    MainWindow window;
    window.show();
    GraphPage* first = openAndDraw(window, cnn_);
    ASSERT_NE(first, nullptr);
    // Drop on the graph view's viewport: the view must pass it on to the window.
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(bert_)});
    QWidget* target = first->view()->viewport();
    const QPoint at = target->rect().center();
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &enter);
    EXPECT_TRUE(enter.isAccepted());
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(target, &drop);
    EXPECT_TRUE(drop.isAccepted());
    ASSERT_TRUE(testing::waitFor([&] { return window.pageCount() == 2; }));
    EXPECT_EQ(window.currentPage()->document().path, QFileInfo(bert_).absoluteFilePath());
}

TEST_F(MainWindowTest, ReopensFromRecentFiles) {
    {
        MainWindow window;
        ASSERT_NE(openAndDraw(window, cnn_), nullptr);
        ASSERT_NE(openAndDraw(window, bert_), nullptr);
        EXPECT_EQ(window.recentFiles().first(), QFileInfo(bert_).absoluteFilePath());
        window.close();
    }
    MainWindow window;  // a new session
    ASSERT_EQ(window.recentFiles().size(), 2);
    EXPECT_EQ(window.recentFiles()[1], QFileInfo(cnn_).absoluteFilePath());
    window.openRecent(1);
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 1 && window.currentPage()->isDrawn(); }));
    EXPECT_EQ(window.currentPage()->document().path, QFileInfo(cnn_).absoluteFilePath());
    // Opening moved it to the top.
    EXPECT_EQ(window.recentFiles().first(), QFileInfo(cnn_).absoluteFilePath());
}

TEST_F(MainWindowTest, AFileThatFailsToLoadLeavesWhatWasOpenUntouched) {
    MainWindow window;
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    const QString broken = dir_.filePath("broken.onnx");
    QFile file(broken);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("this is not a protobuf at all \x01\x02\x03");
    file.close();
    QString failedPath, failedMessage;
    QObject::connect(&window, &MainWindow::openFailed, [&](const QString& p, const QString& m) {
        failedPath = p;
        failedMessage = m;
    });
    window.openFile(broken);
    ASSERT_TRUE(testing::waitFor([&] { return !failedPath.isEmpty(); }));
    EXPECT_TRUE(failedMessage.contains("broken.onnx")) << failedMessage.toStdString();
    EXPECT_EQ(window.pageCount(), 1);
    EXPECT_EQ(window.currentPage(), page);
    EXPECT_TRUE(page->isDrawn());
    EXPECT_FALSE(window.recentFiles().contains(broken));
}

TEST_F(MainWindowTest, FindSelectsAndCentresANodeInsideCollapsedGroups) {
    MainWindow window;
    window.show();
    GraphPage* page = openAndDraw(window, bert_);
    ASSERT_NE(page, nullptr);
    const auto& view = page->document().view;
    ASSERT_GT(view->operatorCount, 1000);  // opens collapsed
    const std::string target = "/encoder/layer.17/attention/self/Softmax";
    const int node = view->findNodeByName(target);
    ASSERT_GE(node, 0);
    EXPECT_EQ(page->scene()->nodeItem(node), nullptr);  // hidden inside a collapsed group

    page->showFind();
    page->findBar()->setQuery("layer.17/attention/self/soft");
    ASSERT_EQ(page->findBar()->resultCount(), 1);
    int revealed = -1;
    QObject::connect(page, &GraphPage::nodeRevealed, [&](int n) { revealed = n; });
    page->findBar()->chooseResult(0);
    ASSERT_TRUE(testing::waitFor([&] { return revealed >= 0; }));
    EXPECT_EQ(revealed, node);
    EXPECT_EQ(page->scene()->selectedNode(), node);
    auto* item = page->scene()->nodeItem(node);
    ASSERT_NE(item, nullptr);
    EXPECT_TRUE(item->isSelected());
    // Centred: the node's centre is the view's centre (within a few pixels).
    const QPoint centre = page->view()->mapFromScene(item->sceneBoundingRect().center());
    const QPoint viewCentre = page->view()->viewport()->rect().center();
    EXPECT_LE((centre - viewCentre).manhattanLength(), 8);
    EXPECT_GE(page->view()->zoom(), widgets::GraphView::kLegibleZoom);  // its text reads
    // The groups on the way were expanded; the other layers stay collapsed.
    for (int g : view->groupChain(view->nodes[node].group))
        EXPECT_TRUE(page->scene()->isExpanded(g));
    // The node panel follows the selection.
    EXPECT_TRUE(window.nodePanel()->sectionRows("Node").join("\n").contains("Softmax"));
    // Search by op type and by tensor name too.
    EXPECT_EQ(widgets::FindBar::findNodes(*view, "LayerNorm/ReduceMean").size(), 81u);
    EXPECT_EQ(widgets::FindBar::findNodes(*view, "input_ids").size(), 2u);  // input + Gather
}

TEST_F(MainWindowTest, NodePanelShowsSchemaAttributesAndSymbolicShapes) {
    MainWindow window;
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    const int conv = page->document().view->findNodeByName("conv1");
    page->scene()->selectNode(conv);
    auto* panel = window.nodePanel();
    const QString general = panel->sectionRows("Node").join("\n");
    EXPECT_TRUE(general.contains("op type | Conv"));
    EXPECT_TRUE(general.contains("domain | ai.onnx"));
    EXPECT_TRUE(general.contains("defined in opset | 11"))
        << general.toStdString();  // Conv-11 at opset 13
    const QStringList attributes = panel->sectionRows("Attributes");
    EXPECT_TRUE(attributes.contains("kernel_shape | 3x3")) << attributes.join(", ").toStdString();
    EXPECT_TRUE(attributes.contains("strides | 1x1"));
    QTreeWidgetItem* x = panel->rowFor("Inputs", "X");
    ASSERT_NE(x, nullptr);
    EXPECT_EQ(x->text(1), "input");
    EXPECT_EQ(x->text(2), "float32");
    EXPECT_EQ(x->text(3), "batchx1x28x28");
    EXPECT_EQ(x->foreground(3).color(), widgets::GraphStyle::standard().symbolicDimColour);
    EXPECT_TRUE(x->toolTip(3).contains("batch"));
    QTreeWidgetItem* w = panel->rowFor("Inputs", "W");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->text(3), "8x1x3x3");
    EXPECT_NE(w->foreground(3).color(), widgets::GraphStyle::standard().symbolicDimColour);
    QTreeWidgetItem* y = panel->rowFor("Outputs", "Y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->text(3), "batchx8x26x26");  // from shape inference
    EXPECT_TRUE(panel->documentation()->toPlainText().contains("convolution"));
}

TEST_F(MainWindowTest, ExportsPngAndSvg) {
    MainWindow window;
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    const QString svg = dir_.filePath("graph.svg");
    const QString png = dir_.filePath("graph.png");
    ASSERT_EQ(window.exportCurrent(svg), QString());
    ASSERT_EQ(window.exportCurrent(png), QString());

    QFile file(svg);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QStringList texts;
    bool sawSvgRoot = false;
    while (!xml.atEnd()) {
        if (xml.readNext() == QXmlStreamReader::StartElement) {
            if (xml.name() == QLatin1String("svg")) sawSvgRoot = true;
            if (xml.name() == QLatin1String("text"))
                texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
        }
    }
    ASSERT_FALSE(xml.hasError()) << xml.errorString().toStdString();
    EXPECT_TRUE(sawSvgRoot);
    for (const char* label :
         {"Conv", "Relu", "MaxPool", "Flatten", "Gemm", "Softmax", "input", "probabilities"})
        EXPECT_TRUE(texts.contains(QString::fromLatin1(label))) << label;
    EXPECT_TRUE(texts.contains("8x1x3x3") || texts.join(" ").contains("<8x1x3x3>"));

    QImage image(png);
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.size(), widgets::pngSizeFor(*page->scene()));
    EXPECT_GT(image.width(), 100);
    EXPECT_GT(image.height(), 300);  // a vertical chain of seven boxes
    // Not blank: some pixels carry the Conv header's colour.
    const QColor layer = widgets::GraphStyle::standard().headerColour(NodeCategory::Layer);
    bool found = false;
    for (int y = 0; y < image.height() && !found; y += 2)
        for (int x = 0; x < image.width() && !found; x += 2)
            found = image.pixelColor(x, y) == layer;
    EXPECT_TRUE(found);
}

TEST_F(MainWindowTest, NoShortcutIsBoundTwice) {
    MainWindow window;
    // Every action of the window, its menus, panels and docks, with every key sequence it has.
    std::map<QString, QStringList> owners;
    for (QAction* action : window.findChildren<QAction*>())
        for (const QKeySequence& key : action->shortcuts())
            if (!key.isEmpty()) owners[key.toString(QKeySequence::PortableText)] << action->text();
    ASSERT_GT(owners.size(), 15u);  // the walk did reach the menus and panels
    for (const auto& [key, actions] : owners)
        EXPECT_EQ(actions.size(), 1)
            << key.toStdString() << " is bound to " << actions.join(", ").toStdString();
    EXPECT_TRUE(owners.count(QStringLiteral("Ctrl+Shift+E")));  // Export as SVG keeps it
}

TEST_F(MainWindowTest, OpensFittingTheScreenWithTheGraphTakingMostOfTheWindow) {
    MainWindow window;
    window.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
    const QRect screen = window.screen()->availableGeometry();
    EXPECT_LE(window.frameGeometry().height(), screen.height());
    EXPECT_LE(window.frameGeometry().width(), screen.width());
    // The Run and Compare docks wait until used.
    EXPECT_FALSE(window.runDock()->isVisible());
    EXPECT_FALSE(window.compareDock()->isVisible());
    EXPECT_FALSE(window.benchmarkDock()->isVisible());
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    EXPECT_GE(page->width() * page->height(), window.width() * window.height() / 2);
}

TEST_F(MainWindowTest, RunShowsTheRunDock) {
    MainWindow window;
    window.show();
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    QAction* run = window.runPanel()->runAction();
    ASSERT_TRUE(testing::waitFor([&] { return run->isEnabled(); }));
    EXPECT_FALSE(window.runDock()->isVisible());
    run->trigger();
    EXPECT_TRUE(window.runDock()->isVisible());
    // Tabbed with Compare and Benchmark, not stacked beside them.
    EXPECT_TRUE(window.tabifiedDockWidgets(window.runDock()).contains(window.compareDock()));
}

TEST_F(MainWindowTest, CompareAndBenchmarkShowTheirDocks) {
    MainWindow window;
    window.show();
    GraphPage* page = openAndDraw(window, cnn_);
    ASSERT_NE(page, nullptr);
    QAction* compare = window.comparePanel()->compareAction();
    QAction* benchmark = window.benchmarkPanel()->startAction();
    ASSERT_TRUE(testing::waitFor([&] { return compare->isEnabled() && benchmark->isEnabled(); }));
    EXPECT_FALSE(window.compareDock()->isVisible());
    EXPECT_FALSE(window.benchmarkDock()->isVisible());
    compare->trigger();
    EXPECT_TRUE(window.compareDock()->isVisible());
    ASSERT_TRUE(testing::waitFor([&] { return compare->isEnabled(); }));
    benchmark->trigger();
    EXPECT_TRUE(window.benchmarkDock()->isVisible());
    EXPECT_TRUE(testing::waitFor([&] { return !window.benchmarkPanel()->isRunning(); }));
}

TEST_F(MainWindowTest, TabsOfFilesCalledModelOnnxAreNamedByTheirFolder) {
    EXPECT_EQ(MainWindow::tabTitleFor(QStringLiteral("/data/resnet50/model.onnx")),
              QStringLiteral("resnet50"));
    EXPECT_EQ(MainWindow::tabTitleFor(QStringLiteral("/data/resnet50/resnet.onnx")),
              QStringLiteral("resnet.onnx"));
    ASSERT_TRUE(QDir(dir_.path()).mkpath(QStringLiteral("bert_base")));
    const QString path =
        testing::writeModel(dir_, QStringLiteral("bert_base/model.onnx"), *testing::makeSmallCnn());
    MainWindow window;
    window.show();
    GraphPage* page = openAndDraw(window, path);
    ASSERT_NE(page, nullptr);
    auto* tabs = window.findChild<QTabWidget*>();
    ASSERT_NE(tabs, nullptr);
    EXPECT_EQ(tabs->tabText(tabs->indexOf(page)), QStringLiteral("bert_base"));
    EXPECT_EQ(tabs->tabToolTip(tabs->indexOf(page)), QFileInfo(path).absoluteFilePath());
}

TEST_F(MainWindowTest, TheFirstViewOfALargeModelShowsItsInputsAtALegibleZoom) {
    // 1,254 operators: opens collapsed, a column of 250 blocks far taller than the window.
    const QString path =
        testing::writeModel(dir_, QStringLiteral("decoder.onnx"), *testing::makeMaskedDecoder(250));
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    GraphPage* page = openAndDraw(window, path);
    ASSERT_NE(page, nullptr);
    ASSERT_GT(page->document().view->operatorCount, 1000);
    const QRectF inputs = page->scene()->inputsRect();
    ASSERT_TRUE(inputs.isValid());
    const QRectF visible =
        page->view()->mapToScene(page->view()->viewport()->rect()).boundingRect();
    EXPECT_TRUE(visible.contains(inputs)) << "inputs at " << inputs.x() << "," << inputs.y();
    EXPECT_GE(page->view()->zoom(), widgets::GraphView::kLegibleZoom);
    // The first block is drawn in view as well, below the inputs.
    const auto& view = *page->document().view;
    int first = -1;
    for (int g = 0; g < static_cast<int>(view.groups.size()); ++g)
        if (view.groups[g].path == "/layers.0") first = g;
    ASSERT_GE(first, 0);
    ASSERT_NE(page->scene()->groupItem(first), nullptr);
    EXPECT_TRUE(visible.intersects(page->scene()->groupItem(first)->sceneBoundingRect()));
}

}  // namespace
}  // namespace onnxlens
