#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "SyntheticModels.h"
#include "onnxlens/layout/GraphLayout.h"
#include "onnxlens/layout/LayoutCache.h"
#include "onnxlens/model/ViewGraph.h"

namespace onnxlens {
namespace {

LayoutNodeSpec box(const std::string& id, double width, double height) {
    LayoutNodeSpec node;
    node.id = id;
    node.width = width;
    node.height = height;
    return node;
}

LayoutGraphSpec diamond() {
    LayoutGraphSpec g;
    g.id = "diamond";
    g.nodes = {box("a", 80, 30), box("b", 60, 30), box("c", 60, 30), box("d", 100, 40)};
    g.edges = {{"a", "b", "1x3"}, {"a", "c", "1x3"}, {"b", "d", ""}, {"c", "d", "batchx3"}};
    return g;
}

TEST(GraphLayout, PlacesNodesTopToBottomWithTheirSizesAndRoutesSplines) {
    LayoutRequest request;
    request.graphs = {diamond()};
    auto result = computeLayout(request);
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_EQ(result->graphs.size(), 1u);
    const auto& g = result->graphs[0];
    ASSERT_EQ(g.nodes.size(), 4u);
    EXPECT_NEAR(g.nodes[0].width, 80, 1);
    EXPECT_NEAR(g.nodes[3].height, 40, 1);
    EXPECT_LT(g.nodes[0].y, g.nodes[1].y);  // a above b (y grows downwards)
    EXPECT_LT(g.nodes[1].y, g.nodes[3].y);
    EXPECT_NE(g.nodes[1].x, g.nodes[2].x);  // b and c side by side
    for (const auto& n : g.nodes) {
        EXPECT_GE(n.x - n.width / 2, -0.5);
        EXPECT_LE(n.x + n.width / 2, g.width + 0.5);
        EXPECT_GE(n.y - n.height / 2, -0.5);
        EXPECT_LE(n.y + n.height / 2, g.height + 0.5);
    }
    ASSERT_EQ(g.edges.size(), 4u);
    for (const auto& e : g.edges) {
        ASSERT_GE(e.spline.size(), 4u);
        EXPECT_EQ((e.spline.size() - 1) % 3, 0u);
        EXPECT_TRUE(e.hasArrow);
    }
    // Labelled edges get a label position, the unlabelled one none.
    EXPECT_TRUE(g.edges[0].hasLabel);
    EXPECT_FALSE(g.edges[2].hasLabel);
    // The first edge starts at a's bottom and its arrow ends at b's top.
    EXPECT_NEAR(g.edges[0].spline.front().y, g.nodes[0].y + 15, 2);
    EXPECT_NEAR(g.edges[0].arrowTip.y, g.nodes[1].y - 15, 2);
}

TEST(GraphLayout, NestedGraphsGiveTheirSizeToTheNodeThatHoldsThem) {
    LayoutRequest request;
    request.graphs.push_back(diamond());
    LayoutGraphSpec outer;
    outer.id = "outer";
    LayoutNodeSpec holder = box("holder", 20, 30);
    holder.nestedGraph = "diamond";
    outer.nodes = {box("in", 50, 20), holder};
    outer.edges = {{"in", "holder", ""}};
    request.graphs.push_back(outer);
    auto result = computeLayout(request);
    ASSERT_TRUE(result) << result.error().message;
    const auto& inner = result->graphs[0];
    const auto& placed = result->graphs[1].nodes[1];
    EXPECT_NEAR(placed.width, inner.width + 20, 1);
    EXPECT_NEAR(placed.height, inner.height + 30, 1);
}

// Lays out `request` through `cache` as the window does: the plan's missing part by dot, then
// complete(). Returns the result and how many graphs went to dot.
std::pair<LayoutResult, std::size_t> layOutThrough(LayoutCache& cache,
                                                   const LayoutRequest& request) {
    auto plan = cache.plan(request);
    LayoutResult computed;
    if (!plan.complete()) {
        auto laidOut = computeLayout(plan.missing);
        EXPECT_TRUE(laidOut) << laidOut.error().message;
        if (laidOut) computed = *laidOut;
    }
    auto result = cache.complete(plan, computed);
    EXPECT_TRUE(result) << result.error().message;
    return {result ? *result : LayoutResult{}, plan.missing.graphs.size()};
}

LayoutRequest nestedRequest(double innerWidth, const std::string& prefix) {
    LayoutRequest request;
    LayoutGraphSpec inner = diamond();
    inner.id = prefix + "inner";
    // Ids renumbered (as a deleted node renumbers the others) keep the key.
    for (auto& n : inner.nodes) n.id = prefix + n.id;
    for (auto& e : inner.edges) {
        e.tail = prefix + e.tail;
        e.head = prefix + e.head;
    }
    inner.nodes[0].width = innerWidth;
    LayoutGraphSpec other = diamond();
    other.id = prefix + "other";
    LayoutGraphSpec outer;
    outer.id = prefix + "outer";
    LayoutNodeSpec holder = box("holder", 20, 30), second = box("second", 20, 30);
    holder.nestedGraph = inner.id;
    second.nestedGraph = other.id;
    outer.nodes = {box("in", 50, 20), holder, second};
    outer.edges = {{"in", "holder", "1x3"}, {"in", "second", ""}};
    request.graphs = {inner, other, outer};
    return request;
}

void expectSamePlacements(const LayoutResult& a, const LayoutResult& b) {
    ASSERT_EQ(a.graphs.size(), b.graphs.size());
    for (std::size_t g = 0; g < a.graphs.size(); ++g) {
        EXPECT_EQ(a.graphs[g].id, b.graphs[g].id);
        EXPECT_DOUBLE_EQ(a.graphs[g].width, b.graphs[g].width);
        ASSERT_EQ(a.graphs[g].nodes.size(), b.graphs[g].nodes.size());
        for (std::size_t n = 0; n < a.graphs[g].nodes.size(); ++n) {
            EXPECT_DOUBLE_EQ(a.graphs[g].nodes[n].x, b.graphs[g].nodes[n].x);
            EXPECT_DOUBLE_EQ(a.graphs[g].nodes[n].y, b.graphs[g].nodes[n].y);
        }
    }
}

TEST(LayoutCache, OnlyWhatChangedGoesToDotAndTheResultIsTheSame) {
    LayoutCache cache;
    const auto [first, laidOutFirst] = layOutThrough(cache, nestedRequest(90, ""));
    EXPECT_EQ(laidOutFirst, 3u);
    EXPECT_EQ(cache.size(), 3u);

    // The same drawing again, ids renumbered: nothing goes to dot, same placements.
    const auto request = nestedRequest(90, "renumbered.");
    const auto [again, laidOutAgain] = layOutThrough(cache, request);
    EXPECT_EQ(laidOutAgain, 0u);
    EXPECT_EQ(again.graphs[2].id, "renumbered.outer");
    auto direct = computeLayout(request);
    ASSERT_TRUE(direct);
    expectSamePlacements(again, *direct);

    // One box of the inner group grows: the inner group and the group holding it are laid out
    // again, the untouched sibling comes from the cache, and the result is what dot gives for
    // the whole request.
    const auto changed = nestedRequest(140, "");
    const auto [edited, laidOutEdited] = layOutThrough(cache, changed);
    EXPECT_EQ(laidOutEdited, 2u);
    auto whole = computeLayout(changed);
    ASSERT_TRUE(whole);
    expectSamePlacements(edited, *whole);
    EXPECT_GT(cache.hits(), 3u);
}

TEST(LayoutCache, AResultOfTheWrongShapeIsAnErrorAndTheCacheKeepsItsLimit) {
    LayoutCache cache;
    auto plan = cache.plan(nestedRequest(90, ""));
    EXPECT_FALSE(cache.complete(plan, LayoutResult{}));
    LayoutResult wrong;
    wrong.graphs.resize(3);
    EXPECT_FALSE(cache.complete(plan, wrong));
    EXPECT_EQ(cache.size(), 0u);
    // A cache too small for any placement keeps none and still completes requests.
    LayoutCache tiny(16);
    const auto [result, laidOut] = layOutThrough(tiny, nestedRequest(90, ""));
    EXPECT_EQ(laidOut, 3u);
    EXPECT_EQ(result.graphs.size(), 3u);
    EXPECT_EQ(tiny.size(), 0u);
}

TEST(GraphLayout, SourceAndSinkRanksPinPortsToTheEdges) {
    LayoutGraphSpec g = diamond();
    LayoutNodeSpec in = box("port_in", 6, 6);
    in.rank = LayoutNodeSpec::Rank::Source;
    LayoutNodeSpec out = box("port_out", 6, 6);
    out.rank = LayoutNodeSpec::Rank::Sink;
    g.nodes.push_back(in);
    g.nodes.push_back(out);
    g.edges.push_back({"port_in", "c", ""});
    g.edges.push_back({"b", "port_out", ""});
    LayoutRequest request;
    request.graphs = {g};
    auto result = computeLayout(request);
    ASSERT_TRUE(result) << result.error().message;
    const auto& nodes = result->graphs[0].nodes;
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_LE(nodes[4].y, nodes[i].y);
        EXPECT_GE(nodes[5].y, nodes[i].y);
    }
}

TEST(GraphLayout, BadRequestsAreErrorsNotCrashes) {
    LayoutRequest request;
    LayoutGraphSpec g;
    g.id = "bad";
    g.nodes = {box("a", 10, 10)};
    g.edges = {{"a", "missing", ""}};
    request.graphs = {g};
    auto result = computeLayout(request);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("unknown node"), std::string::npos);
    g.edges.clear();
    g.nodes[0].width = -1;
    request.graphs = {g};
    EXPECT_FALSE(computeLayout(request));
    EXPECT_FALSE(parseLayoutRequest("{not json"));
    EXPECT_FALSE(parseLayoutResult("[]"));
}

TEST(GraphLayout, RequestsAndResultsSurviveSerialisation) {
    LayoutRequest request;
    request.graphs = {diamond()};
    request.graphs[0].nodes[1].rank = LayoutNodeSpec::Rank::Sink;
    request.graphs[0].nodes[2].nestedGraph = "other";
    request.labelFontSize = 11;
    auto parsed = parseLayoutRequest(serializeLayoutRequest(request));
    ASSERT_TRUE(parsed) << parsed.error().message;
    ASSERT_EQ(parsed->graphs.size(), 1u);
    EXPECT_EQ(parsed->graphs[0].nodes[1].rank, LayoutNodeSpec::Rank::Sink);
    EXPECT_EQ(parsed->graphs[0].nodes[2].nestedGraph, "other");
    EXPECT_EQ(parsed->graphs[0].edges[3].label, "batchx3");
    EXPECT_EQ(parsed->labelFontSize, 11);

    request.graphs[0].nodes[2].nestedGraph.clear();
    request.graphs[0].nodes[1].rank = LayoutNodeSpec::Rank::Any;
    auto result = computeLayout(request);
    ASSERT_TRUE(result);
    auto back = parseLayoutResult(serializeLayoutResult(*result));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->graphs[0].nodes.size(), result->graphs[0].nodes.size());
    EXPECT_DOUBLE_EQ(back->graphs[0].edges[0].spline[1].x, result->graphs[0].edges[0].spline[1].x);
    EXPECT_EQ(back->graphs[0].edges[0].hasLabel, result->graphs[0].edges[0].hasLabel);
}

TEST(GraphLayout, TimesEveryLevelOfAThousandLayerEncoder) {
    // Reports (does not assert) how long laying out each level of a large scoped model takes.
    auto view = buildViewGraph(testing::makeTransformerLike(30));
    ASSERT_TRUE(view);
    LayoutRequest request;
    for (int g = static_cast<int>(view->groups.size()) - 1; g >= 0; --g) {
        LayoutGraphSpec spec;
        spec.id = "g" + std::to_string(g);
        for (const auto& u : view->levels[g].units) spec.nodes.push_back(box(u.id(), 60, 30));
        for (const auto& e : view->levels[g].edges)
            spec.edges.push_back({view->levels[g].units[e.tail].id(),
                                  view->levels[g].units[e.head].id(),
                                  e.labelled ? view->tensors[e.tensor].type.shapeText() : ""});
        request.graphs.push_back(std::move(spec));
    }
    auto start = std::chrono::steady_clock::now();
    auto result = computeLayout(request);
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    ASSERT_TRUE(result) << result.error().message;
    std::printf("[ timing ] %zu levels of a %d-operator model laid out in %.0f ms\n",
                request.graphs.size(), view->operatorCount, ms.count());
}

}  // namespace
}  // namespace onnxlens
