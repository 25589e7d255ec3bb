#include <gtest/gtest.h>

#include "GraphBuilding.h"
#include "OpTestHarness.h"

using namespace onnxlens;
using namespace onnxlens::testing;

TEST(Session, EveryUnsupportedNodeIsReportedTogether) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    auto* custom = model.add_opset_import();
    custom->set_domain("com.example");
    custom->set_version(1);
    auto* g = model.mutable_graph();
    g->add_input()->set_name("x");
    for (int i = 0; i < 3; ++i) {
        auto* n = g->add_node();
        n->set_op_type(i == 2 ? "Frobnicate" : "Mystery");
        n->set_domain("com.example");
        n->add_input(i == 0 ? "x" : "t" + std::to_string(i - 1));
        n->add_output("t" + std::to_string(i));
    }
    g->add_output()->set_name("t2");
    auto unsupported = engine::Session::findUnsupportedNodes(model);
    ASSERT_EQ(unsupported.size(), 3u);
    EXPECT_EQ(unsupported[2].opType, "Frobnicate");
    EXPECT_EQ(unsupported[2].domain, "com.example");

    LoadedModel loaded;
    loaded.path = "custom.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    auto session = engine::Session::create(loaded);
    ASSERT_FALSE(session);
    EXPECT_NE(session.error().message.find("3 node(s)"), std::string::npos)
        << session.error().message;
    EXPECT_NE(session.error().message.find("com.example::Mystery (opset 1) x2"), std::string::npos)
        << session.error().message;
    EXPECT_NE(session.error().message.find("custom.onnx"), std::string::npos);
}

TEST(Session, CycleIsACompileError) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(17);
    auto* g = model.mutable_graph();
    for (int i = 0; i < 2; ++i) {
        auto* n = g->add_node();
        n->set_op_type("Identity");
        n->set_name("n" + std::to_string(i));
        n->add_input("v" + std::to_string(1 - i));
        n->add_output("v" + std::to_string(i));
    }
    g->add_output()->set_name("v0");
    LoadedModel loaded;
    loaded.path = "cycle.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    auto session = engine::Session::create(loaded);
    ASSERT_FALSE(session);
    EXPECT_NE(session.error().message.find("cycle"), std::string::npos) << session.error().message;
}

TEST(Session, MissingFeedIsAnErrorNamingTheInput) {
    OneNodeSpec spec;
    spec.opType = "Identity";
    spec.inputs = {Value(makeTensor<float>({1}, {1.0f}))};
    LoadedModel loaded;
    loaded.path = "m.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(buildOneNodeModel(spec));
    auto session = engine::Session::create(loaded);
    if (!session) GTEST_SKIP() << "Identity not registered yet: " << session.error().message;
    auto r = (*session)->run({});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("'x0'"), std::string::npos);
    auto r2 = (*session)->run({{"x0", Value(makeTensor<float>({1}, {1.0f}))}, {"nope", Value()}});
    ASSERT_FALSE(r2);
    EXPECT_NE(r2.error().message.find("'nope'"), std::string::npos);
}

namespace {

// y = x + w, w a 1000-float initializer.
LoadedModel modelWithWeights() {
    OneNodeSpec spec{
        "Add", "", 17, {Value(makeTensor<float>({1000}, std::vector<float>(1000, 1.0f)))}, 1, {}};
    onnx::ModelProto model = buildOneNodeModel(spec);
    auto& g = *model.mutable_graph();
    g.mutable_node(0)->add_input("w");
    *g.add_initializer() =
        engine::tensorToProto(makeTensor<float>({1000}, std::vector<float>(1000, 2.0f)), "w");
    LoadedModel loaded;
    loaded.path = "weights.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    return loaded;
}

float firstOutput(engine::Session& session) {
    auto out =
        session.run({{"x0", Value(makeTensor<float>({1000}, std::vector<float>(1000, 1.0f)))}});
    EXPECT_TRUE(out) << (out ? "" : out.error().message);
    return out ? out->at(0).tensor().data<float>()[0] : 0.0f;
}

}  // namespace

TEST(Session, WeightsAreHeldOnceUnlessTheOptimizedModelMustKeepThem) {
    LoadedModel loaded = modelWithWeights();
    auto session = engine::Session::create(loaded);
    ASSERT_TRUE(session) << session.error().message;
    const auto& released = (*session)->optimizedModel().graph().initializer(0);
    EXPECT_EQ(released.name(), "w");
    EXPECT_EQ(released.dims(0), 1000);
    EXPECT_TRUE(released.raw_data().empty());
    EXPECT_EQ(released.float_data_size(), 0);
    EXPECT_EQ(firstOutput(**session), 3.0f);
    // The caller's model is untouched.
    EXPECT_EQ(loaded.proto->graph().initializer(0).raw_data().size(), 4000u);

    engine::SessionOptions keep;
    keep.keepOptimizedModelWeights = true;
    auto kept = engine::Session::create(loaded, keep);
    ASSERT_TRUE(kept) << kept.error().message;
    EXPECT_EQ((*kept)->optimizedModel().graph().initializer(0).raw_data().size(), 4000u);
}

TEST(Session, TakingTheModelOverLeavesNoCopyBehindUnlessItIsShared) {
    LoadedModel loaded = modelWithWeights();
    auto shared = loaded.proto;  // a second holder: the session must copy
    auto copied = engine::Session::create(std::move(loaded));
    ASSERT_TRUE(copied) << copied.error().message;
    EXPECT_EQ(shared->graph().initializer(0).raw_data().size(), 4000u);
    EXPECT_EQ(firstOutput(**copied), 3.0f);

    LoadedModel sole = modelWithWeights();
    auto taken = engine::Session::create(std::move(sole));
    ASSERT_TRUE(taken) << taken.error().message;
    // NOLINTNEXTLINE(bugprone-use-after-move): what the move left behind is the point
    EXPECT_EQ(sole.proto, nullptr);
    EXPECT_EQ(firstOutput(**taken), 3.0f);
    EXPECT_EQ((*taken)->optimizedModel().graph().node_size(), 1);
}

// A profiled run has one entry per node run, in order, named; when a node fails, the entries of
// the nodes after it (made before the run, so that their names sit apart from its tensors) go.
TEST(Session, ProfileHoldsTheNodesThatRanInOrder) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 3});
    auto* shape = g.add_input();
    shape->set_name("shape");
    shape->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    shape->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
    addNode(g, "Relu", {"x"}, {"r"})->set_name("first");
    addNode(g, "Reshape", {"r", "shape"}, {"s"})->set_name("second");
    addNode(g, "Neg", {"s"}, {"y"})->set_name("third");
    g.add_output()->set_name("y");
    auto session = compileForTest(m, false);
    ASSERT_TRUE(session);
    const Value x(makeTensor<float>({2, 3}, {1, -2, 3, -4, 5, -6}));
    engine::RunControl control;
    control.profile = true;
    ASSERT_TRUE(session->run({{"x", x}, {"shape", Value(makeTensor<std::int64_t>({2}, {3, 2}))}},
                             &control));
    ASSERT_EQ(control.nodeProfiles.size(), 3u);
    EXPECT_EQ(control.nodeProfiles[0].opType, "Relu");
    EXPECT_NE(control.nodeProfiles[0].nodeName.find("first"), std::string::npos);
    EXPECT_EQ(control.nodeProfiles[2].opType, "Neg");
    for (std::size_t i = 1; i < 3; ++i)
        EXPECT_GE(control.nodeProfiles[i].startNs,
                  control.nodeProfiles[i - 1].startNs + control.nodeProfiles[i - 1].durationNs);
    // 6 values cannot take the shape [4, 2]: the second node fails, the third never runs.
    ASSERT_FALSE(session->run({{"x", x}, {"shape", Value(makeTensor<std::int64_t>({2}, {4, 2}))}},
                              &control));
    ASSERT_EQ(control.nodeProfiles.size(), 1u);
    EXPECT_EQ(control.nodeProfiles[0].opType, "Relu");
}

// Initializers are read in place by every run (Frame::at), never copied into it: an initializer
// that is also a graph input is the input's default until a run feeds it, a fed value is that
// run's only, and an initializer can be a graph output itself.
TEST(Session, InitializersAreDefaultsEveryRunAndCanBeOutputs) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2});
    addFloatInput(g, "bias", {2});
    addInitializer(g, "bias", makeTensor<float>({2}, {1, 2}));
    addInitializer(g, "scale", makeTensor<float>({2}, {10, 20}));
    addNode(g, "Add", {"x", "bias"}, {"sum"});
    addNode(g, "Mul", {"sum", "scale"}, {"y"});
    g.add_output()->set_name("y");
    g.add_output()->set_name("scale");
    LoadedModel loaded;
    loaded.path = "defaults.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(m);
    for (const bool optimize : {false, true}) {
        engine::SessionOptions options;
        options.optimize = optimize;
        auto session = engine::Session::create(loaded, options);
        ASSERT_TRUE(session) << session.error().message;
        const Value x(makeTensor<float>({2}, {0.5f, 0.25f}));
        auto first = (*session)->run({{"x", x}});
        auto fed = (*session)->run({{"x", x}, {"bias", Value(makeTensor<float>({2}, {-1, -2}))}});
        auto again = (*session)->run({{"x", x}});
        ASSERT_TRUE(first && fed && again);
        EXPECT_TRUE(tensorsClose(first->at(0).tensor(), makeTensor<float>({2}, {15, 45})));
        EXPECT_TRUE(tensorsClose(fed->at(0).tensor(), makeTensor<float>({2}, {-5, -35})));
        EXPECT_TRUE(tensorsClose(again->at(0).tensor(), makeTensor<float>({2}, {15, 45})));
        EXPECT_TRUE(tensorsClose(again->at(1).tensor(), makeTensor<float>({2}, {10, 20})));
    }
}
