// The scene's composition of per-group layouts: collapse and expand, ports, labels, and the
// timings of opening and expanding (reported, not asserted, except for generous bounds).
#include <gtest/gtest.h>

#include <set>

#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "widgets/graph/GraphEdgeItem.h"
#include "widgets/graph/GraphExport.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/workers/ModelDocument.h"

namespace onnxlens {
namespace {

using widgets::GraphScene;

std::shared_ptr<const ViewGraph> viewOf(std::shared_ptr<onnx::ModelProto> model) {
    auto view = buildViewGraph(std::move(model));
    EXPECT_TRUE(view);
    return std::make_shared<const ViewGraph>(std::move(view.value()));
}

int groupAt(const ViewGraph& view, const std::string& path) {
    for (int g = 0; g < static_cast<int>(view.groups.size()); ++g)
        if (view.groups[g].path == path) return g;
    return -1;
}

TEST(GraphScene, DrawsEveryNodeAndLabelsEveryEdgeOfAFlatModel) {
    GraphScene scene(viewOf(testing::makeSmallCnn()));
    scene.expandForOverview();
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    const auto& view = scene.view();
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n) {
        auto* item = scene.nodeItem(n);
        ASSERT_NE(item, nullptr) << view.nodes[n].name;
        // Items do not overlap.
        for (int m = n + 1; m < static_cast<int>(view.nodes.size()); ++m)
            EXPECT_FALSE(
                item->sceneBoundingRect()
                    .adjusted(3, 3, -3, -3)
                    .intersects(scene.nodeItem(m)->sceneBoundingRect().adjusted(3, 3, -3, -3)));
    }
    EXPECT_EQ(scene.edgeItems().size(), view.edges.size());
    QStringList labels;
    for (auto* e : scene.edgeItems()) labels << e->labelText();
    EXPECT_TRUE(labels.contains("batchx8x26x26"));
    EXPECT_TRUE(labels.contains("batchx10"));
}

TEST(GraphScene, LargeModelsOpenCollapsedAndExpandingAddsOnlyThatGroupsInside) {
    GraphScene scene(viewOf(testing::makeTransformerLike(40)));
    const auto& view = scene.view();
    scene.expandForOverview();
    std::vector<int> groups;
    scene.layoutRequest(groups);
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    const int encoder = groupAt(view, "/encoder");
    const int layer3 = groupAt(view, "/encoder/layer.3");
    ASSERT_GE(layer3, 0);
    EXPECT_FALSE(scene.isExpanded(encoder));
    ASSERT_NE(scene.groupItem(encoder), nullptr);
    EXPECT_FALSE(scene.groupItem(encoder)->isExpanded());
    EXPECT_EQ(scene.nodeItem(view.findNodeByName("/encoder/layer.3/attention/self/MatMul")),
              nullptr);

    scene.setExpanded(encoder, true);
    scene.layoutRequest(groups);
    // Only the encoder's level is laid out; the root keeps its layout, the encoder's box grows.
    EXPECT_EQ(groups, (std::vector<int>{encoder}));
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    EXPECT_NE(scene.groupItem(layer3), nullptr);
    const int layer2 = groupAt(view, "/encoder/layer.2");
    const int layer4 = groupAt(view, "/encoder/layer.4");
    const QRectF above = scene.groupItem(layer2)->sceneBoundingRect();
    const QRectF below = scene.groupItem(layer4)->sceneBoundingRect();
    const QRectF closed = scene.groupItem(layer3)->sceneBoundingRect();
    scene.setExpanded(layer3, true);
    scene.layoutRequest(groups);
    std::set<int> expected = {layer3};
    for (int g = 0; g < static_cast<int>(view.groups.size()); ++g)
        if (view.isAncestor(layer3, g)) expected.insert(g);  // a small group opens all the way
    EXPECT_EQ(std::set<int>(groups.begin(), groups.end()), expected);
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    auto* matmul = scene.nodeItem(view.findNodeByName("/encoder/layer.3/attention/self/MatMul"));
    ASSERT_NE(matmul, nullptr);
    // Inside its group's frame.
    const QRectF open = scene.groupItem(layer3)->sceneBoundingRect();
    EXPECT_TRUE(open.contains(matmul->sceneBoundingRect()));
    // The rest stays in place: the layer above where it was, the layer below moved down by the
    // growth, the opened group's top where the closed box's was.
    EXPECT_EQ(scene.groupItem(layer2)->sceneBoundingRect().topLeft(), above.topLeft());
    EXPECT_NEAR(open.top(), closed.top(), 0.5);
    EXPECT_NEAR(scene.groupItem(layer4)->sceneBoundingRect().top() - below.top(),
                open.height() - closed.height(), 0.5);
    EXPECT_GE(scene.groupItem(layer4)->sceneBoundingRect().top(), open.bottom());
    // Collapsing again and reopening reuse the cached inside: nothing is laid out.
    scene.setExpanded(layer3, false);
    EXPECT_FALSE(scene.needsLayout());
    ASSERT_NE(scene.groupItem(layer3), nullptr);
    EXPECT_FALSE(scene.groupItem(layer3)->isExpanded());
    EXPECT_NEAR(scene.groupItem(layer4)->sceneBoundingRect().top(), below.top(), 0.5);
    scene.setExpanded(layer3, true);
    EXPECT_FALSE(scene.needsLayout());
    EXPECT_NE(scene.nodeItem(view.findNodeByName("/encoder/layer.3/attention/self/MatMul")),
              nullptr);
}

TEST(GraphScene, CollapsedBlocksStackTopToBottomInLayerOrder) {
    const int layers = 30;
    GraphScene scene(viewOf(testing::makeMaskedDecoder(layers)));
    scene.expandForOverview(0, 1);  // every group collapsed
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    const auto& view = scene.view();
    QRectF previous;
    for (int l = 0; l < layers; ++l) {
        const int g = groupAt(view, "/layers." + std::to_string(l));
        ASSERT_GE(g, 0);
        auto* item = scene.groupItem(g);
        ASSERT_NE(item, nullptr) << l;
        EXPECT_FALSE(item->isExpanded());
        const QRectF rect = item->sceneBoundingRect();
        if (l > 0) {
            EXPECT_GE(rect.top(), previous.bottom())
                << "layers." << l << " is not below layers." << l - 1;
        }
        previous = rect;
    }
    // A column, not a strip: the mask's edges to every layer are stubs, not edges.
    const QRectF content = scene.contentRect();
    EXPECT_LE(content.width(), 3 * content.height());
    EXPECT_GT(content.height(), content.width());
}

TEST(GraphScene, ClickingAStubSelectsTheTensorsProducer) {
    GraphScene scene(viewOf(testing::makeMaskedDecoder(4)));
    scene.expandForOverview();  // small: fully open
    ASSERT_EQ(widgets::layoutSceneInProcess(scene), QString());
    const auto& view = scene.view();
    const int reader = view.findNodeByName("/layers.2/attention/Add");
    auto* item = scene.nodeItem(reader);
    ASSERT_NE(item, nullptr);
    std::size_t stubRow = 0;
    while (stubRow < view.nodes[reader].rows.size() &&
           view.nodes[reader].rows[stubRow].kind != ViewRow::Kind::Stub)
        ++stubRow;
    ASSERT_LT(stubRow, view.nodes[reader].rows.size());
    const int producer = view.tensors[view.nodes[reader].rows[stubRow].tensor].producer;
    ASSERT_EQ(view.nodes[producer].name, "/mask/Unsqueeze");

    widgets::GraphView graphView;
    graphView.setScene(&scene);
    graphView.resize(800, 600);
    graphView.show();
    graphView.setZoom(1.0);
    const QPointF onStub = item->mapToScene(item->rowRect(stubRow).center());
    graphView.centerOn(onStub);
    ASSERT_EQ(item->stubTensorAt(item->rowRect(stubRow).center()),
              view.nodes[reader].rows[stubRow].tensor);
    QTest::mouseClick(graphView.viewport(), Qt::LeftButton, {}, graphView.mapFromScene(onStub));
    EXPECT_TRUE(testing::waitFor([&] { return scene.selectedNode() == producer; }, 5000));
}

TEST(GraphScene, OutdatedResultsAreIgnored) {
    GraphScene scene(viewOf(testing::makeTransformerLike(2)));
    std::vector<int> groups;
    LayoutRequest request = scene.layoutRequest(groups);
    const auto generation = scene.generation();
    auto result = computeLayout(request);
    ASSERT_TRUE(result);
    scene.setExpanded(groupAt(scene.view(), "/encoder/layer.0"), false);
    EXPECT_FALSE(scene.applyLayout(groups, *result, generation));
    EXPECT_TRUE(scene.needsLayout());
}

// Opening to an interactive, drawn view through the real window and worker process, timed.
struct OpenTiming {
    double loadMs = 0, openToDrawnMs = 0, worstStallMs = 0;
};

OpenTiming timeOpen(const QString& path, gui::MainWindow& window) {
    OpenTiming timing;
    testing::StallMeter stalls;
    QElapsedTimer clock;
    clock.start();
    const int before = window.pageCount();
    window.openFile(path);
    EXPECT_TRUE(testing::waitFor([&] { return window.pageCount() > before; }, 120000));
    auto* page = window.page(window.pageCount() - 1);
    EXPECT_TRUE(
        testing::waitFor([&] { return page->isDrawn() || !page->lastError().isEmpty(); }, 120000));
    QApplication::processEvents();  // the first paint
    timing.openToDrawnMs = clock.nsecsElapsed() / 1e6;
    timing.loadMs = page->document().loadMs;
    timing.worstStallMs = stalls.worstStallMs();
    return timing;
}

TEST(GuiSpeed, OpenExpandAndStallTimes) {
    QTemporaryDir dir;
    gui::MainWindow window;
    window.resize(1400, 900);
    window.show();
    struct Case {
        const char* name;
        std::shared_ptr<onnx::ModelProto> model;
        double budgetMs;
    };
    std::vector<Case> cases = {
        {"cnn (6 nodes)", testing::makeSmallCnn(), 1000},
        {"encoder, 12 layers (397 nodes)", testing::makeTransformerLike(12), 1000},
        {"encoder, 60 layers (1,985 nodes, collapsed)", testing::makeTransformerLike(60), 1000},
        {"flat chain (2,000 nodes, no scopes)", testing::makeFlatGraph(2000), 1000},
        {"flat chain (5,000 nodes, no scopes)", testing::makeFlatGraph(5000), 3000},
        {"encoder, 303 layers (10,004 nodes, collapsed)", testing::makeTransformerLike(303), 3000},
    };
    for (auto& c : cases) {
        const QString path = testing::writeModel(dir,
                                                 QString::fromLatin1(c.name).section(' ', 0, 0) +
                                                     QString::number(window.pageCount()) + ".onnx",
                                                 *c.model);
        OpenTiming t = timeOpen(path, window);
        auto* page = window.currentPage();
        EXPECT_TRUE(page->isDrawn()) << c.name << ": " << page->lastError().toStdString();
        std::printf(
            "[ timing ] %-46s open-to-drawn %7.0f ms (load+view graph %6.0f ms, layout %6.0f ms), "
            "longest GUI stall %5.1f ms, budget %4.0f ms\n",
            c.name, t.openToDrawnMs, t.loadMs, page->lastLayoutMs(), t.worstStallMs, c.budgetMs);
    }
    // Expanding one layer of the 10,000-node model.
    auto* page = window.currentPage();
    const auto& view = page->document().view;
    const int encoder = groupAt(*view, "/encoder");
    testing::StallMeter stalls;
    QElapsedTimer clock;
    clock.start();
    int applied = 0;
    QObject::connect(page, &widgets::GraphPage::layoutApplied, [&](double) { ++applied; });
    double encoderMs = 0;  // the overview may have opened it already (its level holds 3 ranges)
    if (!page->scene()->isExpanded(encoder)) {
        page->scene()->setExpanded(encoder, true);
        ASSERT_TRUE(testing::waitFor([&] { return applied == 1; }, 60000))
            << page->lastError().toStdString();
        encoderMs = clock.nsecsElapsed() / 1e6;
    }
    // 303 layers are more than one level holds: they sit in Range groups of 150.
    const int layer = groupAt(*view, "/encoder/layer.150");
    const int range = view->groups[layer].parent;
    double rangeMs = 0;
    if (range != encoder) {
        clock.restart();
        page->scene()->setExpanded(range, true);
        const int expected = applied + 1;
        ASSERT_TRUE(testing::waitFor([&] { return applied == expected; }, 60000))
            << page->lastError().toStdString();
        rangeMs = clock.nsecsElapsed() / 1e6;
    }
    const int before = applied;
    clock.restart();
    page->scene()->setExpanded(layer, true);
    ASSERT_TRUE(testing::waitFor([&] { return applied == before + 1; }, 60000))
        << page->lastError().toStdString();
    const double layerMs = clock.nsecsElapsed() / 1e6;
    EXPECT_NE(
        page->scene()->nodeItem(view->findNodeByName("/encoder/layer.150/attention/self/Softmax")),
        nullptr);
    std::printf(
        "[ timing ] 10,004 nodes: expanding /encoder %.0f ms; its range of 150 layers %.0f ms; "
        "then "
        "/encoder/layer.150 %.0f ms (budget 500 ms); longest GUI stall %.1f ms\n",
        encoderMs, rangeMs, layerMs, stalls.worstStallMs());
}

}  // namespace
}  // namespace onnxlens
