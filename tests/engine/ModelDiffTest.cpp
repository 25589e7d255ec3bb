// Model diff and the layer-by-layer numeric comparison, on a small CNN with planted differences:
// one changed weight deep in it, one changed attribute, every name changed; the model against
// itself and against the engine's optimized graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "GraphBuilding.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/ModelLoader.h"
#include "onnxlens/workflows/ModelDiff.h"
#include "onnxlens/workflows/NumericDiff.h"

namespace onnxlens::testing {
namespace {

using engine::diffModels;
using engine::NodeDiff;
using engine::NumericDiffOptions;

Tensor seededWeights(Shape shape, unsigned seed, float scale) {
    Tensor t(DataType::Float, shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& v : t.span<float>()) v = dist(rng);
    return t;
}

// x[1,3,12,12] -> conv1 -> relu1 -> conv2 -> leaky (alpha 0.1) -> conv3 -> relu3 -> conv4
// -> relu4 -> pool -> flatten -> fc -> logits[1,5].
onnx::ModelProto smallCnn() {
    auto m = emptyModel(17);
    auto& g = *m.mutable_graph();
    g.set_name("cnn");
    addFloatInput(g, "x", {1, 3, 12, 12});
    std::string in = "x";
    const int channels[] = {3, 8, 8, 8, 8};
    for (int k = 1; k <= 4; ++k) {
        const std::string w = "w" + std::to_string(k), b = "b" + std::to_string(k);
        addInitializer(g, w, seededWeights({channels[k], channels[k - 1], 3, 3}, 10 + k, 0.4f));
        addInitializer(g, b, seededWeights({channels[k]}, 20 + k, 0.1f));
        auto* conv = addNode(g, "Conv", {in, w, b}, {"conv" + std::to_string(k)});
        conv->set_name("conv" + std::to_string(k));
        setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
        const std::string act = "act" + std::to_string(k);
        auto* a = addNode(g, k == 2 ? "LeakyRelu" : "Relu", {"conv" + std::to_string(k)}, {act});
        a->set_name(act);
        if (k == 2) setAttr(*a, "alpha", 0.1f);
        in = act;
    }
    addNode(g, "GlobalAveragePool", {in}, {"pool"})->set_name("pool");
    addNode(g, "Flatten", {"pool"}, {"flat"})->set_name("flatten");
    addInitializer(g, "fc_w", seededWeights({8, 5}, 31, 0.5f));
    addInitializer(g, "fc_b", seededWeights({5}, 32, 0.1f));
    addNode(g, "Gemm", {"flat", "fc_w", "fc_b"}, {"logits"})->set_name("fc");
    auto* out = g.add_output();
    out->set_name("logits");
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(5);
    return m;
}

onnx::TensorProto* initializerNamed(onnx::ModelProto& m, const std::string& name) {
    for (auto& t : *m.mutable_graph()->mutable_initializer())
        if (t.name() == name) return &t;
    return nullptr;
}

// Adds `delta` to element 5 of the float initializer `name`; returns the exact change as stored.
double plantWeightChange(onnx::ModelProto& m, const std::string& name, float delta) {
    auto* proto = initializerNamed(m, name);
    Tensor t = engine::tensorFromProto(*proto);
    const float before = t.data<float>()[5];
    t.data<float>()[5] = before + delta;
    *proto = engine::tensorToProto(t, name);
    return std::abs(static_cast<double>(t.data<float>()[5]) - before);
}

// Every node, value, input, output and initializer name prefixed with "renamed/".
onnx::ModelProto renamedCopy(const onnx::ModelProto& m) {
    onnx::ModelProto r = m;
    auto& g = *r.mutable_graph();
    auto rename = [](std::string* s) {
        if (!s->empty()) *s = "renamed/" + *s;
    };
    for (auto& n : *g.mutable_node()) {
        rename(n.mutable_name());
        for (auto& i : *n.mutable_input()) rename(&i);
        for (auto& o : *n.mutable_output()) rename(&o);
    }
    for (auto& i : *g.mutable_input()) rename(i.mutable_name());
    for (auto& o : *g.mutable_output()) rename(o.mutable_name());
    for (auto& t : *g.mutable_initializer()) rename(t.mutable_name());
    return r;
}

LoadedModel loaded(const onnx::ModelProto& m, const std::string& name) {
    auto l = loadModelFromBytes(m.SerializeAsString(), name, {});
    EXPECT_TRUE(l.ok()) << (l.ok() ? "" : l.error().message);
    return std::move(*l);
}

engine::NumericDiff numeric(const onnx::ModelProto& a, const onnx::ModelProto& b,
                            NumericDiffOptions options = {}) {
    options.threads = 1;
    auto result = engine::numericDiff(loaded(a, "a.onnx"), loaded(b, "b.onnx"), options);
    EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
    return std::move(*result);
}

const engine::TensorDiff& firstDivergence(const engine::NumericDiff& d) {
    static const engine::TensorDiff none;
    return d.firstDivergence >= 0 ? d.tensors[d.firstDivergence] : none;
}

TEST(ModelDiffTest, ModelAgainstItselfIsIdentical) {
    const auto m = smallCnn();
    const auto d = diffModels(m, m);
    EXPECT_TRUE(d.identical());
    EXPECT_EQ(d.same, m.graph().node_size());
    EXPECT_TRUE(d.initializers.empty());
    // 11 node outputs, each its own counterpart.
    EXPECT_EQ(d.valueMap.size(), 11u);
    EXPECT_EQ(d.valueMap.at("conv3"), "conv3");

    const auto n = numeric(m, m);
    EXPECT_EQ(n.firstDivergence, -1);
    EXPECT_TRUE(n.outputsWithinTolerance);
    ASSERT_EQ(n.tensors.size(), 11u);
    for (const auto& t : n.tensors) {
        EXPECT_TRUE(t.compared) << t.valueA;
        EXPECT_EQ(t.figures.maxAbsError, 0) << t.valueA;
        EXPECT_TRUE(std::isinf(t.figures.sqnrDb) && t.figures.sqnrDb > 0) << t.valueA;
    }
    EXPECT_TRUE(n.topErrorAdded.empty());
    // In A's order: conv1 first, the logits last.
    EXPECT_EQ(n.tensors.front().valueA, "conv1");
    EXPECT_EQ(n.tensors.back().valueA, "logits");
    EXPECT_TRUE(n.tensors.back().graphOutput);
}

TEST(ModelDiffTest, ChangedWeightDeepInTheNetworkIsTheFirstDivergence) {
    const auto a = smallCnn();
    auto b = a;
    const double planted = plantWeightChange(b, "w3", 0.5f);
    const auto d = diffModels(a, b);
    EXPECT_FALSE(d.identical());
    EXPECT_EQ(d.changed, 0);  // the nodes are the same; their weight is not
    ASSERT_EQ(d.initializers.size(), 1u);
    EXPECT_EQ(d.initializers[0].nameA, "w3");
    EXPECT_EQ(d.initializers[0].kind, engine::InitializerDiff::Kind::Changed);
    EXPECT_DOUBLE_EQ(d.initializers[0].maxAbsDifference, planted);

    const auto n = numeric(a, b);
    EXPECT_EQ(firstDivergence(n).valueA, "conv3");
    EXPECT_EQ(firstDivergence(n).nodeNameA, "conv3");
    EXPECT_EQ(firstDivergence(n).opTypeA, "Conv");
    // Everything before conv3 agrees exactly.
    for (const auto& t : n.tensors) {
        if (t.valueA == "conv3") break;
        EXPECT_EQ(t.figures.maxAbsError, 0) << t.valueA;
    }
    ASSERT_FALSE(n.topErrorAdded.empty());
    EXPECT_EQ(n.tensors[n.topErrorAdded.front()].nodeNameA, "conv3");
    // The path runs from conv3 to the logits.
    ASSERT_FALSE(n.growthPath.empty());
    EXPECT_EQ(n.tensors[n.growthPath.front()].valueA, "conv3");
    EXPECT_EQ(n.tensors[n.growthPath.back()].valueA, "logits");
    EXPECT_FALSE(n.outputsWithinTolerance);
}

TEST(ModelDiffTest, ChangedAttributeIsAChangedNodeAndTheFirstDivergence) {
    const auto a = smallCnn();
    auto b = a;
    for (auto& node : *b.mutable_graph()->mutable_node())
        if (node.name() == "act2") node.mutable_attribute(0)->set_f(0.3f);
    const auto d = diffModels(a, b);
    EXPECT_EQ(d.changed, 1);
    EXPECT_EQ(d.same, a.graph().node_size() - 1);
    const auto* act2 = d.matchOfA(3);
    ASSERT_NE(act2, nullptr);
    EXPECT_EQ(act2->kind, NodeDiff::Kind::Changed);
    ASSERT_EQ(act2->changes.size(), 1u);
    EXPECT_EQ(act2->changes[0], "attribute alpha: 0.1 -> 0.3");

    const auto n = numeric(a, b);
    EXPECT_EQ(firstDivergence(n).nodeNameA, "act2");
    EXPECT_EQ(n.tensors[n.topErrorAdded.front()].nodeNameA, "act2");
}

TEST(ModelDiffTest, RenamedGraphMatchesNodeForNode) {
    const auto a = smallCnn();
    auto b = renamedCopy(a);
    const auto d = diffModels(a, b);
    EXPECT_EQ(d.renamed, a.graph().node_size());
    EXPECT_EQ(d.changed + d.added + d.removed, 0);
    for (const auto& n : d.nodes) EXPECT_EQ(n.nameB, "renamed/" + n.nameA);
    // Initializers pair through the nodes reading them; only their names differ.
    for (const auto& i : d.initializers) {
        EXPECT_EQ(i.change, "renamed");
        EXPECT_EQ(i.nameB, "renamed/" + i.nameA);
    }
    EXPECT_EQ(d.valueMap.at("conv3"), "renamed/conv3");
    EXPECT_EQ(d.valueMap.at("logits"), "renamed/logits");

    // A renamed graph with the planted weight: still found at conv3.
    plantWeightChange(b, "renamed/w3", 0.5f);
    const auto n = numeric(a, b);
    EXPECT_EQ(n.tensors.size(), 11u);
    EXPECT_EQ(firstDivergence(n).nodeNameA, "conv3");
    EXPECT_EQ(firstDivergence(n).nodeNameB, "renamed/conv3");
    const auto withWeight = diffModels(a, b);
    ASSERT_EQ(withWeight.initializers.size(), 10u);  // all renamed, one changed too
    int changed = 0;
    for (const auto& i : withWeight.initializers)
        if (i.kind == engine::InitializerDiff::Kind::Changed) {
            ++changed;
            EXPECT_EQ(i.nameA, "w3");
        }
    EXPECT_EQ(changed, 1);
}

TEST(ModelDiffTest, AddedAndRemovedNodesAndHeader) {
    const auto a = smallCnn();
    auto b = a;
    b.set_ir_version(9);
    b.mutable_opset_import(0)->set_version(18);
    auto* meta = b.add_metadata_props();
    meta->set_key("author");
    meta->set_value("me");
    // Drop relu4 (pool reads conv4) and put a Sigmoid after the logits.
    auto& g = *b.mutable_graph();
    g.mutable_node()->DeleteSubrange(7, 1);
    g.mutable_node(7)->set_input(0, "conv4");
    g.mutable_node(9)->set_output(0, "pre");
    addNode(g, "Sigmoid", {"pre"}, {"logits"})->set_name("sigmoid");
    const auto d = diffModels(a, b);
    EXPECT_EQ(d.removed, 1);
    EXPECT_EQ(d.added, 1);
    EXPECT_EQ(d.nodes.back().nameB, "sigmoid");
    bool sawRelu4 = false;
    for (const auto& n : d.nodes)
        if (n.kind == NodeDiff::Kind::Removed) sawRelu4 = n.nameA == "act4";
    EXPECT_TRUE(sawRelu4);
    EXPECT_EQ(d.headerChanges,
              (std::vector<std::string>{"IR version 8 -> 9", "opset ai.onnx 17 -> 18"}));
    EXPECT_EQ(d.metadataChanges, std::vector<std::string>{"author added ('me')"});
    const auto json = engine::modelDiffJson(d);
    EXPECT_FALSE(json["identical"].get<bool>());
    EXPECT_EQ(json["summary"]["added"].get<int>(), 1);
}

TEST(ModelDiffTest, OptimizedGraphAgreesWithinOneInTenThousandth) {
    // Conv + BatchNormalization + Relu and an Identity: the optimizer folds and fuses them, and
    // runs the Conv chain channel-blocked ("r/blocked" holds r in [N, C/b, H, W, b]).
    auto m = emptyModel(17);
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 4, 10, 10});
    addInitializer(g, "w", seededWeights({6, 4, 3, 3}, 1, 0.5f));
    addInitializer(g, "scale", seededWeights({6}, 2, 1.0f));
    addInitializer(g, "bias", seededWeights({6}, 3, 0.5f));
    addInitializer(g, "mean", seededWeights({6}, 4, 0.2f));
    Tensor var = seededWeights({6}, 5, 0.3f);
    for (float& v : var.span<float>()) v = std::abs(v) + 0.5f;
    addInitializer(g, "var", var);
    addNode(g, "Identity", {"x"}, {"xi"});
    addNode(g, "Conv", {"xi", "w"}, {"c"});
    addNode(g, "BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
    addNode(g, "Relu", {"bn"}, {"r"});
    addNode(g, "Conv", {"r", "w2"}, {"c2"});
    addInitializer(g, "w2", seededWeights({5, 6, 1, 1}, 6, 0.5f));
    addNode(g, "Sigmoid", {"c2"}, {"y"});
    g.add_output()->set_name("y");

    engine::SessionOptions options;
    options.keepOptimizedModelWeights = true;
    auto session = engine::Session::create(loaded(m, "m.onnx"), options);
    ASSERT_TRUE(session.ok()) << session.error().message;
    const onnx::ModelProto optimized = (*session)->optimizedModel();
    ASSERT_LT(optimized.graph().node_size(), m.graph().node_size());

    const auto n = numeric(m, optimized);
    int compared = 0;
    for (const auto& t : n.tensors) {
        if (!t.compared) continue;
        ++compared;
        EXPECT_LT(t.figures.maxAbsError, 1e-5) << t.valueA;
    }
    EXPECT_EQ(compared, 2);  // the Relu's output (fused into the Conv, blocked) and the output
    const auto r = std::find_if(n.tensors.begin(), n.tensors.end(),
                                [](const auto& t) { return t.valueA == "r"; });
    ASSERT_NE(r, n.tensors.end());
    EXPECT_TRUE(r->compared) << r->problem;
    EXPECT_TRUE(n.outputsWithinTolerance);
    EXPECT_EQ(n.firstDivergence, -1);
}

TEST(ModelDiffTest, TinyPendingBudgetStillComparesEverything) {
    const auto a = smallCnn();
    auto b = renamedCopy(a);
    plantWeightChange(b, "renamed/w2", -0.25f);
    NumericDiffOptions options;
    options.pendingBytesLimit = 1;  // every value waits for its partner
    const auto n = numeric(a, b, options);
    EXPECT_EQ(n.tensors.size(), 11u);
    EXPECT_EQ(n.notProduced, 0);
    EXPECT_EQ(firstDivergence(n).nodeNameA, "conv2");
}

TEST(ModelDiffTest, ObserverSeesEveryProducedValueOnce) {
    const auto m = smallCnn();
    engine::SessionOptions options;
    options.threads = 1;
    options.optimize = false;  // every node of the graph as written runs
    auto session = engine::Session::create(loaded(m, "m.onnx"), options);
    ASSERT_TRUE(session.ok());
    std::map<std::string, Value> feeds{{"x", Value(seededWeights({1, 3, 12, 12}, 7, 1.0f))}};
    engine::RunControl control;
    std::multiset<std::string> seen;
    Value logits;
    control.onValue = [&](const std::string& name, const Value& v) {
        seen.insert(name);
        if (name == "logits") logits = v;
    };
    auto outputs = (*session)->run(feeds, &control);
    ASSERT_TRUE(outputs.ok());
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(m.graph().node_size()));
    for (const auto& n : m.graph().node()) EXPECT_EQ(seen.count(n.output(0)), 1u);
    EXPECT_TRUE(logits.tensor().sharesStorageWith((*outputs)[0].tensor()));
}

}  // namespace
}  // namespace onnxlens::testing
