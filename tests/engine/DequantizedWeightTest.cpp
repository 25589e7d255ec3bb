// The dequantized view of MatMulNBits' and GatherBlockQuantized's weights (the Tensor panel's):
// against values worked here from the unpacked integers (packed by hand, low bits first), and
// against the engine's own kernels on the same tensors (MatMulNBits with A = identity gives
// W^T; GatherBlockQuantized of every index gives the table); bad attributes and inputs are
// errors naming the node and the attribute or input.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/workflows/DequantizedWeight.h"
#include "ops/NumericOpTestHelpers.h"

namespace onnxlens::testing {
namespace {

const std::string kMs = "com.microsoft";

struct NodeAndConstants {
    onnx::NodeProto node;
    std::map<std::string, onnx::TensorProto> constants;
    std::vector<Value> inputs;  // the same tensors, in input order, for the kernel

    void add(const std::string& name, const Tensor& t) {
        node.add_input(name);
        constants[name] = engine::tensorToProto(t, name);
        inputs.push_back(t);
    }
    void skip() {
        node.add_input("");
        inputs.push_back(Value());
    }
    Result<engine::DequantizedWeight> open() const {
        return engine::DequantizedWeight::open(node, [this](const std::string& name) {
            auto it = constants.find(name);
            return it == constants.end() ? nullptr : &it->second;
        });
    }
};

::testing::AssertionResult failsNaming(const Result<engine::DequantizedWeight>& r,
                                       std::initializer_list<const char*> words) {
    if (r) return ::testing::AssertionFailure() << "opened without an error";
    for (const char* w : words)
        if (r.error().message.find(w) == std::string::npos)
            return ::testing::AssertionFailure()
                   << "\"" << r.error().message << "\" does not mention \"" << w << "\"";
    return ::testing::AssertionSuccess();
}

// ---- MatMulNBits -------------------------------------------------------------------------------

struct NBits {
    std::int64_t k = 40, n = 3, blockSize = 16;
    int bits = 4;
    enum class Zero { None, Packed, Float } zero = Zero::None;
    bool groupIndex = false;
};

struct NBitsModel {
    NodeAndConstants m;
    std::vector<double> expected;  // [N, K]
};

NBitsModel makeNBits(const NBits& c, unsigned seed = 7) {
    std::mt19937 rng(seed);
    const std::int64_t kBlocks = (c.k + c.blockSize - 1) / c.blockSize;
    const std::int64_t blob = c.blockSize * c.bits / 8, perByte = 8 / c.bits;
    const int top = (1 << c.bits) - 1;
    std::uniform_int_distribution<int> code(0, top);
    std::uniform_real_distribution<float> scale(0.05f, 0.5f);
    std::vector<int> q(static_cast<std::size_t>(c.n * c.k)), zero(c.n * kBlocks);
    std::vector<float> scales(c.n * kBlocks), floatZero(c.n * kBlocks);
    for (auto& v : q) v = code(rng);
    for (auto& v : zero) v = code(rng);
    for (auto& v : scales) v = scale(rng);
    for (auto& v : floatZero) v = static_cast<float>(code(rng)) + 0.5f;
    std::vector<std::int32_t> gidx(c.k);
    for (std::int64_t i = 0; i < c.k; ++i)
        gidx[i] = static_cast<std::int32_t>((i * 5 + 1) % kBlocks);

    // B [N, k_blocks, blob]: value j of block b of column n at byte j / perByte, bits
    // (j % perByte) * bits; K padded with zeros.
    Tensor b = Tensor::zeros(DataType::UInt8, {c.n, kBlocks, blob});
    auto* bytes = static_cast<std::uint8_t*>(b.raw());
    for (std::int64_t n = 0; n < c.n; ++n)
        for (std::int64_t k = 0; k < c.k; ++k) {
            const std::int64_t j = k % c.blockSize;
            bytes[(n * kBlocks + k / c.blockSize) * blob + j / perByte] |=
                static_cast<std::uint8_t>(q[n * c.k + k] << (j % perByte * c.bits));
        }
    const std::int64_t zeroBlob = (kBlocks * c.bits + 7) / 8;
    Tensor packedZero = Tensor::zeros(DataType::UInt8, {c.n * zeroBlob});
    auto* z = static_cast<std::uint8_t*>(packedZero.raw());
    for (std::int64_t n = 0; n < c.n; ++n)
        for (std::int64_t blk = 0; blk < kBlocks; ++blk) {
            const std::int64_t bit = blk * c.bits;
            z[n * zeroBlob + bit / 8] |=
                static_cast<std::uint8_t>(zero[n * kBlocks + blk] << (bit % 8));
        }

    NBitsModel out;
    auto& node = out.m.node;
    node.set_op_type("MatMulNBits");
    node.set_domain(kMs);
    node.set_name("mm");
    for (auto [name, value] : {std::pair<const char*, std::int64_t>{"K", c.k},
                               {"N", c.n},
                               {"bits", c.bits},
                               {"block_size", c.blockSize}})
        setAttr(node, name, value);
    node.add_output("y");
    node.add_input("A");
    out.m.inputs.push_back(Value());  // A: given per run
    out.m.add("B", b);
    out.m.add("scales", floats({c.n * kBlocks}, scales));
    if (c.zero == NBits::Zero::Packed) out.m.add("zp", packedZero);
    if (c.zero == NBits::Zero::Float) out.m.add("zp", floats({c.n, kBlocks}, floatZero));
    if (c.groupIndex) {
        if (c.zero == NBits::Zero::None) out.m.skip();
        out.m.add("g_idx", Tensor::fromVector<std::int32_t>({c.k}, gidx));
    }
    for (std::int64_t n = 0; n < c.n; ++n)
        for (std::int64_t k = 0; k < c.k; ++k) {
            const std::int64_t blk = c.groupIndex ? gidx[k] : k / c.blockSize;
            const std::size_t s = static_cast<std::size_t>(n * kBlocks + blk);
            const double zp = c.zero == NBits::Zero::Packed  ? zero[s]
                              : c.zero == NBits::Zero::Float ? floatZero[s]
                                                             : double(1 << (c.bits - 1));
            out.expected.push_back((q[n * c.k + k] - zp) * static_cast<double>(scales[s]));
        }
    return out;
}

// The kernel's output for A = identity [K, K]: row k is column k of W^T, so Y[k, n] = W[n, k].
std::vector<float> kernelWeights(const NBitsModel& model, std::int64_t k, std::int64_t n) {
    std::vector<float> identity(static_cast<std::size_t>(k * k), 0.0f);
    for (std::int64_t i = 0; i < k; ++i) identity[i * k + i] = 1.0f;
    OneNodeSpec spec = nodeSpec("MatMulNBits", 1, model.m.inputs, 1, kMs);
    spec.inputs[0] = floats({k, k}, identity);
    const onnx::NodeProto node = model.m.node;
    spec.attributes = [node](onnx::NodeProto& target) {
        for (const auto& a : node.attribute()) *target.add_attribute() = a;
    };
    const Tensor y = runOneNodeTensor(spec);
    std::vector<float> w(static_cast<std::size_t>(k * n));
    if (y.numel() != k * n) return w;
    for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t c = 0; c < n; ++c) w[c * k + r] = y.data<float>()[r * n + c];
    return w;
}

TEST(DequantizedWeight, MatMulNBitsEveryBitWidthAndZeroPointKind) {
    for (int bits : {2, 4, 8})
        for (auto zero : {NBits::Zero::None, NBits::Zero::Packed, NBits::Zero::Float}) {
            NBits c;
            c.bits = bits;
            c.zero = zero;
            SCOPED_TRACE("bits " + std::to_string(bits) + " zero " +
                         std::to_string(static_cast<int>(zero)));
            const NBitsModel model = makeNBits(c, 11 + bits);
            auto w = model.m.open();
            ASSERT_TRUE(w) << w.error().message;
            EXPECT_EQ(w->shape(), (std::vector<std::int64_t>{c.n, c.k}));
            EXPECT_EQ(w->numel(), c.n * c.k);
            EXPECT_EQ(w->nodeName(), "mm");
            EXPECT_EQ(w->weightName(), "B");
            for (std::int64_t i = 0; i < w->numel(); ++i)
                ASSERT_FLOAT_EQ(w->at(i), static_cast<float>(model.expected[i])) << "index " << i;
            auto all = w->dequantizeAll();
            ASSERT_TRUE(all) << all.error().message;
            EXPECT_EQ(all->shape(), (Shape{c.n, c.k}));
            const std::vector<float> kernel = kernelWeights(model, c.k, c.n);
            for (std::int64_t i = 0; i < w->numel(); ++i) {
                EXPECT_EQ(all->data<float>()[i], w->at(i));
                EXPECT_NEAR(kernel[i], w->at(i), 1e-5) << "index " << i;
            }
        }
}

TEST(DequantizedWeight, MatMulNBitsGroupIndexAndLargeBlocks) {
    NBits c;
    c.k = 100;
    c.blockSize = 32;
    c.zero = NBits::Zero::Packed;
    c.groupIndex = true;
    const NBitsModel model = makeNBits(c, 5);
    auto w = model.m.open();
    ASSERT_TRUE(w) << w.error().message;
    for (std::int64_t i = 0; i < w->numel(); ++i)
        ASSERT_FLOAT_EQ(w->at(i), static_cast<float>(model.expected[i])) << "index " << i;
    EXPECT_NE(w->layoutText().find("g_idx"), std::string::npos) << w->layoutText();
    // A strided sample: elements 1, 41, 81, ... and the last one once.
    const auto sample = w->values(1, 1000, 40);
    ASSERT_EQ(sample.size(), static_cast<std::size_t>((c.n * c.k - 2) / 40 + 1));
    EXPECT_FLOAT_EQ(static_cast<float>(sample[2]), static_cast<float>(model.expected[81]));
    EXPECT_TRUE(w->values(c.n * c.k, 5).empty());
}

TEST(DequantizedWeight, MatMulNBitsRefusesBadAttributesAndInputs) {
    auto base = [] {
        NBits c;
        return makeNBits(c);
    };
    auto withAttr = [&](const char* name, std::int64_t value) {
        NBitsModel m = base();
        for (auto& a : *m.m.node.mutable_attribute())
            if (a.name() == name) a.set_i(value);
        return m.m.open();
    };
    EXPECT_TRUE(failsNaming(withAttr("bits", 3), {"mm", "attribute bits"}));
    EXPECT_TRUE(failsNaming(withAttr("block_size", 24), {"mm", "attribute block_size"}));
    EXPECT_TRUE(failsNaming(withAttr("block_size", 0), {"mm", "attribute block_size"}));
    EXPECT_TRUE(failsNaming(withAttr("K", 0), {"mm", "attribute K"}));
    EXPECT_TRUE(failsNaming(withAttr("N", -2), {"mm", "attribute N"}));
    EXPECT_TRUE(failsNaming(withAttr("N", std::int64_t{1} << 40), {"mm", "input B"}));
    EXPECT_TRUE(withAttr("K", 41));                                  // still 3 blocks of 16: B fits
    EXPECT_TRUE(failsNaming(withAttr("K", 64), {"mm", "input B"}));  // 4 blocks
    EXPECT_TRUE(failsNaming(withAttr("N", 4), {"mm", "input B"}));
    {
        NBitsModel m = base();
        m.m.constants["scales"] = engine::tensorToProto(floats({2}, {1, 2}), "scales");
        EXPECT_TRUE(failsNaming(m.m.open(), {"mm", "input scales"}));
    }
    {
        NBitsModel m = base();
        m.m.constants.erase("scales");
        EXPECT_TRUE(failsNaming(m.m.open(), {"mm", "input scales", "not a constant"}));
    }
    {
        NBits c;
        c.zero = NBits::Zero::Packed;
        NBitsModel m = makeNBits(c);
        m.m.constants["zp"] = engine::tensorToProto(Tensor::zeros(DataType::UInt8, {5}), "zp");
        EXPECT_TRUE(failsNaming(m.m.open(), {"mm", "zero_points"}));
    }
    {
        NBits c;
        c.groupIndex = true;
        NBitsModel m = makeNBits(c);
        m.m.constants["g_idx"] = engine::tensorToProto(
            Tensor::fromVector<std::int32_t>({c.k}, std::vector<std::int32_t>(c.k, 9)), "g_idx");
        EXPECT_TRUE(failsNaming(m.m.open(), {"mm", "g_idx"}));
    }
    {
        NBitsModel m = base();
        m.m.node.clear_attribute();
        EXPECT_TRUE(failsNaming(m.m.open(), {"mm", "attribute K"}));
    }
    onnx::NodeProto plain;
    plain.set_op_type("MatMul");
    plain.set_name("plain");
    EXPECT_TRUE(failsNaming(engine::DequantizedWeight::open(plain, {}), {"plain"}));
    EXPECT_EQ(engine::quantizedWeightInput(plain), -1);
}

// ---- GatherBlockQuantized ----------------------------------------------------------------------

// Every index of the table through the kernel: the whole table, dequantized.
std::vector<float> gatherEverything(const NodeAndConstants& m, std::int64_t rows) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) all[i] = i;
    OneNodeSpec spec = nodeSpec("GatherBlockQuantized", 1, m.inputs, 1, kMs);
    spec.inputs[1] = Tensor::fromVector<std::int64_t>({rows}, all);
    const onnx::NodeProto node = m.node;
    spec.attributes = [node](onnx::NodeProto& target) {
        for (const auto& a : node.attribute()) *target.add_attribute() = a;
    };
    const Tensor y = runOneNodeTensor(spec);
    return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

NodeAndConstants gbqNode() {
    NodeAndConstants m;
    m.node.set_op_type("GatherBlockQuantized");
    m.node.set_domain(kMs);
    m.node.set_name("embed");
    m.node.add_output("y");
    return m;
}

TEST(DequantizedWeight, GatherBlockQuantizedPackedUint8) {
    // uint8 [5, 24] holding 4-bit values: a [5, 48] table, blocks of 16 along the last axis,
    // scales [5, 3], zero points uint8 [5, 2] (two per byte, the last half unused).
    for (bool withZero : {true, false}) {
        SCOPED_TRACE(withZero ? "zero points" : "default zero point 8");
        std::mt19937 rng(4);
        std::uniform_int_distribution<int> code(0, 15);
        std::vector<int> q(5 * 48), zero(5 * 3);
        for (auto& v : q) v = code(rng);
        for (auto& v : zero) v = code(rng);
        std::vector<std::uint8_t> bytes(5 * 24), zeroBytes(5 * 2, 0);
        for (std::size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = static_cast<std::uint8_t>(q[2 * i] | (q[2 * i + 1] << 4));
        for (std::size_t r = 0; r < 5; ++r)
            for (std::size_t b = 0; b < 3; ++b)
                zeroBytes[r * 2 + b / 2] |=
                    static_cast<std::uint8_t>(zero[r * 3 + b] << (b % 2 * 4));
        std::vector<float> scales(15);
        for (std::size_t i = 0; i < 15; ++i) scales[i] = 0.125f * static_cast<float>(i + 1);
        NodeAndConstants m = gbqNode();
        m.add("table", Tensor::fromVector<std::uint8_t>({5, 24}, bytes));
        m.node.add_input("ids");
        m.inputs.push_back(Value());
        m.add("scales", floats({5, 3}, scales));
        if (withZero) m.add("zp", Tensor::fromVector<std::uint8_t>({5, 2}, zeroBytes));
        setAttr(m.node, "bits", std::int64_t{4});
        setAttr(m.node, "block_size", std::int64_t{16});
        setAttr(m.node, "quantize_axis", std::int64_t{1});
        auto w = m.open();
        ASSERT_TRUE(w) << w.error().message;
        EXPECT_EQ(w->shape(), (std::vector<std::int64_t>{5, 48}));
        EXPECT_EQ(w->weightName(), "table");
        const std::vector<float> kernel = gatherEverything(m, 5);
        ASSERT_EQ(kernel.size(), 240u);
        for (std::int64_t i = 0; i < 240; ++i) {
            const std::size_t s = static_cast<std::size_t>(i / 48 * 3 + i % 48 / 16);
            const double expected = (q[i] - (withZero ? zero[s] : 8)) * double(scales[s]);
            ASSERT_FLOAT_EQ(w->at(i), static_cast<float>(expected)) << "index " << i;
            EXPECT_EQ(kernel[i], w->at(i)) << "index " << i;
        }
    }
}

TEST(DequantizedWeight, GatherBlockQuantizedInt4AlongTheFirstAxis) {
    // int4 [32, 3], gather_axis 1, quantize_axis 0, blocks of 16: scales [2, 3], float16.
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> code(-8, 7);
    std::vector<int> q(96), zero(6);
    for (auto& v : q) v = code(rng);
    for (auto& v : zero) v = code(rng);
    Tensor data(DataType::Int4, {32, 3}), zp(DataType::Int4, {2, 3});
    for (std::size_t i = 0; i < 96; ++i)
        static_cast<std::uint8_t*>(data.raw())[i] =
            static_cast<std::uint8_t>(static_cast<std::int8_t>(q[i]));
    for (std::size_t i = 0; i < 6; ++i)
        static_cast<std::uint8_t*>(zp.raw())[i] =
            static_cast<std::uint8_t>(static_cast<std::int8_t>(zero[i]));
    const std::vector<float> scales = {0.5f, 0.25f, 2.0f, 1.0f, 0.125f, 4.0f};
    NodeAndConstants m = gbqNode();
    m.add("table", data);
    m.node.add_input("ids");
    m.inputs.push_back(Value());
    m.add("scales", floats({2, 3}, scales).castTo(DataType::Float16));
    m.add("zp", zp);
    setAttr(m.node, "block_size", std::int64_t{16});
    setAttr(m.node, "gather_axis", std::int64_t{1});
    setAttr(m.node, "quantize_axis", std::int64_t{0});
    auto w = m.open();
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->shape(), (std::vector<std::int64_t>{32, 3}));
    for (std::int64_t i = 0; i < 96; ++i) {
        const std::size_t s = static_cast<std::size_t>(i / 3 / 16 * 3 + i % 3);
        ASSERT_FLOAT_EQ(w->at(i), static_cast<float>((q[i] - zero[s]) * double(scales[s])))
            << "index " << i;
    }
}

TEST(DequantizedWeight, GatherBlockQuantizedRefusesBadAttributesAndInputs) {
    auto make = [](std::int64_t bits, std::int64_t block, std::int64_t quantizeAxis,
                   Shape scaleShape, bool zeroOfOtherType) {
        NodeAndConstants m = gbqNode();
        m.add("table", Tensor::zeros(DataType::UInt8, {4, 16}));
        m.node.add_input("ids");
        m.inputs.push_back(Value());
        m.add("scales", Tensor::zeros(DataType::Float, scaleShape));
        if (zeroOfOtherType) m.add("zp", Tensor::zeros(DataType::Float, scaleShape));
        setAttr(m.node, "bits", bits);
        setAttr(m.node, "block_size", block);
        setAttr(m.node, "quantize_axis", quantizeAxis);
        return m.open();
    };
    EXPECT_TRUE(make(4, 16, 1, {4, 2}, false));
    EXPECT_TRUE(failsNaming(make(5, 16, 1, {4, 2}, false), {"embed", "attribute bits"}));
    EXPECT_TRUE(failsNaming(make(4, 12, 1, {4, 2}, false), {"embed", "attribute block_size"}));
    EXPECT_TRUE(failsNaming(make(4, 16, 7, {4, 2}, false), {"embed", "attribute quantize_axis"}));
    EXPECT_TRUE(failsNaming(make(4, 16, 0, {4, 2}, false), {"embed", "quantize_axis"}));
    EXPECT_TRUE(failsNaming(make(4, 16, 1, {4, 3}, false), {"embed", "input scales"}));
    EXPECT_TRUE(failsNaming(make(4, 16, 1, {4, 2}, true), {"embed", "zero_points"}));
    NodeAndConstants m = gbqNode();
    m.add("table", Tensor::zeros(DataType::Float, {4, 16}));
    EXPECT_TRUE(failsNaming(m.open(), {"embed", "input data"}));
}

}  // namespace
}  // namespace onnxlens::testing
