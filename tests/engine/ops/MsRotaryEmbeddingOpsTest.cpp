// com.microsoft RotaryEmbedding against rotations computed here in double: 3-D and 4-D inputs,
// halves and interleaved pairs, position_ids as [B, S] or one offset, partial rotary
// dimensions; and its refusals.
#include <cmath>

#include "MsAttentionTestSupport.h"

namespace onnxlens::testing {
namespace {

using namespace msattention;

struct RotaryCase {
    Shape shape;  // [B, S, hidden] or [B, N, S, H]
    std::int64_t heads = 0, headSize = 0;
    std::vector<std::int64_t> positions;  // [B * S] or one offset
    bool interleaved = false;
    std::int64_t rotaryDim = 0;  // attribute; 0 = head size
    bool numHeadsAttribute = false;
    std::int64_t cacheRows = 12;
};

void expectRotates(const RotaryCase& c) {
    const bool fourD = c.shape.size() == 4;
    const std::int64_t B = c.shape[0], S = fourD ? c.shape[2] : c.shape[1];
    const std::int64_t N = c.heads, H = c.headSize;
    const std::int64_t rotary = c.rotaryDim > 0 ? c.rotaryDim : H, half = rotary / 2;
    const auto x = wave(B * S * N * H, 0.4);
    std::vector<double> cosines(static_cast<std::size_t>(c.cacheRows * half)),
        sines(cosines.size());
    for (std::int64_t pos = 0; pos < c.cacheRows; ++pos)
        for (std::int64_t i = 0; i < half; ++i) {
            at(cosines, half, pos, i) = std::cos(0.7 * static_cast<double>(pos * (i + 1)));
            at(sines, half, pos, i) = std::sin(0.7 * static_cast<double>(pos * (i + 1)));
        }
    Shape idShape = c.positions.size() == 1 ? Shape{1} : Shape{B, S};
    OneNodeSpec spec = nodeSpec(
        "RotaryEmbedding", 1,
        {Value(floatTensor(c.shape, x)), Value(makeTensor<std::int64_t>(idShape, c.positions)),
         Value(floatTensor({c.cacheRows, half}, cosines)),
         Value(floatTensor({c.cacheRows, half}, sines))},
        1, kMsDomain);
    spec.attributes = [c](onnx::NodeProto& n) {
        if (c.interleaved) setAttr(n, "interleaved", std::int64_t{1});
        if (c.rotaryDim > 0) setAttr(n, "rotary_embedding_dim", c.rotaryDim);
        if (c.numHeadsAttribute) setAttr(n, "num_heads", c.heads);
    };
    std::vector<double> y = x;
    for (std::int64_t b = 0; b < B; ++b)
        for (std::int64_t s = 0; s < S; ++s) {
            const std::int64_t pos = c.positions.size() == 1
                                         ? c.positions[0] + s
                                         : c.positions[static_cast<std::size_t>(b * S + s)];
            for (std::int64_t h = 0; h < N; ++h) {
                const std::int64_t offset =
                    fourD ? ((b * N + h) * S + s) * H : ((b * S + s) * N + h) * H;
                rotate(&y[static_cast<std::size_t>(offset)],
                       &cosines[static_cast<std::size_t>(pos * half)],
                       &sines[static_cast<std::size_t>(pos * half)], half, c.interleaved);
            }
        }
    EXPECT_TRUE(tensorsClose(runOneNodeTensor(spec), floatTensor(c.shape, y), {1e-5, 1e-6}));
}

TEST(MsRotaryEmbedding, ThreeDimensionalInputWithPositionIds) {
    expectRotates({{2, 3, 16}, 2, 8, {0, 1, 2, 5, 6, 7}});
    expectRotates({{2, 3, 16}, 2, 8, {0, 1, 2, 5, 6, 7}, true});
}

TEST(MsRotaryEmbedding, OnePositionIdIsAnOffset) { expectRotates({{2, 3, 16}, 2, 8, {4}}); }

TEST(MsRotaryEmbedding, FourDimensionalInputHalvesAndInterleaved) {
    expectRotates({{2, 2, 3, 8}, 2, 8, {3, 1, 2, 5, 6, 7}});
    expectRotates({{2, 2, 3, 8}, 2, 8, {3, 1, 2, 5, 6, 7}, true});
}

TEST(MsRotaryEmbedding, PartialRotaryDimensionLeavesTheRestAlone) {
    expectRotates({{2, 3, 32}, 2, 16, {0, 1, 2, 5, 6, 7}, false, 8, true});
    expectRotates({{2, 3, 32}, 2, 16, {0, 1, 2, 5, 6, 7}, true, 8, true});
    expectRotates({{1, 2, 2, 16}, 2, 16, {3, 9}, false, 8, true});
}

OneNodeSpec rotarySpec(Shape shape, Tensor ids, std::int64_t rows, std::int64_t half,
                       std::function<void(onnx::NodeProto&)> attributes = {}) {
    std::int64_t count = 1;
    for (auto d : shape) count *= d;
    OneNodeSpec spec = nodeSpec("RotaryEmbedding", 1,
                                {Value(floatTensor(shape, wave(count, 0.1))), Value(ids),
                                 Value(floatTensor({rows, half}, wave(rows * half, 0.2))),
                                 Value(floatTensor({rows, half}, wave(rows * half, 0.3)))},
                                1, kMsDomain);
    spec.attributes = std::move(attributes);
    return spec;
}

void expectRefused(const OneNodeSpec& spec, std::initializer_list<const char*> words) {
    auto result = runOneNode(spec);
    ASSERT_FALSE(result) << "expected an error";
    const std::string& message = result.error().message;
    EXPECT_NE(message.find("under_test"), std::string::npos) << message;
    for (const char* w : words) EXPECT_NE(message.find(w), std::string::npos) << message;
}

TEST(MsRotaryEmbedding, RefusesPositionsOutsideTheCacheAndBadShapes) {
    auto ids = [](std::vector<std::int64_t> v) {
        return makeTensor<std::int64_t>({1, static_cast<std::int64_t>(v.size())}, v);
    };
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 12}), 12, 4), {"position 12", "12 positions"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, -1, 2}), 12, 4), {"position -1"});
    expectRefused(rotarySpec({1, 3, 16}, makeTensor<std::int64_t>({1}, {INT64_MAX}), 12, 4),
                  {"position"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1}), 12, 4), {"position_ids must be"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 3), {"does not split"});
    expectRefused(rotarySpec({3, 16}, ids({0, 1, 2}), 12, 4), {"3-D", "4-D"});
    expectRefused(
        rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 2,
                   [](onnx::NodeProto& n) { setAttr(n, "rotary_embedding_dim", std::int64_t{4}); }),
        {"num_heads"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 4,
                             [](onnx::NodeProto& n) { setAttr(n, "num_heads", std::int64_t{3}); }),
                  {"3 heads"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 8,
                             [](onnx::NodeProto& n) { setAttr(n, "num_heads", std::int64_t{2}); }),
                  {"cos_cache width 8"});
    // The attribute behind a rotary dimension that does not fit is named.
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 4,
                             [](onnx::NodeProto& n) {
                                 setAttr(n, "num_heads", std::int64_t{2});
                                 setAttr(n, "rotary_embedding_dim", std::int64_t{3});
                             }),
                  {"rotary dimension 3", "rotary_embedding_dim"});
    expectRefused(rotarySpec({1, 3, 16}, ids({0, 1, 2}), 12, 4,
                             [](onnx::NodeProto& n) {
                                 setAttr(n, "num_heads", std::int64_t{2});
                                 setAttr(n, "rotary_embedding_dim", std::int64_t{2});
                             }),
                  {"cos_cache width 4", "rotary_embedding_dim"});
}

}  // namespace
}  // namespace onnxlens::testing
