// Dynamic int8 quantization (engine/workflows/Quantizer): the graph it writes, the int8 weights
// and scales against values computed here by hand, the engine's outputs against a hand-written
// int8 computation and against the float model, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "GraphBuilding.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ModelWriter.h"
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/Quantizer.h"

namespace onnxlens::testing {
namespace {

namespace fs = std::filesystem;
using engine::QuantizationFormat;
using engine::QuantizeOptions;

std::vector<float> randomFloats(std::size_t n, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

void addOutput(onnx::GraphProto& g, const std::string& name) {
    auto* o = g.add_output();
    o->set_name(name);
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    o->mutable_type()->mutable_tensor_type()->mutable_shape();
}

// Y = X [2, 4] . W [4, 3] + B
onnx::ModelProto matMulAddModel(int opset = 17) {
    auto m = emptyModel(opset);
    auto* meta = m.add_metadata_props();
    meta->set_key("author");
    meta->set_value("tests");
    auto& g = *m.mutable_graph();
    g.set_name("matmul_add");
    addFloatInput(g, "X", {2, 4});
    addInitializer(g, "W",
                   Tensor::fromVector<float>({4, 3}, {0.5f, -1.0f, 0.25f, 0.1f, 0.2f, -0.3f, -0.6f,
                                                      0.9f, 0.05f, 1.27f, -0.01f, 0.0f}));
    addInitializer(g, "B", Tensor::fromVector<float>({3}, {0.1f, 0.2f, 0.3f}));
    addNode(g, "MatMul", {"X", "W"}, {"XW"})->set_name("proj");
    addNode(g, "Add", {"XW", "B"}, {"Y"});
    addOutput(g, "Y");
    return m;
}

std::vector<Value> runModel(const onnx::ModelProto& proto,
                            const std::map<std::string, Value>& feeds) {
    LoadedModel loaded;
    loaded.path = "test.onnx";
    loaded.proto = std::make_shared<onnx::ModelProto>(proto);
    auto session = engine::Session::create(loaded);
    EXPECT_TRUE(session) << (session ? "" : session.error().message);
    if (!session) return {};
    auto out = (*session)->run(feeds);
    EXPECT_TRUE(out) << (out ? "" : out.error().message);
    return out ? *out : std::vector<Value>{};
}

std::vector<std::string> opTypes(const onnx::ModelProto& m) {
    std::vector<std::string> ops;
    for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
    return ops;
}

const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
    for (const auto& t : m.graph().initializer())
        if (t.name() == name) return &t;
    return nullptr;
}

// DynamicQuantizeLinear as the ONNX spec defines it, in double precision where it does not matter.
struct DynamicQuantized {
    std::vector<int> q;
    float scale;
    int zeroPoint;
};
DynamicQuantized dynamicQuantize(const std::vector<float>& x) {
    float lo = 0, hi = 0;
    for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
    DynamicQuantized d;
    d.scale = (hi - lo) / 255.0f;
    d.zeroPoint = static_cast<int>(std::clamp(std::nearbyint(0 - lo / d.scale), 0.0f, 255.0f));
    for (float v : x)
        d.q.push_back(
            static_cast<int>(std::clamp(std::nearbyint(v / d.scale) + d.zeroPoint, 0.0f, 255.0f)));
    return d;
}

TEST(Quantizer, MatMulPerTensorWritesOnnxRuntimesLayoutWithHandCheckedWeights) {
    const auto model = matMulAddModel();
    auto q = engine::quantizeModel(model, "m.onnx", {});
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_EQ(opTypes(q->model), (std::vector<std::string>{"DynamicQuantizeLinear", "MatMulInteger",
                                                           "Cast", "Mul", "Mul", "Add"}));
    const auto& mm = q->model.graph().node(1);
    EXPECT_EQ(mm.name(), "proj_quant");
    EXPECT_EQ(mm.input(0), "X_quantized");
    EXPECT_EQ(mm.input(1), "W_quantized");
    EXPECT_EQ(mm.input(2), "X_zero_point");
    EXPECT_EQ(mm.input(3), "W_zero_point");
    EXPECT_EQ(q->model.graph().node(4).output(0), "XW");  // the float node's output name is kept
    ASSERT_EQ(q->quantized.size(), 1u);
    EXPECT_EQ(q->quantized[0].name, "proj");
    EXPECT_EQ(q->quantized[0].output, "XW");
    EXPECT_EQ(q->quantized[0].int8Nodes.size(), 5u);
    EXPECT_EQ(q->quantizedPerOpType.at("MatMul"), 1);
    EXPECT_EQ(initializer(q->model, "W"), nullptr);  // the float weight is gone
    ASSERT_NE(initializer(q->model, "B"), nullptr);

    // Symmetric: scale = max|W| / 127 = 1.27 / 127 = 0.01, values round(W / 0.01).
    const Tensor scale = engine::tensorFromProto(*initializer(q->model, "W_scale"));
    EXPECT_EQ(scale.rank(), 0);
    EXPECT_FLOAT_EQ(scale.data<float>()[0], 2 * 1.27f / 254);
    const Tensor wq = engine::tensorFromProto(*initializer(q->model, "W_quantized"));
    ASSERT_EQ(wq.dtype(), DataType::Int8);
    const std::vector<int> expected = {50, -100, 25, 10, 20, -30, -60, 90, 5, 127, -1, 0};
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_EQ(wq.data<std::int8_t>()[i], expected[i]) << i;
    EXPECT_EQ(
        engine::tensorFromProto(*initializer(q->model, "W_zero_point")).data<std::int8_t>()[0], 0);

    // Metadata kept, settings recorded, inputs and outputs unchanged, checker passes.
    std::map<std::string, std::string> props;
    for (const auto& p : q->model.metadata_props()) props[p.key()] = p.value();
    EXPECT_EQ(props["author"], "tests");
    EXPECT_NE(props["onnxlens.quantization"].find("\"per_channel\":false"), std::string::npos);
    EXPECT_EQ(q->model.graph().input(0).SerializeAsString(),
              model.graph().input(0).SerializeAsString());
    EXPECT_EQ(q->model.graph().output(0).SerializeAsString(),
              model.graph().output(0).SerializeAsString());
    EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;

    // The engine's output is the int8 computation done by hand here.
    const std::vector<float> x = {0.3f, -0.7f, 1.1f, 0.05f, -0.2f, 0.9f, 0.4f, -1.3f};
    const auto out = runModel(q->model, {{"X", Value(Tensor::fromVector<float>({2, 4}, x))}});
    ASSERT_EQ(out.size(), 1u);
    const auto dq = dynamicQuantize(x);
    const float ws = scale.data<float>()[0];
    const std::vector<float> bias = {0.1f, 0.2f, 0.3f};
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
            int acc = 0;
            for (int k = 0; k < 4; ++k)
                acc += (dq.q[r * 4 + k] - dq.zeroPoint) * expected[k * 3 + c];
            const float want = static_cast<float>(acc) * (dq.scale * ws) + bias[c];
            EXPECT_NEAR(out[0].tensor().data<float>()[r * 3 + c], want, 1e-5f) << r << "," << c;
        }
}

TEST(Quantizer, PerChannelMatMulHasOneScalePerColumn) {
    QuantizeOptions options;
    options.perChannel = true;
    auto q = engine::quantizeModel(matMulAddModel(), "m.onnx", options);
    ASSERT_TRUE(q) << q.error().message;
    const Tensor scale = engine::tensorFromProto(*initializer(q->model, "W_scale"));
    ASSERT_EQ(scale.shape(), (Shape{3}));
    // Column maxima of |W|: 1.27, 1.0, 0.3.
    EXPECT_FLOAT_EQ(scale.data<float>()[0], 2.54f / 254);
    EXPECT_FLOAT_EQ(scale.data<float>()[1], 2.0f / 254);
    EXPECT_FLOAT_EQ(scale.data<float>()[2], 0.6f / 254);
    const Tensor zp = engine::tensorFromProto(*initializer(q->model, "W_zero_point"));
    EXPECT_EQ(zp.shape(), (Shape{3}));
    const Tensor wq = engine::tensorFromProto(*initializer(q->model, "W_quantized"));
    EXPECT_EQ(wq.data<std::int8_t>()[1], -127);  // -1.0 / (1.0 / 127)
    EXPECT_EQ(wq.data<std::int8_t>()[7], 114);   // 0.9 / (1.0 / 127) = 114.3
    EXPECT_EQ(wq.data<std::int8_t>()[2], 106);   // 0.25 / (0.3 / 127) = 105.83
    EXPECT_EQ(wq.data<std::int8_t>()[9], 127);
    EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;
}

// The float model and its int8 twin on the same random input: SQNR of the output in dB.
double sqnrAgainstFloat(const onnx::ModelProto& floatModel, const onnx::ModelProto& int8Model,
                        const std::string& input, Shape shape, unsigned seed = 1) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    const Value x(
        Tensor::fromVector<float>(shape, randomFloats(static_cast<std::size_t>(n), seed)));
    const auto f = runModel(floatModel, {{input, x}});
    const auto q = runModel(int8Model, {{input, x}});
    EXPECT_EQ(f.size(), q.size());
    if (f.empty() || q.empty()) return 0;
    engine::AgreementAccumulator acc;
    EXPECT_TRUE(acc.add(f[0].tensor(), q[0].tensor()));
    double signal = 0, noise = 0;
    const auto a = f[0].tensor().span<float>();
    const auto b = q[0].tensor().span<float>();
    for (std::size_t i = 0; i < a.size(); ++i)
        signal += double(a[i]) * a[i], noise += double(a[i] - b[i]) * (a[i] - b[i]);
    const double db = 10 * std::log10(signal / noise);
    EXPECT_NEAR(acc.figures().sqnrDb, db, 1e-9);
    return db;
}

onnx::ModelProto gemmModel(bool transB, float alpha, float beta) {
    auto m = emptyModel(13);
    auto& g = *m.mutable_graph();
    g.set_name("gemm");
    addFloatInput(g, "X", {3, 16});
    const Shape wShape = transB ? Shape{8, 16} : Shape{16, 8};
    addInitializer(g, "W", Tensor::fromVector<float>(wShape, randomFloats(128, 7)));
    addInitializer(g, "C", Tensor::fromVector<float>({8}, randomFloats(8, 8)));
    auto* gemm = addNode(g, "Gemm", {"X", "W", "C"}, {"Y"});
    setAttr(*gemm, "transB", std::int64_t{transB ? 1 : 0});
    setAttr(*gemm, "alpha", alpha);
    setAttr(*gemm, "beta", beta);
    addOutput(g, "Y");
    return m;
}

TEST(Quantizer, GemmWithTransBAlphaBetaStaysCloseToFloat) {
    for (bool perChannel : {false, true}) {
        const auto model = gemmModel(true, 0.5f, 2.0f);
        QuantizeOptions options;
        options.perChannel = perChannel;
        auto q = engine::quantizeModel(model, "gemm.onnx", options);
        ASSERT_TRUE(q) << q.error().message;
        EXPECT_EQ(opTypes(q->model),
                  (std::vector<std::string>{"DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul",
                                            "Mul", "Add"}));
        // transB: the int8 weight is stored [K, N] for MatMulInteger.
        EXPECT_EQ(engine::tensorFromProto(*initializer(q->model, "W_quantized")).shape(),
                  (Shape{16, 8}));
        EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;
        EXPECT_GT(sqnrAgainstFloat(model, q->model, "X", {3, 16}), 30.0) << perChannel;
    }
}

onnx::ModelProto convModel() {
    auto m = emptyModel(13);
    auto& g = *m.mutable_graph();
    g.set_name("conv");
    addFloatInput(g, "X", {1, 3, 8, 8});
    // Output channels of very different magnitudes: per-channel scales matter.
    auto w = randomFloats(4 * 3 * 3 * 3, 11);
    for (std::size_t i = 0; i < 27; ++i) w[i] *= 0.01f;
    addInitializer(g, "W", Tensor::fromVector<float>({4, 3, 3, 3}, w));
    addInitializer(g, "B", Tensor::fromVector<float>({4}, {0.1f, -0.2f, 0.3f, 0.0f}));
    auto* conv = addNode(g, "Conv", {"X", "W", "B"}, {"Y"});
    setAttr(*conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    setAttr(*conv, "strides", std::vector<std::int64_t>{2, 2});
    addOutput(g, "Y");
    return m;
}

TEST(Quantizer, ConvIsQuantizedOnlyWhenAskedAndPerChannelBeatsPerTensor) {
    const auto model = convModel();
    auto defaults = engine::quantizeModel(model, "conv.onnx", {});
    ASSERT_FALSE(defaults);
    EXPECT_NE(defaults.error().message.find("nothing to quantize"), std::string::npos)
        << defaults.error().message;

    double perTensorDb = 0, perChannel0Db = 0, perTensor0Db = 0;
    const Value x(Tensor::fromVector<float>({1, 3, 8, 8}, randomFloats(192, 4)));
    const auto reference = runModel(model, {{"X", x}});
    ASSERT_EQ(reference.size(), 1u);
    for (bool perChannel : {false, true}) {
        QuantizeOptions options;
        options.opTypes = {"Conv"};
        options.perChannel = perChannel;
        auto q = engine::quantizeModel(model, "conv.onnx", options);
        ASSERT_TRUE(q) << q.error().message;
        EXPECT_EQ(opTypes(q->model),
                  (std::vector<std::string>{"DynamicQuantizeLinear", "ConvInteger", "Cast", "Mul",
                                            "Mul", "Add"}));
        const auto& conv = q->model.graph().node(1);
        EXPECT_EQ(conv.attribute_size(), 2);  // pads and strides carried over
        EXPECT_EQ(engine::tensorFromProto(*initializer(q->model, "B_reshaped")).shape(),
                  (Shape{4, 1, 1}));
        EXPECT_EQ(engine::tensorFromProto(*initializer(q->model, "W_scale")).shape(),
                  (perChannel ? Shape{4, 1, 1} : Shape{}));
        EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;
        if (!perChannel) perTensorDb = sqnrAgainstFloat(model, q->model, "X", {1, 3, 8, 8});
        // Output channel 0 (its 4 x 4 values first) without its bias.
        const auto out = runModel(q->model, {{"X", x}});
        ASSERT_EQ(out.size(), 1u);
        double signal = 0, noise = 0;
        for (int i = 0; i < 16; ++i) {
            const double r = reference[0].tensor().data<float>()[i] - 0.1;
            const double e =
                out[0].tensor().data<float>()[i] - reference[0].tensor().data<float>()[i];
            signal += r * r, noise += e * e;
        }
        (perChannel ? perChannel0Db : perTensor0Db) = 10 * std::log10(signal / noise);
    }
    EXPECT_GT(perTensorDb, 20.0);
    // Channel 0's weights are 100x smaller: per tensor they keep a few levels, per channel all 255.
    EXPECT_GT(perChannel0Db, perTensor0Db + 10) << perChannel0Db << " vs " << perTensor0Db;
}

TEST(Quantizer, QdqFormatKeepsTheFloatNodeOnDequantizedValues) {
    QuantizeOptions options;
    options.format = QuantizationFormat::QDQ;
    options.perChannel = true;
    // Per-axis DequantizeLinear needs opset 13; MatMul and Add got new versions at 13, so an
    // opset-11 model is refused rather than silently moved.
    auto refused = engine::quantizeModel(matMulAddModel(11), "m.onnx", options);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("would move Add-13, MatMul-13"), std::string::npos)
        << refused.error().message;
    const auto model = matMulAddModel(13);
    auto q = engine::quantizeModel(model, "m.onnx", options);
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_EQ(opTypes(q->model),
              (std::vector<std::string>{"DynamicQuantizeLinear", "DequantizeLinear",
                                        "DequantizeLinear", "MatMul", "Add"}));
    const auto& weightDq = q->model.graph().node(2);
    ASSERT_EQ(weightDq.attribute_size(), 1);
    EXPECT_EQ(weightDq.attribute(0).i(), 1);
    EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;
    EXPECT_GT(sqnrAgainstFloat(model, q->model, "X", {2, 4}), 25.0);
}

TEST(Quantizer, RaisesAnOldOpsetOnlyWhenNothingChangesMeaning) {
    auto q = engine::quantizeModel(matMulAddModel(10), "old.onnx", {});
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_EQ(q->opsetBefore, 10);
    EXPECT_EQ(q->opsetAfter, 11);
    EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;

    // Resize changed at opset 11: raising the import would change what the model computes.
    auto model = matMulAddModel(10);
    auto& g = *model.mutable_graph();
    addInitializer(g, "scales", Tensor::fromVector<float>({2}, {1.0f, 1.0f}));
    addNode(g, "Resize", {"Y", "scales"}, {"Z"});
    auto refused = engine::quantizeModel(model, "old.onnx", {});
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("would move Resize-11"), std::string::npos)
        << refused.error().message;
}

TEST(Quantizer, ExcludedAndUnquantizableNodesAreSkippedWithTheirReason) {
    auto model = matMulAddModel();
    auto& g = *model.mutable_graph();
    addFloatInput(g, "V", {3, 2});
    addNode(g, "MatMul", {"Y", "V"}, {"YV"})->set_name("dynamic_weight");
    addInitializer(g, "H", Tensor::fromVector<float>({3, 3}, randomFloats(9, 3)));
    addNode(g, "MatMul", {"Y", "H"}, {"YH"})->set_name("second");
    QuantizeOptions options;
    options.excludedNodes = {"second"};
    auto q = engine::quantizeModel(model, "m.onnx", options);
    ASSERT_TRUE(q) << q.error().message;
    ASSERT_EQ(q->skipped.size(), 2u);
    EXPECT_EQ(q->skipped[0].name, "dynamic_weight");
    EXPECT_EQ(q->skipped[0].reason, "weight is not a constant initializer");
    EXPECT_EQ(q->skipped[1].name, "second");
    EXPECT_EQ(q->skipped[1].reason, "excluded");
    EXPECT_EQ(q->quantized.size(), 1u);

    options.excludedNodes = {"no_such_node"};
    auto unknown = engine::quantizeModel(model, "m.onnx", options);
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message.find("--exclude no_such_node"), std::string::npos);
}

TEST(Quantizer, SharedActivationIsQuantizedOnce) {
    auto model = matMulAddModel();
    auto& g = *model.mutable_graph();
    addInitializer(g, "W2", Tensor::fromVector<float>({4, 2}, randomFloats(8, 5)));
    addNode(g, "MatMul", {"X", "W2"}, {"XW2"})->set_name("other");
    addOutput(g, "XW2");
    auto q = engine::quantizeModel(model, "m.onnx", {});
    ASSERT_TRUE(q) << q.error().message;
    int dynamicQuantizers = 0;
    for (const auto& op : opTypes(q->model)) dynamicQuantizers += op == "DynamicQuantizeLinear";
    EXPECT_EQ(dynamicQuantizers, 1);
    EXPECT_TRUE(runChecker(q->model).ok) << runChecker(q->model).message;
}

class QuantizerFiles : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("onnxlens-quantizer-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
};

TEST_F(QuantizerFiles, ExternalDataInAndOut) {
    // A float model with its weights in an external file, quantized with a low threshold: the int8
    // model keeps its weights beside it too, and runs like the in-memory quantization.
    auto model = gemmModel(false, 1.0f, 1.0f);
    ModelWriteOptions external;
    external.forceExternalData = true;
    external.externalTensorMinBytes = 16;
    auto written = writeModelFile(model, dir_ / "float.onnx", external);
    ASSERT_TRUE(written) << written.error().message;
    ASSERT_TRUE(fs::exists(dir_ / "float.onnx.data"));

    auto q = engine::quantizeModelFile(dir_ / "float.onnx", {});
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_TRUE(q->inputUsedExternalData);
    EXPECT_EQ(q->bytesBefore,
              fs::file_size(dir_ / "float.onnx") + fs::file_size(dir_ / "float.onnx.data"));
    const auto inMemory = q->result.model;
    ModelWriteOptions options;
    options.externalTensorMinBytes = 16;
    auto out = engine::writeQuantizedModel(*q, dir_ / "int8.onnx", options);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->externalDataFile, dir_ / "int8.onnx.data");
    EXPECT_EQ(out->totalBytes(),
              fs::file_size(dir_ / "int8.onnx") + fs::file_size(dir_ / "int8.onnx.data"));

    auto loaded = loadModel(dir_ / "int8.onnx");
    ASSERT_TRUE(loaded) << loaded.error().message;
    auto session = engine::Session::create(*loaded);
    ASSERT_TRUE(session) << session.error().message;
    const Value x(Tensor::fromVector<float>({3, 16}, randomFloats(48, 2)));
    auto fromFile = (*session)->run({{"X", x}});
    ASSERT_TRUE(fromFile);
    const auto fromMemory = runModel(inMemory, {{"X", x}});
    ASSERT_EQ(fromMemory.size(), 1u);
    const auto a = (*fromFile)[0].tensor().span<float>();
    const auto b = fromMemory[0].tensor().span<float>();
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);

    // No temporary files are left behind.
    for (const auto& entry : fs::directory_iterator(dir_))
        EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
            << entry.path();
}

TEST_F(QuantizerFiles, LargeModelsGoExternalAboveTheThreshold) {
    auto model = gemmModel(false, 1.0f, 1.0f);
    {
        std::ofstream out(dir_ / "float.onnx", std::ios::binary);
        model.SerializeToOstream(&out);
    }
    auto q = engine::quantizeModelFile(dir_ / "float.onnx", {});
    ASSERT_TRUE(q) << q.error().message;
    EXPECT_FALSE(q->inputUsedExternalData);
    ModelWriteOptions options;
    options.externalDataThreshold = 64;  // stands in for 2 GB
    options.externalTensorMinBytes = 16;
    auto out = engine::writeQuantizedModel(*q, dir_ / "int8.onnx", options);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_TRUE(fs::exists(dir_ / "int8.onnx.data"));
    auto loaded = loadModel(dir_ / "int8.onnx");
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(runChecker(*loaded->proto).ok);
}

TEST_F(QuantizerFiles, OutputChecks) {
    const auto input = dir_ / "m.onnx";
    {
        std::ofstream out(input, std::ios::binary);
        matMulAddModel().SerializeToOstream(&out);
    }
    EXPECT_FALSE(engine::checkQuantizeOutput(input, input));
    EXPECT_FALSE(engine::checkQuantizeOutput(input, dir_ / "." / "m.onnx"));
    EXPECT_FALSE(engine::checkQuantizeOutput(input, dir_));
    EXPECT_FALSE(engine::checkQuantizeOutput(input, dir_ / "missing" / "out.onnx"));
    EXPECT_TRUE(engine::checkQuantizeOutput(input, dir_ / "out.onnx"));
}

// The report's figures, recomputed here from the two models' raw outputs.
TEST(QuantizationReport, FiguresMatchARecomputationFromTheRawTensors) {
    const fs::path sample =
        fs::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / "mnist_cnn" / "model.onnx";
    QuantizeOptions options;
    options.opTypes = {"Conv", "Gemm"};
    auto q = engine::quantizeModelFile(sample, options);
    ASSERT_TRUE(q) << q.error().message;
    engine::QuantizationReportOptions reportOptions;
    reportOptions.benchmark = true;
    reportOptions.warmup = 0;
    reportOptions.runs = 2;
    reportOptions.threads = 1;
    auto report = engine::buildQuantizationReport(*q, 1000, "int8.onnx", reportOptions);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_EQ(report->inputSets, (std::vector<std::string>{"test_data_set_0", "test_data_set_1"}));
    EXPECT_TRUE(report->benchmarked);
    EXPECT_EQ(report->floatLatency.runs, 2);
    EXPECT_EQ(report->int8Latency.runs, 2);
    EXPECT_DOUBLE_EQ(report->sizeRatio, static_cast<double>(q->bytesBefore) / 1000);

    // Both models on both data sets, the figures computed the plain way.
    double maxAbs = 0, sumAbs = 0, ref2 = 0, act2 = 0, dot = 0, err2 = 0;
    std::int64_t n = 0, rows = 0, top1 = 0;
    for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
        auto input = engine::readValueFile(sample.parent_path() / set / "input_0.pb");
        ASSERT_TRUE(input);
        const auto f = runModel(*q->floatModel.proto, {{"image", *input}});
        const auto i = runModel(q->result.model, {{"image", *input}});
        const Tensor& a = f[0].tensor();
        const Tensor& b = i[0].tensor();
        for (std::int64_t k = 0; k < a.numel(); ++k) {
            const double r = a.data<float>()[k], x = b.data<float>()[k];
            maxAbs = std::max(maxAbs, std::fabs(x - r));
            sumAbs += std::fabs(x - r);
            ref2 += r * r, act2 += x * x, dot += r * x, err2 += (x - r) * (x - r);
            ++n;
        }
        for (std::int64_t r = 0; r < a.dim(0); ++r) {
            const auto rowA = a.span<float>().subspan(static_cast<std::size_t>(r * a.dim(1)),
                                                      static_cast<std::size_t>(a.dim(1)));
            const auto rowB = b.span<float>().subspan(static_cast<std::size_t>(r * b.dim(1)),
                                                      static_cast<std::size_t>(b.dim(1)));
            top1 += std::max_element(rowA.begin(), rowA.end()) - rowA.begin() ==
                    std::max_element(rowB.begin(), rowB.end()) - rowB.begin();
            ++rows;
        }
    }
    ASSERT_EQ(report->outputs.size(), 1u);
    const auto& o = report->outputs[0];
    EXPECT_EQ(o.figures.elements, n);
    EXPECT_NEAR(o.figures.maxAbsError, maxAbs, 1e-6);
    EXPECT_NEAR(o.figures.meanAbsError, sumAbs / n, 1e-7);
    EXPECT_NEAR(o.figures.cosine, dot / std::sqrt(ref2 * act2), 1e-9);
    // Within 0.01 dB: at 84 dB the error energy is 4e-9 of the signal's, so the last bits of the
    // outputs (which oneDNN's kernels of another processor round otherwise: 0.0011 dB apart with
    // its SSE4.1 ones) move the figure in the third decimal.
    EXPECT_NEAR(o.figures.sqnrDb, 10 * std::log10(ref2 / err2), 1e-2);
    EXPECT_TRUE(o.logits);
    EXPECT_EQ(o.rows, rows);
    EXPECT_DOUBLE_EQ(o.top1Agreement, static_cast<double>(top1) / rows);
    // The stated tolerance of the sample CNN: log-probabilities within 25 dB SQNR, same classes.
    EXPECT_GT(o.figures.sqnrDb, 25.0);
    EXPECT_EQ(o.top1Agreement, 1.0);
    EXPECT_TRUE(report->passed);
    // Every quantized node is reported, weakest first.
    EXPECT_EQ(report->nodes.size(), q->result.quantized.size());
    for (std::size_t k = 1; k < report->nodes.size(); ++k)
        EXPECT_LE(report->nodes[k - 1].figures.sqnrDb, report->nodes[k].figures.sqnrDb);
    const auto json = engine::quantizationReportJson(*report);
    EXPECT_EQ(json["outputs"][0]["max_abs_error"].get<double>(), o.figures.maxAbsError);
    EXPECT_NE(engine::quantizationReportMarkdown(*report).find("## Quantized nodes, weakest first"),
              std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
