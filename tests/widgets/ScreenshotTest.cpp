// Screenshots for the README, taken offscreen with QWidget::grab():
//   ONNXLENS_SCREENSHOT_DIR=docs widgets_tests --gtest_filter='Screenshots.*'
// Without the variable the test is skipped.
#include <gtest/gtest.h>

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLineEdit>
#include <QPixmap>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/charts/RooflineChart.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/panels/BenchmarkPanel.h"
#include "widgets/panels/SweepTab.h"

namespace onnxlens {
namespace {

// A ResNet-18-like CNN with PyTorch-style name scopes (/layer2/layer2.1/conv1/Conv).
std::shared_ptr<onnx::ModelProto> makeResNetLike() {
    using namespace testing;
    auto model = makeModelShell();
    auto& g = *model->mutable_graph();
    g.set_name("resnet_like");
    *g.add_input() = makeValueInfo("image", onnx::TensorProto::FLOAT, {"batch", "3", "224", "224"});
    int channels = 3;
    auto conv = [&](const std::string& scope, const std::string& in, int out, int kernel,
                    int stride) {
        const std::string w = scope + ".weight";
        *g.add_initializer() = makeFloatInitializer(w, {out, channels, kernel, kernel}, 0.001f);
        *g.add_initializer() = makeFloatInitializer(scope + ".bias", {out});
        auto* n = addNode(g, "Conv", scope + "/Conv", {in, w, scope + ".bias"},
                          {scope + "/Conv_output_0"});
        addIntsAttribute(n, "kernel_shape", {kernel, kernel});
        addIntsAttribute(n, "strides", {stride, stride});
        addIntsAttribute(n, "pads", {kernel / 2, kernel / 2, kernel / 2, kernel / 2});
        channels = out;
        return scope + "/Conv_output_0";
    };
    std::string x = conv("/conv1", "image", 64, 7, 2);
    addNode(g, "Relu", "/relu/Relu", {x}, {"/relu/Relu_output_0"});
    auto* pool = addNode(g, "MaxPool", "/maxpool/MaxPool", {"/relu/Relu_output_0"},
                         {"/maxpool/MaxPool_output_0"});
    addIntsAttribute(pool, "kernel_shape", {3, 3});
    addIntsAttribute(pool, "strides", {2, 2});
    addIntsAttribute(pool, "pads", {1, 1, 1, 1});
    x = "/maxpool/MaxPool_output_0";
    const int widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
        for (int block = 0; block < 2; ++block) {
            const std::string s = "/layer" + std::to_string(stage + 1) + "/layer" +
                                  std::to_string(stage + 1) + "." + std::to_string(block);
            const int stride = (stage > 0 && block == 0) ? 2 : 1;
            const int inChannels = channels;
            std::string a = conv(s + "/conv1", x, widths[stage], 3, stride);
            addNode(g, "Relu", s + "/relu/Relu", {a}, {s + "/relu/Relu_output_0"});
            std::string b = conv(s + "/conv2", s + "/relu/Relu_output_0", widths[stage], 3, 1);
            std::string shortcut = x;
            if (stride != 1 || inChannels != widths[stage]) {
                channels = inChannels;
                shortcut = conv(s + "/downsample/downsample.0", x, widths[stage], 1, stride);
            }
            addNode(g, "Add", s + "/Add", {b, shortcut}, {s + "/Add_output_0"});
            addNode(g, "Relu", s + "/relu_1/Relu", {s + "/Add_output_0"},
                    {s + "/relu_1/Relu_output_0"});
            x = s + "/relu_1/Relu_output_0";
        }
    }
    addNode(g, "GlobalAveragePool", "/avgpool/GlobalAveragePool", {x}, {"/avgpool/output_0"});
    auto* flatten = addNode(g, "Flatten", "/Flatten", {"/avgpool/output_0"}, {"/Flatten_output_0"});
    addIntAttribute(flatten, "axis", 1);
    *g.add_initializer() = makeFloatInitializer("fc.weight", {1000, 512}, 0.001f);
    *g.add_initializer() = makeFloatInitializer("fc.bias", {1000});
    auto* gemm =
        addNode(g, "Gemm", "/fc/Gemm", {"/Flatten_output_0", "fc.weight", "fc.bias"}, {"logits"});
    addIntAttribute(gemm, "transB", 1);
    *g.add_output() = makeValueInfo("logits", onnx::TensorProto::FLOAT, {"batch", "1000"});
    return model;
}

int groupAt(const ViewGraph& view, const std::string& path) {
    for (int g = 0; g < static_cast<int>(view.groups.size()); ++g)
        if (view.groups[g].path == path) return g;
    return -1;
}

TEST(Screenshots, MainWindowOnACnnAndATransformer) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshots";
    QTemporaryDir dir;
    gui::MainWindow window;
    window.resize(1600, 1000);
    window.show();

    window.openFile(testing::writeModel(dir, "resnet_like.onnx", *makeResNetLike()));
    ASSERT_TRUE(
        testing::waitFor([&] { return window.pageCount() == 1 && window.page(0)->isDrawn(); }));
    auto* cnn = window.page(0);
    const int block = cnn->document().view->findNodeByName("/layer2/layer2.0/conv1/Conv");
    cnn->revealNode(block);
    ASSERT_TRUE(testing::waitFor([&] { return cnn->scene()->selectedNode() == block; }));
    cnn->view()->setZoom(0.9);
    cnn->view()->centerOn(cnn->scene()->nodeItem(block)->sceneBoundingRect().center() +
                          QPointF(0, 120));
    QTest::qWait(200);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-cnn.png"));

    window.openFile(
        testing::writeModel(dir, "bert_like.onnx", *testing::makeTransformerLike(12, 768)));
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 2 && window.page(1)->isDrawn(); }, 60000));
    auto* bert = window.page(1);
    const auto& view = *bert->document().view;
    bert->scene()->expandForOverview(0, 1);  // everything collapsed but the root
    for (const char* path : {"/encoder", "/encoder/layer.1"})
        bert->scene()->setExpanded(groupAt(view, path), true);
    const int softmax = view.findNodeByName("/encoder/layer.1/attention/self/Softmax");
    bert->revealNode(softmax);
    ASSERT_TRUE(testing::waitFor([&] { return bert->scene()->selectedNode() == softmax; }, 60000));
    bert->view()->setZoom(0.85);
    // Every layout the expansions started has landed (the cache makes them quick): the view
    // must still show the revealed node.
    QTest::qWait(1500);
    bert->view()->centerOn(bert->scene()->nodeItem(softmax)->sceneBoundingRect().center());
    QTest::qWait(200);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-transformer.png"));
}

TEST(Screenshots, BenchmarkDockAndHeatOverlay) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshots";
    gui::MainWindow window;
    window.resize(1600, 1150);
    window.show();
    window.openFile(QString::fromUtf8(ONNXLENS_SOURCE_DIR) +
                    "/resources/samples/squeezenet1_1/model.onnx");
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 1 && window.page(0)->isDrawn(); }, 60000));
    auto* page = window.page(0);
    // The optimized graph: the export's Identity nodes (weights passed through) are gone, and
    // every node drawn is one the profile times.
    window.showOptimizedAction()->setChecked(true);
    ASSERT_TRUE(testing::waitFor(
        [&] { return page->shownViewGraph() != page->document().view && page->isDrawn(); }, 60000));
    auto* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(3);
    panel->runsSpin()->setValue(40);
    panel->threadsSpin()->setValue(1);
    panel->heatAction()->setChecked(true);
    QSignalSpy finished(panel, &widgets::BenchmarkPanel::finished);
    panel->startAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return finished.count() == 1; }, 120000));
    window.resizeDocks({window.benchmarkDock()}, {470}, Qt::Vertical);
    page->view()->setZoom(0.75);
    const int first = page->shownViewGraph()->findNodeByName("/features/features.3/expand3x3/Conv");
    if (first >= 0 && page->scene()->nodeItem(first))
        page->view()->centerOn(page->scene()->nodeItem(first)->sceneBoundingRect().center());
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-benchmark.png"));

    panel->resultTabs()->setCurrentIndex(1);  // Profile
    window.resizeDocks({window.benchmarkDock()}, {430}, Qt::Vertical);
    const int hottest =
        page->shownViewGraph()->findNodeByName(panel->result()->nodes.front().nodeName);
    page->revealNode(hottest);
    ASSERT_TRUE(testing::waitFor([&] { return page->scene()->selectedNode() == hottest; }));
    page->scene()->clearSelection();
    page->view()->setZoom(0.9);
    page->view()->centerOn(page->scene()->nodeItem(hottest)->sceneBoundingRect().center());
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-heat-overlay.png"));
}

// ResNet-50 (bench/make_bench_models.py ~/.cache/onnxlens-bench resnet50) benchmarked at one
// thread: the roofline, the graph coloured by FLOPs with the Model panel's totals, and a batch
// sweep. ONNXLENS_RESNET50 names another copy of the model.
TEST(Screenshots, RooflineCostAndSweepOfResNet50) {
    const QString out = qEnvironmentVariable("ONNXLENS_SCREENSHOT_DIR");
    if (out.isEmpty()) GTEST_SKIP() << "set ONNXLENS_SCREENSHOT_DIR to take the screenshots";
    QString model = qEnvironmentVariable("ONNXLENS_RESNET50");
    if (model.isEmpty())
        model = QDir::homePath() + "/.cache/onnxlens-bench/models/resnet50/model.onnx";
    if (!QFileInfo::exists(model)) GTEST_SKIP() << model.toStdString() << " is missing";
    gui::MainWindow window;
    window.resize(1600, 1150);
    window.show();
    window.openFile(model);
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 1 && window.page(0)->isDrawn(); }, 120000));
    auto* page = window.page(0);
    auto* panel = window.benchmarkPanel();
    panel->warmupSpin()->setValue(2);
    panel->runsSpin()->setValue(10);
    panel->threadsSpin()->setValue(1);
    panel->profileCheck()->setChecked(true);
    panel->heatAction()->setChecked(true);
    QSignalSpy ready(panel, &widgets::BenchmarkPanel::rooflineReady);
    panel->startAction()->trigger();
    ASSERT_TRUE(testing::waitFor([&] { return ready.count() == 1; }, 300000));
    panel->resultTabs()->setCurrentWidget(panel->rooflineChart());
    window.resizeDocks({window.benchmarkDock()}, {620}, Qt::Vertical);
    if (auto* modelDock = window.findChild<QDockWidget*>("modelDock"))
        window.resizeDocks({modelDock}, {430}, Qt::Horizontal);
    const int firstConv = page->shownViewGraph()->findNodeByName("/conv1/Conv");
    page->view()->setZoom(0.8);
    if (firstConv >= 0 && page->scene()->nodeItem(firstConv))
        page->view()->centerOn(page->scene()->nodeItem(firstConv)->sceneBoundingRect().center() +
                               QPointF(0, 120));
    QTest::qWait(400);
    ASSERT_TRUE(window.grab().save(out + "/roofline-resnet50.png"));

    window.colourByFlopsAction()->trigger();
    window.resizeDocks({window.benchmarkDock()}, {300}, Qt::Vertical);
    panel->resultTabs()->setCurrentIndex(1);  // Profile, with GFLOP/s and share of peak
    const int conv = page->shownViewGraph()->findNodeByName("/layer1/layer1.0/conv2/Conv");
    if (conv >= 0) {
        page->revealNode(conv);
        ASSERT_TRUE(testing::waitFor([&] { return page->scene()->selectedNode() == conv; }));
        page->view()->setZoom(0.8);
        page->view()->centerOn(page->scene()->nodeItem(conv)->sceneBoundingRect().center());
    }
    QTest::qWait(400);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-cost.png"));

    // The sweep: ResNet-50's batch is fixed at 1, the BERT-base export's sequence is free.
    const QString bert = QDir::homePath() + "/.cache/onnxlens-bench/models/bert_base/model.onnx";
    if (!QFileInfo::exists(bert)) GTEST_SKIP() << bert.toStdString() << " is missing";
    window.colourByFlopsAction()->setChecked(false);
    window.openFile(bert);
    ASSERT_TRUE(testing::waitFor(
        [&] { return window.pageCount() == 2 && window.page(1)->isDrawn(); }, 120000));
    auto* sweep = panel->sweepTab();
    panel->runsSpin()->setValue(3);
    panel->warmupSpin()->setValue(1);
    sweep->axesEdit()->setText("sequence=16,32,64,128");
    QSignalSpy swept(sweep, &widgets::SweepTab::finished);
    QSignalSpy sweepFailed(sweep, &widgets::SweepTab::failed);
    sweep->start();
    ASSERT_TRUE(testing::waitFor([&] { return swept.count() + sweepFailed.count() == 1; }, 300000));
    ASSERT_EQ(swept.count(), 1) << sweep->statusText().toStdString();
    panel->resultTabs()->setCurrentWidget(sweep);
    window.resizeDocks({window.benchmarkDock()}, {430}, Qt::Vertical);
    QTest::qWait(300);
    ASSERT_TRUE(window.grab().save(out + "/screenshot-sweep.png"));
}

}  // namespace
}  // namespace onnxlens
