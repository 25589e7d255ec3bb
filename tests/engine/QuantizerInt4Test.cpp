// Int4 weight-only quantization (Quantizer, format int4): the MatMulNBits layout on a hand-worked
// example with K padded to whole blocks, every weight dequantized from the written bytes against
// the original, the graph and checker verdict, the engine's output against a double-precision
// product with the dequantized weights, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "GraphBuilding.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/workflows/Quantizer.h"

namespace onnxlens::testing {
namespace {

using engine::QuantizationFormat;
using engine::QuantizeOptions;

QuantizeOptions int4Options(std::int64_t blockSize, bool symmetric) {
    QuantizeOptions o;
    o.format = QuantizationFormat::Int4;
    o.opTypes = {"MatMul", "Gemm"};
    o.blockSize = blockSize;
    o.symmetric = symmetric;
    return o;
}

// W [20, 3]: column 0 = k / 2 - 4, column 1 zeros, column 2 pseudo-random.
std::vector<float> handWeights() {
    std::vector<float> w(20 * 3);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.5f, 1.0f);
    for (int k = 0; k < 20; ++k) {
        w[k * 3 + 0] = 0.5f * static_cast<float>(k) - 4.0f;
        w[k * 3 + 1] = 0.0f;
        w[k * 3 + 2] = d(rng);
    }
    return w;
}

// Y = X [2, K] . W [K, N], then a Gemm that int4 leaves alone.
onnx::ModelProto matMulModel(std::int64_t k, std::int64_t n, const std::vector<float>& w) {
    auto m = emptyModel(17);
    auto& g = *m.mutable_graph();
    g.set_name("int4");
    addFloatInput(g, "X", {2, k});
    addInitializer(g, "W", Tensor::fromVector<float>({k, n}, w));
    addInitializer(g, "G", Tensor::fromVector<float>({n, 2}, std::vector<float>(n * 2, 0.5f)));
    addNode(g, "MatMul", {"X", "W"}, {"XW"})->set_name("proj");
    addNode(g, "Gemm", {"XW", "G"}, {"Y"})->set_name("head");
    auto* o = g.add_output();
    o->set_name("Y");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    o->mutable_type()->mutable_tensor_type()->mutable_shape();
    auto* o2 = g.add_output();
    o2->set_name("XW");
    o2->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    o2->mutable_type()->mutable_tensor_type()->mutable_shape();
    return m;
}

const onnx::TensorProto* initializer(const onnx::ModelProto& m, const std::string& name) {
    for (const auto& t : m.graph().initializer())
        if (t.name() == name) return &t;
    return nullptr;
}

std::int64_t intAttr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return a.i();
    return -1;
}

// The weights the written bytes stand for, [K, N] in double: (q - zero point) * scale.
std::vector<double> dequantized(const engine::Int4Weight& q) {
    std::vector<double> w(static_cast<std::size_t>(q.k * q.n));
    const std::int64_t blob = q.blockSize / 2, zpBytes = (q.kBlocks + 1) / 2;
    for (std::int64_t n = 0; n < q.n; ++n)
        for (std::int64_t k = 0; k < q.k; ++k) {
            const std::int64_t b = k / q.blockSize, j = k % q.blockSize;
            const int byte = q.packed[static_cast<std::size_t>((n * q.kBlocks + b) * blob + j / 2)];
            const int code = j % 2 == 0 ? byte & 15 : byte >> 4;
            int zp = 8;
            if (!q.zeroPoints.empty()) {
                const int z = q.zeroPoints[static_cast<std::size_t>(n * zpBytes + b / 2)];
                zp = b % 2 == 0 ? z & 15 : z >> 4;
            }
            w[static_cast<std::size_t>(k * q.n + n)] =
                (code - zp) *
                static_cast<double>(q.scales[static_cast<std::size_t>(n * q.kBlocks + b)]);
        }
    return w;
}

// Every weight within half a step of its dequantized value, except where the code was clamped
// at an end of [0, 15] (symmetric blocks reach -8 steps on one side only: a value beyond +7.5
// steps on the other is clamped to 7, at most one step off), as ONNX Runtime's quantizer does.
void expectWithinHalfAStep(const std::vector<float>& w, const engine::Int4Weight& q) {
    const auto deq = dequantized(q);
    for (std::int64_t n = 0; n < q.n; ++n)
        for (std::int64_t k = 0; k < q.k; ++k) {
            const double step =
                std::fabs(q.scales[static_cast<std::size_t>(n * q.kBlocks + k / q.blockSize)]);
            const double original = w[static_cast<std::size_t>(k * q.n + n)];
            const double err = std::fabs(deq[static_cast<std::size_t>(k * q.n + n)] - original);
            if (err <= 0.5 * step * (1 + 1e-5) + 1e-12) continue;
            EXPECT_LE(err, step * (1 + 1e-5)) << "k " << k << " n " << n;
            EXPECT_GT(std::fabs(original), 6.5 * step) << "k " << k << " n " << n
                                                       << ": off by more than half a step inside "
                                                          "the range";
        }
}

TEST(QuantizerInt4, SymmetricPackedLayoutWorkedByHandWithPaddedK) {
    const auto w = handWeights();
    const auto q = engine::quantizeInt4(w.data(), 20, 3, 16, true);
    ASSERT_EQ(q.kBlocks, 2);
    ASSERT_EQ(q.packed.size(), 3u * 2 * 8);
    ASSERT_EQ(q.scales.size(), 6u);
    EXPECT_TRUE(q.zeroPoints.empty());
    // Column 0, block 0: k / 2 - 4 for k < 16, largest magnitude -4: scale -4 / -8 = 0.5, code
    // round(v / 0.5) + 8 = k, the even k in the low nibble.
    EXPECT_FLOAT_EQ(q.scales[0], 0.5f);
    const std::vector<int> block0 = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
    for (int j = 0; j < 8; ++j) EXPECT_EQ(q.packed[j], block0[j]) << j;
    // Block 1: 4, 4.5, 5, 5.5 then 12 zeros of padding; largest magnitude 5.5: scale -0.6875,
    // codes round(v / -0.6875) + 8 = 2, 1, 1, 0, and 8 for the padding.
    EXPECT_FLOAT_EQ(q.scales[1], -0.6875f);
    const std::vector<int> block1 = {0x12, 0x01, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
    for (int j = 0; j < 8; ++j) EXPECT_EQ(q.packed[8 + j], block1[j]) << j;
    // Column 1 is zeros: scale 0, every code 8.
    EXPECT_EQ(q.scales[2], 0.0f);
    EXPECT_EQ(q.scales[3], 0.0f);
    for (int j = 16; j < 32; ++j) EXPECT_EQ(q.packed[j], 0x88) << j;
    expectWithinHalfAStep(w, q);
}

TEST(QuantizerInt4, AsymmetricZeroPointsPackedTwoPerByte) {
    const auto w = handWeights();
    const auto q = engine::quantizeInt4(w.data(), 20, 3, 16, false);
    ASSERT_EQ(q.zeroPoints.size(), 3u);  // N * ceil(2 / 2)
    // Column 0, block 0: range [-4, 3.5] over 15 steps: scale 0.5, zero point 8, codes k.
    EXPECT_FLOAT_EQ(q.scales[0], 0.5f);
    for (int j = 0; j < 8; ++j) EXPECT_EQ(q.packed[j], (2 * j) | ((2 * j + 1) << 4)) << j;
    // Block 1: range [0, 5.5] (zero included): scale 5.5 / 15, zero point 0; codes
    // round(v * 15 / 5.5) = 11, 12, 14, 15; the padding zeros are code 0.
    EXPECT_FLOAT_EQ(q.scales[1], 5.5f / 15);
    const std::vector<int> block1 = {0xCB, 0xFE, 0, 0, 0, 0, 0, 0};
    for (int j = 0; j < 8; ++j) EXPECT_EQ(q.packed[8 + j], block1[j]) << j;
    EXPECT_EQ(q.zeroPoints[0], 0x08);  // block 0 (8) low, block 1 (0) high
    EXPECT_EQ(q.zeroPoints[1], 0x00);  // zeros: scale 0, zero point 0
    expectWithinHalfAStep(w, q);
}

TEST(QuantizerInt4, RandomWeightsEveryBlockSizeWithinHalfAStep) {
    std::mt19937 rng(3);
    std::normal_distribution<float> d(0.0f, 0.2f);
    for (const std::int64_t k : {16, 37, 64, 300})
        for (const std::int64_t block : {16, 32, 64, 128, 256})
            for (const bool symmetric : {true, false}) {
                std::vector<float> w(static_cast<std::size_t>(k * 5));
                for (auto& v : w) v = d(rng);
                const auto q = engine::quantizeInt4(w.data(), k, 5, block, symmetric);
                EXPECT_EQ(q.kBlocks, (k + block - 1) / block);
                SCOPED_TRACE("K " + std::to_string(k) + " block " + std::to_string(block) +
                             (symmetric ? " symmetric" : " asymmetric"));
                expectWithinHalfAStep(w, q);
            }
}

TEST(QuantizerInt4, WritesMatMulNBitsThatChecksAndRunsAsTheDequantizedProduct) {
    const auto w = handWeights();
    const auto model = matMulModel(20, 3, w);
    for (const bool symmetric : {true, false}) {
        SCOPED_TRACE(symmetric ? "symmetric" : "asymmetric");
        auto options = int4Options(16, symmetric);
        options.accuracyLevel = 0;
        auto q = engine::quantizeModel(model, "m.onnx", options);
        ASSERT_TRUE(q) << q.error().message;
        ASSERT_EQ(q->quantized.size(), 1u);
        ASSERT_EQ(q->skipped.size(), 1u);
        EXPECT_EQ(q->skipped[0].name, "head");
        EXPECT_NE(q->skipped[0].reason.find("MatMul only"), std::string::npos);
        const auto& node = q->model.graph().node(0);
        EXPECT_EQ(node.op_type(), "MatMulNBits");
        EXPECT_EQ(node.domain(), "com.microsoft");
        EXPECT_EQ(node.name(), "proj_Q4");
        EXPECT_EQ(node.output(0), "XW");
        ASSERT_EQ(node.input_size(), symmetric ? 3 : 4);
        EXPECT_EQ(node.input(0), "X");
        EXPECT_EQ(node.input(1), "W_Q4");
        EXPECT_EQ(node.input(2), "W_scales");
        EXPECT_EQ(intAttr(node, "K"), 20);
        EXPECT_EQ(intAttr(node, "N"), 3);
        EXPECT_EQ(intAttr(node, "bits"), 4);
        EXPECT_EQ(intAttr(node, "block_size"), 16);
        EXPECT_EQ(intAttr(node, "accuracy_level"), 0);
        EXPECT_EQ(q->model.graph().node(1).op_type(), "Gemm");
        EXPECT_EQ(initializer(q->model, "W"), nullptr);

        const Tensor b = engine::tensorFromProto(*initializer(q->model, "W_Q4"));
        EXPECT_EQ(b.dtype(), DataType::UInt8);
        EXPECT_EQ(b.shape(), (Shape{3, 2, 8}));
        const Tensor scales = engine::tensorFromProto(*initializer(q->model, "W_scales"));
        EXPECT_EQ(scales.dtype(), DataType::Float);
        EXPECT_EQ(scales.shape(), (Shape{6}));
        const auto expected = engine::quantizeInt4(w.data(), 20, 3, 16, symmetric);
        EXPECT_TRUE(
            std::equal(expected.packed.begin(), expected.packed.end(), b.data<std::uint8_t>()));
        if (!symmetric) {
            EXPECT_EQ(node.input(3), "W_zero_points");
            const Tensor zp = engine::tensorFromProto(*initializer(q->model, "W_zero_points"));
            EXPECT_EQ(zp.dtype(), DataType::UInt8);
            EXPECT_EQ(zp.shape(), (Shape{3}));
        }
        bool msImport = false;
        for (const auto& o : q->model.opset_import())
            if (o.domain() == "com.microsoft" && o.version() == 1) msImport = true;
        EXPECT_TRUE(msImport);
        const auto verdict = runChecker(q->model);
        EXPECT_TRUE(verdict.ok) << verdict.message;
        EXPECT_NE(q->model.metadata_props(0).value().find("\"weight_type\":\"int4\""),
                  std::string::npos);

        // The engine's MatMulNBits against X . dequantize(B) in double.
        std::vector<float> x(40);
        for (int i = 0; i < 40; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) - 0.2f;
        LoadedModel loaded;
        loaded.path = "int4.onnx";
        loaded.proto = std::make_shared<onnx::ModelProto>(q->model);
        auto session = engine::Session::create(loaded);
        ASSERT_TRUE(session) << session.error().message;
        auto out = (*session)->run({{"X", Value(Tensor::fromVector<float>({2, 20}, x))}});
        ASSERT_TRUE(out) << out.error().message;
        const Tensor* xw = nullptr;
        for (std::size_t i = 0; i < out->size(); ++i)
            if (q->model.graph().output(static_cast<int>(i)).name() == "XW")
                xw = &(*out)[i].tensor();
        ASSERT_NE(xw, nullptr);
        const auto deq = dequantized(expected);
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c) {
                double want = 0;
                for (int k = 0; k < 20; ++k) want += x[r * 20 + k] * deq[k * 3 + c];
                EXPECT_NEAR(xw->data<float>()[r * 3 + c], want, 1e-4) << r << "," << c;
            }
    }
}

TEST(QuantizerInt4, RefusesBadBlockSizesAndAccuracyLevels) {
    const auto model = matMulModel(20, 3, handWeights());
    for (const std::int64_t block : {0, 8, 24, 48, 512, -32}) {
        auto q = engine::quantizeModel(model, "m.onnx", int4Options(block, true));
        ASSERT_FALSE(q) << block;
        EXPECT_NE(q.error().message.find("block size"), std::string::npos);
    }
    for (const std::int64_t level : {-1, 5}) {
        auto options = int4Options(32, true);
        options.accuracyLevel = level;
        auto q = engine::quantizeModel(model, "m.onnx", options);
        ASSERT_FALSE(q) << level;
        EXPECT_NE(q.error().message.find("accuracy level"), std::string::npos);
    }
    // Only Gemm asked for: nothing int4 can quantize, with the reason.
    auto options = int4Options(32, true);
    options.opTypes = {"Gemm"};
    auto q = engine::quantizeModel(model, "m.onnx", options);
    ASSERT_FALSE(q);
    EXPECT_NE(q.error().message.find("MatMul only"), std::string::npos);
}

}  // namespace
}  // namespace onnxlens::testing
