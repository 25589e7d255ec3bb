// The channel-blocked layout pass (convertToChannelBlockedLayout) and its kernels: which nodes
// go blocked, where the reorders land, and that blocked models compute what plain ones do.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "GraphBuilding.h"
#include "OpTestHarness.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Kernel.h"
#include "onnxlens/workflows/InputPreparation.h"

using namespace onnxlens;
using namespace onnxlens::testing;

namespace {

// Deterministic weights in [-0.5, 0.5).
Tensor weights(Shape shape, int seed) {
    std::int64_t count = 1;
    for (auto d : shape) count *= d;
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] =
            static_cast<float>((i * 37 + static_cast<std::size_t>(seed) * 101) % 97) / 97.0f - 0.5f;
    return makeTensor<float>(std::move(shape), values);
}

// Conv from `x` with `in` channels to `out` channels, kernel k, with a bias.
onnx::NodeProto* addConv(onnx::GraphProto& g, const std::string& x, const std::string& y,
                         std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t group,
                         int seed) {
    addInitializer(g, y + "_w", weights({out, in / group, k, k}, seed));
    addInitializer(g, y + "_b", weights({out}, seed + 1));
    auto* conv = addNode(g, "Conv", {x, y + "_w", y + "_b"}, {y});
    if (group != 1) setAttr(*conv, "group", group);
    const std::int64_t pad = k / 2;
    setAttr(*conv, "pads", std::vector<std::int64_t>{pad, pad, pad, pad});
    return conv;
}

// The model converted with `block` computes what the plain model computes on seeded inputs.
// With `scaleRelative` > 0 the outputs agree within that fraction of their largest magnitude
// instead (what a product summed in another order promises: an output near 0 among large ones
// has no relative precision left).
void expectBlockedComputesTheSame(const onnx::ModelProto& model, std::int64_t block,
                                  int threads = 1, double scaleRelative = 0.0) {
    onnx::ModelProto blocked = model;
    EXPECT_GT(engine::convertToChannelBlockedLayout(blocked, block), 0);
    LoadedModel loaded;
    loaded.path = "blocked-layout-test.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(model);
    engine::SessionOptions options;
    options.optimize = false;
    auto session = engine::Session::create(loaded, options);
    ASSERT_TRUE(session) << session.error().message;
    auto feeds = engine::prepareFeeds((*session)->inputs(), {}, {}, 7);
    ASSERT_TRUE(feeds);
    const auto expected = runModelAsWritten(model, *feeds);
    const auto actual = runModelAsWritten(blocked, *feeds, threads);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (scaleRelative <= 0.0) {
            EXPECT_TRUE(tensorsClose(actual[i].tensor(), expected[i].tensor(), {1e-4, 1e-5}))
                << "output " << i;
            continue;
        }
        const Tensor& a = actual[i].tensor();
        const Tensor& e = expected[i].tensor();
        ASSERT_EQ(a.shape(), e.shape());
        double largest = 0.0, error = 0.0;
        for (std::int64_t k = 0; k < e.numel(); ++k) {
            largest = std::max(largest, std::fabs(double(e.data<float>()[k])));
            error = std::max(error, std::fabs(double(a.data<float>()[k]) - e.data<float>()[k]));
        }
        EXPECT_GT(largest, 0.0);
        EXPECT_LE(error, scaleRelative * largest) << "output " << i << ", largest " << largest;
    }
}

// A small CNN: stem conv on 3 plain channels, Relu fused later, max pool, a depthwise-separable
// block with a residual Add, global average pool, then Flatten and Gemm (plain readers).
onnx::ModelProto smallCnn() {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "image", {2, 3, 17, 17});
    auto* stem = addConv(g, "image", "stem", 3, 12, 3, 1, 1);
    setAttr(*stem, "strides", std::vector<std::int64_t>{2, 2});
    addNode(g, "Relu", {"stem"}, {"stem_relu"});
    auto* pool = addNode(g, "MaxPool", {"stem_relu"}, {"pooled"});
    setAttr(*pool, "kernel_shape", std::vector<std::int64_t>{3, 3});
    setAttr(*pool, "strides", std::vector<std::int64_t>{2, 2});
    setAttr(*pool, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    setAttr(*pool, "ceil_mode", std::int64_t{1});
    addConv(g, "pooled", "dw", 12, 12, 3, 12, 3);
    addConv(g, "dw", "pw", 12, 12, 1, 1, 5);
    addNode(g, "Add", {"pw", "pooled"}, {"residual"});
    auto* avg = addNode(g, "AveragePool", {"residual"}, {"avg"});
    setAttr(*avg, "kernel_shape", std::vector<std::int64_t>{2, 2});
    setAttr(*avg, "pads", std::vector<std::int64_t>{0, 0, 1, 1});
    addNode(g, "GlobalAveragePool", {"avg"}, {"gap"});
    addNode(g, "Flatten", {"gap"}, {"flat"});
    addInitializer(g, "fc_w", weights({5, 12}, 9));
    auto* fc = addNode(g, "Gemm", {"flat", "fc_w"}, {"logits"});
    setAttr(*fc, "transB", std::int64_t{1});
    g.add_output()->set_name("logits");
    return m;
}

}  // namespace

TEST(ChannelBlockedLayout, CnnChainReordersOnlyWhereAPlainReaderNeedsIt) {
    auto m = smallCnn();
    EXPECT_GT(engine::fuseConvAdd(m), 0);
    EXPECT_GT(engine::fuseConvActivation(m), 0);
    onnx::ModelProto blocked = m;
    // stem, depthwise, pointwise(+residual), MaxPool, AveragePool, GlobalAveragePool
    EXPECT_EQ(engine::convertToChannelBlockedLayout(blocked, 16), 6);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["BlockedConv"], 3);
    EXPECT_EQ(counts["BlockedMaxPool"], 1);
    EXPECT_EQ(counts["BlockedAveragePool"], 1);
    EXPECT_EQ(counts["BlockedGlobalAveragePool"], 1);
    // The stem reads the 3 plain channels itself; only Flatten needs plain data again.
    EXPECT_EQ(counts["ReorderToBlocked"], 0);
    EXPECT_EQ(counts["ReorderFromBlocked"], 1);
    for (const auto& n : blocked.graph().node()) {
        if (n.op_type() == "ReorderFromBlocked") {
            EXPECT_EQ(n.output(0), "gap");
        }
    }
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
        expectBlockedComputesTheSame(m, block, 2);
    }
}

// Squeeze-excitation blocks (EfficientNet, MobileNetV3): x * Sigmoid(Conv(Relu(Conv(GAP(x))))) in
// both operand orders stays blocked (BlockedChannelScale) instead of leaving the chain twice; 12
// channels fill neither an 8- nor a 16-lane block.
TEST(ChannelBlockedLayout, SqueezeExcitationScaleStaysBlocked) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 12, 7, 9});
    addConv(g, "x", "a", 12, 12, 3, 12, 1);  // depthwise
    int seed = 10;
    auto squeezeExcite = [&](const std::string& in, const std::string& out, bool scaleFirst) {
        addNode(g, "GlobalAveragePool", {in}, {out + "_gap"});
        addConv(g, out + "_gap", out + "_r", 12, 4, 1, 1, seed++);
        addNode(g, "Relu", {out + "_r"}, {out + "_rr"});
        addConv(g, out + "_rr", out + "_e", 4, 12, 1, 1, seed++);
        addNode(g, "Sigmoid", {out + "_e"}, {out + "_s"});
        if (scaleFirst)
            addNode(g, "Mul", {out + "_s", in}, {out});
        else
            addNode(g, "Mul", {in, out + "_s"}, {out});
    };
    squeezeExcite("a", "se1", false);
    addConv(g, "se1", "b", 12, 12, 1, 1, 20);
    squeezeExcite("b", "se2", true);
    g.add_output()->set_name("se2");
    EXPECT_EQ(engine::fuseConvActivation(m), 4);
    onnx::ModelProto blocked = m;
    engine::convertToChannelBlockedLayout(blocked, 8);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["BlockedChannelScale"], 2);
    EXPECT_EQ(counts["Mul"], 0);
    EXPECT_EQ(counts["ReorderToBlocked"], 1);    // x, 12 channels
    EXPECT_EQ(counts["ReorderFromBlocked"], 1);  // the graph output
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
        expectBlockedComputesTheSame(m, block, 2);
    }
}

TEST(ChannelBlockedLayout, OddChannelCountsStridesAndDilationsComputeTheSame) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 5, 11, 9});
    auto* a = addConv(g, "x", "a", 5, 7, 3, 1, 2);  // 5 > 4 plain channels: a ReorderToBlocked
    setAttr(*a, "dilations", std::vector<std::int64_t>{2, 1});
    auto* b = addConv(g, "a", "b", 7, 7, 5, 7, 4);  // depthwise, 7 channels: a partial block
    setAttr(*b, "strides", std::vector<std::int64_t>{2, 1});
    addNode(g, "Sigmoid", {"b"}, {"y"});  // fused: padded lanes become 0.5, never read
    g.add_output()->set_name("y");
    g.add_output()->set_name("a");  // a graph output read in the middle of the chain
    EXPECT_EQ(engine::fuseConvActivation(m), 1);
    onnx::ModelProto blocked = m;
    EXPECT_EQ(engine::convertToChannelBlockedLayout(blocked, 8), 2);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["ReorderToBlocked"], 1);
    EXPECT_EQ(counts["ReorderFromBlocked"], 2);
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
    }
}

TEST(ChannelBlockedLayout, ConvsOutsideTheBlockedKernelsStayPlain) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 8, 6, 6});
    addFloatInput(g, "runtime_w", {8, 8, 1, 1});
    addConv(g, "x", "grouped", 8, 8, 3, 2, 1);              // 2 groups of 4: not depthwise
    addNode(g, "Conv", {"grouped", "runtime_w"}, {"fed"});  // weights given at run time
    addInitializer(g, "w1d", weights({8, 8, 3}, 3));
    addFloatInput(g, "seq", {1, 8, 10});
    addNode(g, "Conv", {"seq", "w1d"}, {"conv1d"});       // 1-D
    auto* pool = addNode(g, "MaxPool", {"x"}, {"pool"});  // reads a plain value
    setAttr(*pool, "kernel_shape", std::vector<std::int64_t>{2, 2});
    g.add_output()->set_name("fed");
    g.add_output()->set_name("conv1d");
    g.add_output()->set_name("pool");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::convertToChannelBlockedLayout(copy, 16), 0);
    EXPECT_EQ(copy.SerializeAsString(), m.SerializeAsString());
    EXPECT_EQ(engine::convertToChannelBlockedLayout(copy, 4), 0);  // not a supported block
}

TEST(ChannelBlockedLayout, GroupedBlockedConvFallsBackToThePlainKernel) {
    // A BlockedConv oneDNN does not take (2 groups of 4 channels, written by hand): the kernel
    // converts around the plain convolution and still computes it.
    const Tensor x = weights({1, 8, 5, 5}, 1), w = weights({6, 4, 3, 3}, 2);
    OneNodeSpec plain{"Conv", "",
                      17,     {Value(x), Value(w)},
                      1,      [](onnx::NodeProto& n) {
                          setAttr(n, "group", std::int64_t{2}); }};
    const Tensor expected = runOneNodeTensor(plain);
    onnx::ModelProto m = buildOneNodeModel(plain);
    auto& node = *m.mutable_graph()->mutable_node(0);
    node.set_domain(engine::kOnnxlensDomain);
    node.set_op_type("BlockedConv");
    setAttr(node, "block", std::int64_t{8});
    node.set_output(0, "yb");
    auto* back = m.mutable_graph()->add_node();
    back->set_domain(engine::kOnnxlensDomain);
    back->set_op_type("ReorderFromBlocked");
    back->add_input("yb");
    back->add_output("y0");
    setAttr(*back, "channels", std::int64_t{6});
    auto* imp = m.add_opset_import();
    imp->set_domain(engine::kOnnxlensDomain);
    imp->set_version(1);
    const auto outputs = runModelAsWritten(m, {{"x0", Value(x)}, {"x1", Value(w)}});
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_TRUE(tensorsClose(outputs[0].tensor(), expected, {1e-5, 1e-6}));
}

TEST(ChannelBlockedLayout, ReordersRoundTripAndRefuseWrongShapes) {
    const Tensor x = weights({2, 5, 3, 4}, 4);
    OneNodeSpec to{
        "ReorderToBlocked", engine::kOnnxlensDomain, 1, {Value(x)}, 1, [](onnx::NodeProto& n) {
            setAttr(n, "block", std::int64_t{8});
        }};
    const Tensor blocked = runOneNodeTensor(to);
    ASSERT_EQ(blocked.shape(), (Shape{2, 1, 3, 4, 8}));
    const float* b = blocked.data<float>();
    // Channel 3 of image 1 at (2, 1) sits in lane 3; lanes 5..7 are zero.
    EXPECT_EQ(b[((1 * 1 + 0) * 12 + 2 * 4 + 1) * 8 + 3],
              x.data<float>()[((1 * 5 + 3) * 3 + 2) * 4 + 1]);
    for (int lane = 5; lane < 8; ++lane) EXPECT_EQ(b[lane], 0.0f);
    OneNodeSpec from{"ReorderFromBlocked",
                     engine::kOnnxlensDomain,
                     1,
                     {Value(blocked)},
                     1,
                     [](onnx::NodeProto& n) { setAttr(n, "channels", std::int64_t{5}); }};
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(from), x, {0, 0}));
    OneNodeSpec wrong{"ReorderFromBlocked",
                      engine::kOnnxlensDomain,
                      1,
                      {Value(blocked)},
                      1,
                      [](onnx::NodeProto& n) { setAttr(n, "channels", std::int64_t{9}); }};
    auto refused = runOneNode(wrong);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("do not fit the blocked shape"), std::string::npos)
        << refused.error().message;
}

TEST(ChannelBlockedLayout, GraphsListedOutOfOrderAreLeftAlone) {
    // Conv b is listed before the Conv a it reads: the pass follows listed order, so it leaves
    // such a graph to the compiler (which orders it) instead of reordering a value not yet made.
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 8, 6, 6});
    addConv(g, "a", "b", 8, 8, 3, 1, 1);
    addConv(g, "x", "a", 8, 8, 3, 1, 2);
    g.add_output()->set_name("b");
    onnx::ModelProto copy = m;
    EXPECT_EQ(engine::convertToChannelBlockedLayout(copy, 16), 0);
    EXPECT_EQ(copy.SerializeAsString(), m.SerializeAsString());
    LoadedModel loaded;
    loaded.path = "out-of-order.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(m);
    auto session = engine::Session::create(loaded);
    ASSERT_TRUE(session) << session.error().message;
    auto feeds = engine::prepareFeeds((*session)->inputs(), {}, {}, 3);
    ASSERT_TRUE(feeds);
    EXPECT_TRUE((*session)->run(*feeds));
}

namespace {

// An FPN-like neck on 2 images: nearest and linear Resize x2, a Concat whose first input fills
// 12 channels (a partial block: channels shift across lanes), one of whole blocks, DepthToSpace
// (DCR to 7 channels, CRD to 8) and convolutions reading them.
onnx::ModelProto neck() {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 5, 5, 4});
    addConv(g, "x", "a", 5, 16, 3, 1, 1);
    addConv(g, "a", "b", 16, 12, 1, 1, 2);
    addConv(g, "a", "c", 16, 16, 3, 1, 3);
    addInitializer(g, "up2", makeTensor<float>({4}, {1, 1, 2, 2}));
    auto* nearest = addNode(g, "Resize", {"b", "", "up2"}, {"b_up"});
    setAttr(*nearest, "mode", std::string("nearest"));
    setAttr(*nearest, "coordinate_transformation_mode", std::string("asymmetric"));
    setAttr(*nearest, "nearest_mode", std::string("floor"));
    auto* linear = addNode(g, "Resize", {"a", "", "up2"}, {"a_up"});
    setAttr(*linear, "mode", std::string("linear"));
    addNode(g, "Concat", {"b_up", "a_up"}, {"mixed"});  // 12 + 16 channels
    setAttr(*g.mutable_node(g.node_size() - 1), "axis", std::int64_t{1});
    addNode(g, "Concat", {"a", "c"}, {"whole"});  // 16 + 16 channels
    setAttr(*g.mutable_node(g.node_size() - 1), "axis", std::int64_t{-3});
    auto* dcr = addNode(g, "DepthToSpace", {"mixed"}, {"fine"});  // 28 -> 7 channels
    setAttr(*dcr, "blocksize", std::int64_t{2});
    addConv(g, "whole", "d", 32, 32, 1, 1, 4);
    auto* crd = addNode(g, "DepthToSpace", {"d"}, {"d_fine"});  // 32 -> 8 channels
    setAttr(*crd, "blocksize", std::int64_t{2});
    setAttr(*crd, "mode", std::string("CRD"));
    addConv(g, "d_fine", "e", 8, 8, 3, 1, 5);
    // Resizing the channel axis stays plain.
    addInitializer(g, "channels2", makeTensor<float>({4}, {1, 2, 1, 1}));
    addNode(g, "Resize", {"c", "", "channels2"}, {"c_wide"});
    for (const char* out : {"fine", "e", "c_wide"}) g.add_output()->set_name(out);
    return m;
}

}  // namespace

TEST(ChannelBlockedLayout, ResizeConcatAndDepthToSpaceStayBlockedAndComputeTheSame) {
    const auto m = neck();
    onnx::ModelProto blocked = m;
    // 5 convs, 2 Resize, 2 Concat, 2 DepthToSpace
    EXPECT_EQ(engine::convertToChannelBlockedLayout(blocked, 8), 11);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["BlockedResize"], 2);
    EXPECT_EQ(counts["Resize"], 1);
    EXPECT_EQ(counts["BlockedConcat"], 2);
    EXPECT_EQ(counts["BlockedDepthToSpace"], 2);
    // x in; "fine" is written plain by its DepthToSpace (7 channels); "e" out; c for its Resize.
    EXPECT_EQ(counts["ReorderToBlocked"], 1);
    EXPECT_EQ(counts["ReorderFromBlocked"], 2);
    for (const auto& n : blocked.graph().node())
        if (n.op_type() == "BlockedDepthToSpace") {
            EXPECT_EQ(n.output(0) == "fine", n.attribute(n.attribute_size() - 1).i() == 1);
        }
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
        expectBlockedComputesTheSame(m, block, 2);
    }
}

TEST(ChannelBlockedLayout, BlockedDataMovementKernelsRefuseMismatchedInputs) {
    OneNodeSpec concat;
    concat.opType = "BlockedConcat";
    concat.domain = engine::kOnnxlensDomain;
    concat.opset = 1;
    concat.inputs = {Value(Tensor::zeros(DataType::Float, {1, 2, 3, 3, 8})),
                     Value(Tensor::zeros(DataType::Float, {1, 1, 4, 3, 8}))};
    concat.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "channels", std::vector<std::int64_t>{16, 8});
    };
    auto result = runOneNode(concat);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("does not match"), std::string::npos)
        << result.error().message;

    OneNodeSpec d2s;
    d2s.opType = "BlockedDepthToSpace";
    d2s.domain = engine::kOnnxlensDomain;
    d2s.opset = 1;
    d2s.inputs = {Value(Tensor::zeros(DataType::Float, {1, 2, 3, 3, 8}))};
    d2s.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "blocksize", std::int64_t{2});
        setAttr(n, "channels", std::int64_t{10});  // not a multiple of 4
    };
    result = runOneNode(d2s);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("blocksize^2"), std::string::npos)
        << result.error().message;

    OneNodeSpec resize;
    resize.opType = "BlockedResize";
    resize.domain = engine::kOnnxlensDomain;
    resize.opset = 1;
    resize.inputs = {Value(Tensor::zeros(DataType::Float, {1, 2, 3, 3, 8})), Value(),
                     Value(makeTensor<float>({4}, {1, 2, 1, 1}))};
    result = runOneNode(resize);
    ASSERT_FALSE(result);
    EXPECT_NE(result.error().message.find("spatial axes only"), std::string::npos)
        << result.error().message;
}

namespace {

// Channel counts that fill no whole block at 16 lanes (and some at 8): a Concat of 24 + 12 + 24
// channels and a DCR DepthToSpace 96 -> 24 channels that stays blocked (a conv reads it), as a
// detector's FPN neck and ConvTranspose head give.
onnx::ModelProto partialBlockNeck() {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 5, 5, 4});
    addConv(g, "x", "a", 5, 24, 3, 1, 11);
    addConv(g, "a", "b", 24, 12, 1, 1, 12);
    addNode(g, "Concat", {"a", "b", "a"}, {"mixed"});  // 24 + 12 + 24 = 60 channels
    setAttr(*g.mutable_node(g.node_size() - 1), "axis", std::int64_t{1});
    addConv(g, "mixed", "wide", 60, 96, 1, 1, 13);
    auto* dcr = addNode(g, "DepthToSpace", {"wide"}, {"fine"});  // 96 -> 24 channels
    setAttr(*dcr, "blocksize", std::int64_t{2});
    addConv(g, "fine", "y", 24, 8, 3, 1, 14);
    for (const char* out : {"mixed", "y"}) g.add_output()->set_name(out);
    return m;
}

// A blocked tensor [1, ceil(channels / 8), 2, 3, 8] whose channel c at pixel p holds
// 100 c + p, its padded lanes NaN (which no kernel may copy into a result's channels).
Tensor blockedRamp(std::int64_t channels) {
    const std::int64_t blocks = (channels + 7) / 8, plane = 6;
    Tensor t(DataType::Float, {1, blocks, 2, 3, 8});
    float* d = t.data<float>();
    for (std::int64_t cb = 0; cb < blocks; ++cb)
        for (std::int64_t p = 0; p < plane; ++p)
            for (std::int64_t lane = 0; lane < 8; ++lane) {
                const std::int64_t c = cb * 8 + lane;
                d[(cb * plane + p) * 8 + lane] = c < channels
                                                     ? static_cast<float>(100 * c + p)
                                                     : std::numeric_limits<float>::quiet_NaN();
            }
    return t;
}

}  // namespace

TEST(ChannelBlockedLayout, PartialBlockConcatAndDepthToSpaceComputeTheSame) {
    const auto m = partialBlockNeck();
    onnx::ModelProto blocked = m;
    engine::convertToChannelBlockedLayout(blocked, 16);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["BlockedConcat"], 1);
    EXPECT_EQ(counts["BlockedDepthToSpace"], 1);
    for (const auto& n : blocked.graph().node())
        if (n.op_type() == "BlockedDepthToSpace") {
            EXPECT_EQ(n.attribute(n.attribute_size() - 1).i(), 0) << "stays blocked";
        }
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
        expectBlockedComputesTheSame(m, block, 2);
    }
}

TEST(ChannelBlockedLayout, PartialBlocksMoveTheirChannelsAndZeroThePaddedLanes) {
    // Concat of 3 + 6 + 5 channels at 8 lanes: 14 channels in 2 blocks, lanes 14 and 15 padded.
    OneNodeSpec concat;
    concat.opType = "BlockedConcat";
    concat.domain = engine::kOnnxlensDomain;
    concat.opset = 1;
    concat.inputs = {Value(blockedRamp(3)), Value(blockedRamp(6)), Value(blockedRamp(5))};
    concat.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "channels", std::vector<std::int64_t>{3, 6, 5});
    };
    const Tensor joined = runOneNodeTensor(concat);
    ASSERT_EQ(joined.shape(), (Shape{1, 2, 2, 3, 8}));
    const float* j = joined.data<float>();
    const std::int64_t firstChannel[] = {0, 3, 9};
    const std::int64_t counts[] = {3, 6, 5};
    for (std::int64_t p = 0; p < 6; ++p) {
        for (int i = 0; i < 3; ++i)
            for (std::int64_t c = 0; c < counts[i]; ++c) {
                const std::int64_t o = firstChannel[i] + c;
                EXPECT_EQ(j[((o / 8) * 6 + p) * 8 + o % 8], static_cast<float>(100 * c + p))
                    << "input " << i << " channel " << c << " pixel " << p;
            }
        for (std::int64_t lane = 6; lane < 8; ++lane) EXPECT_EQ(j[(6 + p) * 8 + lane], 0.0f);
    }

    // DCR DepthToSpace of 12 channels, blocksize 2: 3 channels a tile, in one partial block.
    OneNodeSpec d2s;
    d2s.opType = "BlockedDepthToSpace";
    d2s.domain = engine::kOnnxlensDomain;
    d2s.opset = 1;
    d2s.inputs = {Value(blockedRamp(12))};
    d2s.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "blocksize", std::int64_t{2});
        setAttr(n, "channels", std::int64_t{12});
    };
    const Tensor fine = runOneNodeTensor(d2s);
    ASSERT_EQ(fine.shape(), (Shape{1, 1, 4, 6, 8}));
    const float* f = fine.data<float>();
    for (std::int64_t y = 0; y < 4; ++y)
        for (std::int64_t x = 0; x < 6; ++x) {
            const std::int64_t tile = (y % 2) * 2 + x % 2, p = (y / 2) * 3 + x / 2;
            for (std::int64_t c = 0; c < 8; ++c) {
                const float expected = c < 3 ? static_cast<float>(100 * (tile * 3 + c) + p) : 0.0f;
                EXPECT_EQ(f[(y * 6 + x) * 8 + c], expected) << y << "," << x << " lane " << c;
            }
        }
}

namespace {

// A residual block whose shortcut `a` is summed into the third convolution (FusedConv's Z):
// x -> Conv a -> Conv c -> Conv b; y = Relu(b + a). With `aReadLater` a second summed convolution
// reads the shortcut after the first (it depends on y): the first must not write into it.
onnx::ModelProto residualBlock(bool aReadLater) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 16, 6, 5});
    addConv(g, "x", "a", 16, 16, 3, 1, 1);
    addConv(g, "a", "c", 16, 16, 1, 1, 3);
    addConv(g, "c", "b", 16, 16, 3, 1, 5);
    addNode(g, "Add", {"b", "a"}, {"sum"});
    addNode(g, "Relu", {"sum"}, {"y"});
    g.add_output()->set_name("y");
    if (aReadLater) {
        addConv(g, "y", "e", 16, 16, 1, 1, 7);
        addNode(g, "Add", {"e", "a"}, {"later"});
        g.add_output()->set_name("later");
    }
    return m;
}

}  // namespace

// The summed convolution writes its result into the shortcut's own buffer when nothing reads the
// shortcut afterwards (no copy of it first); when a later node reads it, it keeps its values.
TEST(ChannelBlockedLayout, SummedConvolutionOverwritesTheShortcutOnlyWhenNothingElseReadsIt) {
    for (bool aReadLater : {false, true}) {
        SCOPED_TRACE(aReadLater);
        auto m = residualBlock(aReadLater);
        EXPECT_EQ(engine::fuseConvAdd(m), aReadLater ? 2 : 1);
        onnx::ModelProto blocked = m;
        ASSERT_GT(engine::convertToChannelBlockedLayout(blocked, 16), 0);
        int summed = 0, plainA = 0;
        for (const auto& n : blocked.graph().node()) {
            summed += n.op_type() == "BlockedConv" && n.input_size() == 4;
            plainA += n.op_type() == "ReorderFromBlocked" && n.output(0) == "a";
        }
        EXPECT_EQ(summed, aReadLater ? 2 : 1);
        EXPECT_EQ(plainA, 0);  // only blocked readers: the later one reads the same buffer
        for (std::int64_t block : {8, 16}) {
            SCOPED_TRACE(block);
            expectBlockedComputesTheSame(m, block);
            expectBlockedComputesTheSame(m, block, 2);
        }
    }
}

// reusableInputTensor hands a kernel an input's buffer only when the input is released after
// the node and its tensor owns the buffer alone.
TEST(ChannelBlockedLayout, ReusableInputNeedsAReleasedInputThatOwnsItsBuffer) {
    engine::ThreadPool pool(1);
    engine::KernelContext ctx(pool, nullptr, nullptr);
    const Value owned(weights({4, 4}, 1));
    const Value other(weights({4, 4}, 2));
    const std::vector<const Value*> inputs{&owned, &other, nullptr};
    EXPECT_FALSE(engine::reusableInputTensor(ctx, inputs, 0));  // nothing said: not released
    const std::vector<char> released{1, 0, 1};
    ctx.setReleasedInputs(&released);
    auto reused = engine::reusableInputTensor(ctx, inputs, 0);
    ASSERT_TRUE(reused);
    EXPECT_TRUE(reused->sharesStorageWith(owned.tensor()));
    EXPECT_FALSE(engine::reusableInputTensor(ctx, inputs, 1));  // not released
    EXPECT_FALSE(engine::reusableInputTensor(ctx, inputs, 2));  // absent
    EXPECT_FALSE(engine::reusableInputTensor(ctx, inputs, 3));  // past the inputs
    // A second holder of the buffer (a caller's feed, a view, an observer) keeps it read-only.
    reused.reset();
    const Tensor holder = owned.tensor();
    EXPECT_FALSE(engine::reusableInputTensor(ctx, inputs, 0));
}

// The blocked pools against the plain ones on the geometries that shape a window: dilations,
// ceil_mode windows running past the input, padding counted (count_include_pad) or not.
TEST(ChannelBlockedLayout, BlockedPoolsComputeWhatThePlainPoolsCompute) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {2, 12, 9, 11});
    addConv(g, "x", "a", 12, 12, 1, 1, 1);
    auto* maxPool = addNode(g, "MaxPool", {"a"}, {"max"});
    setAttr(*maxPool, "kernel_shape", std::vector<std::int64_t>{3, 2});
    setAttr(*maxPool, "dilations", std::vector<std::int64_t>{2, 1});
    setAttr(*maxPool, "strides", std::vector<std::int64_t>{2, 2});
    setAttr(*maxPool, "pads", std::vector<std::int64_t>{1, 0, 1, 1});
    setAttr(*maxPool, "ceil_mode", std::int64_t{1});
    auto* counted = addNode(g, "AveragePool", {"max"}, {"counted"});
    setAttr(*counted, "kernel_shape", std::vector<std::int64_t>{3, 3});
    setAttr(*counted, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    setAttr(*counted, "strides", std::vector<std::int64_t>{2, 2});
    setAttr(*counted, "ceil_mode", std::int64_t{1});
    setAttr(*counted, "count_include_pad", std::int64_t{1});
    auto* uncounted = addNode(g, "AveragePool", {"a"}, {"uncounted"});
    setAttr(*uncounted, "kernel_shape", std::vector<std::int64_t>{2, 3});
    setAttr(*uncounted, "pads", std::vector<std::int64_t>{1, 2, 0, 2});
    for (const char* out : {"max", "counted", "uncounted"}) g.add_output()->set_name(out);
    onnx::ModelProto blocked = m;
    engine::convertToChannelBlockedLayout(blocked, 8);
    auto counts = opCounts(blocked);
    EXPECT_EQ(counts["BlockedMaxPool"], 1);
    EXPECT_EQ(counts["BlockedAveragePool"], 2);
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block);
        expectBlockedComputesTheSame(m, block, 2);
    }
}

// A block other than the machine's 8 and 16 lanes (read from the tensor's last dim) takes the
// lane-by-lane path (4 lanes) or vectors of 16 and the rest lane by lane (24 lanes), and computes
// the same windows.
TEST(ChannelBlockedLayout, BlockedPoolOfAnyBlockWidthMatchesThePlainPool) {
    const Tensor plain = weights({1, 6, 5, 7}, 9);
    auto attributes = [](onnx::NodeProto& n) {
        setAttr(n, "kernel_shape", std::vector<std::int64_t>{2, 3});
        setAttr(n, "pads", std::vector<std::int64_t>{1, 1, 0, 1});
        setAttr(n, "strides", std::vector<std::int64_t>{2, 1});
    };
    for (std::int64_t block : {4, 24})
        for (const char* op : {"MaxPool", "AveragePool"}) {
            SCOPED_TRACE(std::string(op) + " block " + std::to_string(block));
            const Tensor expected = runOneNodeTensor({op, "", 17, {Value(plain)}, 1, attributes});
            // [1, 6, 5, 7] blocked, lanes past channel 5 zero.
            const std::int64_t blocks = (6 + block - 1) / block;
            Tensor blocked = Tensor::zeros(DataType::Float, {1, blocks, 5, 7, block});
            for (std::int64_t c = 0; c < 6; ++c)
                for (std::int64_t p = 0; p < 35; ++p)
                    blocked.data<float>()[((c / block) * 35 + p) * block + c % block] =
                        plain.data<float>()[c * 35 + p];
            const Tensor actual = runOneNodeTensor({std::string("Blocked") + op,
                                                    engine::kOnnxlensDomain,
                                                    1,
                                                    {Value(blocked)},
                                                    1,
                                                    attributes});
            ASSERT_EQ(actual.shape(), (Shape{1, blocks, expected.dim(2), expected.dim(3), block}));
            const std::int64_t pixels = expected.dim(2) * expected.dim(3);
            for (std::int64_t c = 0; c < 6; ++c)
                for (std::int64_t p = 0; p < pixels; ++p)
                    EXPECT_NEAR(
                        actual.data<float>()[((c / block) * pixels + p) * block + c % block],
                        expected.data<float>()[c * pixels + p], 1e-6)
                        << "channel " << c << " position " << p;  // the sums' order may differ
        }
}

// 3x3 convolutions of stride 1 wide and large enough for oneDNN's Winograd kernel (where the CPU
// has one; the direct kernel otherwise), with a fused activation and a summed shortcut, compute
// what the plain network computes; the 8-lane block, which that kernel does not take, falls back
// to the direct one.
TEST(ChannelBlockedLayout, WideThreeByThreeConvolutionsComputeTheSame) {
    auto m = emptyModel();
    auto& g = *m.mutable_graph();
    addFloatInput(g, "x", {1, 64, 20, 18});
    addConv(g, "x", "a", 64, 64, 3, 1, 1);
    addNode(g, "Relu", {"a"}, {"ar"});
    addConv(g, "ar", "b", 64, 96, 3, 1, 2);
    addConv(g, "ar", "c", 64, 96, 1, 1, 3);
    addNode(g, "Add", {"b", "c"}, {"sum"});
    addNode(g, "Relu", {"sum"}, {"y"});
    g.add_output()->set_name("y");
    EXPECT_GT(engine::fuseConvAdd(m), 0);
    EXPECT_GT(engine::fuseConvActivation(m), 0);
    for (std::int64_t block : {8, 16}) {
        SCOPED_TRACE(block);
        expectBlockedComputesTheSame(m, block, 1, 2e-6);
        expectBlockedComputesTheSame(m, block, 2, 2e-6);
    }
}
