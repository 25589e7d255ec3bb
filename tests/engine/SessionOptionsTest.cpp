// Options are per session: two sessions in one process keep their own tensor size limits.
#include <gtest/gtest.h>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/Tensor.h"

using namespace onnxlens;
using namespace onnxlens::testing;

TEST(SessionOptions, MaxTensorBytesHoldsForItsSessionOnly) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {512, 1024});  // 2 MiB of float
    addNode(g, "Relu", {"x"}, {"y"});
    g.add_output()->set_name("y");
    LoadedModel loaded;
    loaded.path = "limits.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(m);
    const auto processDefault = engine::maxTensorBytes();

    engine::SessionOptions small, plain;
    small.maxTensorBytes = 1 << 20;  // 1 MiB: Relu's output does not fit
    auto limited = engine::Session::create(loaded, small);
    auto unlimited = engine::Session::create(loaded, plain);
    ASSERT_TRUE(limited) << limited.error().message;
    ASSERT_TRUE(unlimited) << unlimited.error().message;
    EXPECT_EQ(engine::maxTensorBytes(), processDefault);  // creating a session changed nothing

    std::map<std::string, engine::Value> feeds{
        {"x", makeTensor<float>({512, 1024}, std::vector<float>(512 * 1024, -1.0f))}};
    auto failed = (*limited)->run(feeds);
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("Relu"), std::string::npos) << failed.error().message;
    auto ran = (*unlimited)->run(feeds);
    ASSERT_TRUE(ran) << ran.error().message;
    EXPECT_EQ((*ran)[0].tensor().numel(), 512 * 1024);
    EXPECT_EQ((*ran)[0].tensor().data<float>()[7], 0.0f);
    EXPECT_EQ(engine::maxTensorBytes(), processDefault);
}
