#include <gtest/gtest.h>

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
    EXPECT_NE(session.error().message.find("3 node(s)"), std::string::npos) << session.error().message;
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
