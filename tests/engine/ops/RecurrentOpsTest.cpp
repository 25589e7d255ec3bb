// LSTM, GRU and RNN against a plain scalar implementation of the ONNX equations written here
// (double precision, one batch row and one time step at a time), plus hand-computed small cases.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "OpTestHarness.h"

namespace onnxlens::testing {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

std::vector<float> randomValues(std::size_t n, std::mt19937& rng, float scale = 0.5f) {
    std::uniform_real_distribution<float> dist(-scale, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// Problem sizes and options shared by the reference and the engine run.
struct RecurrentCase {
    std::string op;  // "RNN", "GRU", "LSTM"
    std::int64_t seq = 3, batch = 2, input = 3, hidden = 2;
    std::string direction = "forward";
    std::vector<std::int64_t> lengths = {};  // empty: all full length
    bool withBias = true, withInitial = true, withPeepholes = false;
    bool linearBeforeReset = false, inputForget = false;
    float clip = 0;
    std::int64_t layout = 0;

    int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
    int directions() const { return direction == "bidirectional" ? 2 : 1; }
};

struct RecurrentData {
    std::vector<float> x, w, r, b, h0, c0, p;  // layout-0 shapes
};

RecurrentData randomData(const RecurrentCase& c, unsigned seed) {
    std::mt19937 rng(seed);
    const std::size_t D = c.directions(), G = c.gates(), H = c.hidden;
    RecurrentData d;
    d.x = randomValues(c.seq * c.batch * c.input, rng, 1.0f);
    d.w = randomValues(D * G * H * c.input, rng);
    d.r = randomValues(D * G * H * H, rng);
    d.b = randomValues(D * 2 * G * H, rng);
    d.h0 = randomValues(D * c.batch * H, rng);
    d.c0 = randomValues(D * c.batch * H, rng);
    d.p = randomValues(D * 3 * H, rng);
    return d;
}

struct RecurrentOutputs {
    std::vector<double> y, yH, yC;  // layout 0: Y [seq, D, batch, H], states [D, batch, H]
};

double clipped(double v, float clip) {
    return clip > 0 ? std::clamp(v, -double(clip), double(clip)) : v;
}

// The ONNX equations, one batch row and one step at a time.
RecurrentOutputs reference(const RecurrentCase& c, const RecurrentData& d) {
    const std::int64_t D = c.directions(), G = c.gates(), H = c.hidden, I = c.input;
    RecurrentOutputs out;
    out.y.assign(c.seq * D * c.batch * H, 0.0);
    out.yH.assign(D * c.batch * H, 0.0);
    out.yC.assign(D * c.batch * H, 0.0);
    for (std::int64_t dir = 0; dir < D; ++dir) {
        const bool reverse = c.direction == "reverse" || dir == 1;
        auto W = [&](std::int64_t row, std::int64_t col) {
            return double(d.w[(dir * G * H + row) * I + col]);
        };
        auto R = [&](std::int64_t row, std::int64_t col) {
            return double(d.r[(dir * G * H + row) * H + col]);
        };
        auto Wb = [&](std::int64_t row) {
            return c.withBias ? double(d.b[dir * 2 * G * H + row]) : 0.0;
        };
        auto Rb = [&](std::int64_t row) {
            return c.withBias ? double(d.b[dir * 2 * G * H + G * H + row]) : 0.0;
        };
        for (std::int64_t bt = 0; bt < c.batch; ++bt) {
            const std::int64_t len = c.lengths.empty() ? c.seq : c.lengths[bt];
            std::vector<double> h(H), cs(H);
            for (std::int64_t j = 0; j < H; ++j) {
                h[j] = c.withInitial ? d.h0[(dir * c.batch + bt) * H + j] : 0.0;
                cs[j] = c.withInitial ? d.c0[(dir * c.batch + bt) * H + j] : 0.0;
            }
            for (std::int64_t s = 0; s < len; ++s) {
                const std::int64_t t = reverse ? len - 1 - s : s;
                const float* x = &d.x[(t * c.batch + bt) * I];
                // xw[g*H+j] = x . W row + Wb
                auto xw = [&](std::int64_t row) {
                    double acc = Wb(row);
                    for (std::int64_t k = 0; k < I; ++k) acc += x[k] * W(row, k);
                    return acc;
                };
                auto hr = [&](std::int64_t row, const std::vector<double>& state) {
                    double acc = 0;
                    for (std::int64_t k = 0; k < H; ++k) acc += state[k] * R(row, k);
                    return acc;
                };
                std::vector<double> hNew(H), cNew(H);
                if (c.op == "RNN") {
                    for (std::int64_t j = 0; j < H; ++j)
                        hNew[j] = std::tanh(clipped(xw(j) + hr(j, h) + Rb(j), c.clip));
                } else if (c.op == "GRU") {
                    std::vector<double> z(H), r(H), rh(H);
                    for (std::int64_t j = 0; j < H; ++j) {
                        z[j] = sigmoid(clipped(xw(j) + hr(j, h) + Rb(j), c.clip));
                        r[j] = sigmoid(clipped(xw(H + j) + hr(H + j, h) + Rb(H + j), c.clip));
                        rh[j] = r[j] * h[j];
                    }
                    for (std::int64_t j = 0; j < H; ++j) {
                        const double pre =
                            c.linearBeforeReset
                                ? xw(2 * H + j) + r[j] * (hr(2 * H + j, h) + Rb(2 * H + j))
                                : xw(2 * H + j) + hr(2 * H + j, rh) + Rb(2 * H + j);
                        const double candidate = std::tanh(clipped(pre, c.clip));
                        hNew[j] = (1 - z[j]) * candidate + z[j] * h[j];
                    }
                } else {
                    auto P = [&](int which, std::int64_t j) {
                        return c.withPeepholes ? double(d.p[dir * 3 * H + which * H + j]) : 0.0;
                    };
                    for (std::int64_t j = 0; j < H; ++j) {
                        auto pre = [&](int gate) {
                            return xw(gate * H + j) + hr(gate * H + j, h) + Rb(gate * H + j);
                        };
                        const double i = sigmoid(clipped(pre(0) + P(0, j) * cs[j], c.clip));
                        const double f = c.inputForget
                                             ? 1 - i
                                             : sigmoid(clipped(pre(2) + P(2, j) * cs[j], c.clip));
                        const double g = std::tanh(clipped(pre(3), c.clip));
                        cNew[j] = f * cs[j] + i * g;
                        const double o = sigmoid(clipped(pre(1) + P(1, j) * cNew[j], c.clip));
                        hNew[j] = o * std::tanh(cNew[j]);
                    }
                }
                h = hNew;
                cs = cNew;
                for (std::int64_t j = 0; j < H; ++j)
                    out.y[((t * D + dir) * c.batch + bt) * H + j] = h[j];
            }
            for (std::int64_t j = 0; j < H; ++j) {
                out.yH[(dir * c.batch + bt) * H + j] = h[j];
                out.yC[(dir * c.batch + bt) * H + j] = cs[j];
            }
        }
    }
    return out;
}

// [A, B, rest] -> [B, A, rest]
template <class T>
std::vector<T> swapLeading(const std::vector<T>& v, std::int64_t a, std::int64_t b,
                           std::int64_t rest) {
    std::vector<T> out(v.size());
    for (std::int64_t i = 0; i < a; ++i)
        for (std::int64_t j = 0; j < b; ++j)
            for (std::int64_t k = 0; k < rest; ++k)
                out[(j * a + i) * rest + k] = v[(i * b + j) * rest + k];
    return out;
}

Tensor toFloatTensor(const Shape& shape, const std::vector<double>& values) {
    std::vector<float> f(values.begin(), values.end());
    return makeTensor<float>(shape, f);
}

OneNodeSpec specFor(const RecurrentCase& c, const RecurrentData& d) {
    const std::int64_t D = c.directions(), G = c.gates(), H = c.hidden;
    OneNodeSpec spec;
    spec.opType = c.op;
    spec.opset = 14;
    const bool batchFirst = c.layout == 1;
    spec.inputs.push_back(batchFirst ? makeTensor<float>({c.batch, c.seq, c.input},
                                                         swapLeading(d.x, c.seq, c.batch, c.input))
                                     : makeTensor<float>({c.seq, c.batch, c.input}, d.x));
    spec.inputs.push_back(makeTensor<float>({D, G * H, c.input}, d.w));
    spec.inputs.push_back(makeTensor<float>({D, G * H, H}, d.r));
    spec.inputs.push_back(c.withBias ? Value(makeTensor<float>({D, 2 * G * H}, d.b)) : Value());
    spec.inputs.push_back(
        c.lengths.empty()
            ? Value()
            : Value(makeTensor<std::int32_t>({c.batch}, {c.lengths.begin(), c.lengths.end()})));
    auto state = [&](const std::vector<float>& v) -> Value {
        if (!c.withInitial) return Value();
        return batchFirst ? makeTensor<float>({c.batch, D, H}, swapLeading(v, D, c.batch, H))
                          : makeTensor<float>({D, c.batch, H}, v);
    };
    spec.inputs.push_back(state(d.h0));
    if (c.op == "LSTM") {
        spec.inputs.push_back(state(d.c0));
        spec.inputs.push_back(c.withPeepholes ? Value(makeTensor<float>({D, 3 * H}, d.p))
                                              : Value());
    }
    spec.outputCount = c.op == "LSTM" ? 3 : 2;
    spec.attributes = [c](onnx::NodeProto& n) {
        setAttr(n, "hidden_size", c.hidden);
        setAttr(n, "direction", c.direction);
        if (c.layout) setAttr(n, "layout", c.layout);
        if (c.clip > 0) setAttr(n, "clip", c.clip);
        if (c.linearBeforeReset) setAttr(n, "linear_before_reset", std::int64_t{1});
        if (c.inputForget) setAttr(n, "input_forget", std::int64_t{1});
    };
    return spec;
}

void expectMatchesReference(const RecurrentCase& c, unsigned seed = 7, int threads = 1) {
    const RecurrentData d = randomData(c, seed);
    const RecurrentOutputs expected = reference(c, d);
    auto result = runOneNode(specFor(c, d), threads);
    ASSERT_TRUE(result) << result.error().message;
    const std::int64_t D = c.directions(), H = c.hidden;
    const engine::Tolerance tight{1e-4, 1e-5};
    if (c.layout == 0) {
        EXPECT_TRUE(tensorsClose(result->at(0).tensor(),
                                 toFloatTensor({c.seq, D, c.batch, H}, expected.y), tight));
        EXPECT_TRUE(tensorsClose(result->at(1).tensor(),
                                 toFloatTensor({D, c.batch, H}, expected.yH), tight));
        if (c.op == "LSTM") {
            EXPECT_TRUE(tensorsClose(result->at(2).tensor(),
                                     toFloatTensor({D, c.batch, H}, expected.yC), tight));
        }
    } else {
        EXPECT_TRUE(tensorsClose(
            result->at(0).tensor(),
            toFloatTensor({c.batch, c.seq, D, H}, swapLeading(expected.y, c.seq * D, c.batch, H)),
            tight));
        EXPECT_TRUE(tensorsClose(
            result->at(1).tensor(),
            toFloatTensor({c.batch, D, H}, swapLeading(expected.yH, D, c.batch, H)), tight));
    }
}

TEST(RnnOpTest, HandComputedTwoSteps) {
    // H = I = 1: h1 = tanh(0.5*x1 + 0.3), h2 = tanh(0.5*x2 + 2*h1 + 0.3)
    OneNodeSpec spec;
    spec.opType = "RNN";
    spec.inputs = {makeTensor<float>({2, 1, 1}, {1.0f, -1.0f}),
                   makeTensor<float>({1, 1, 1}, {0.5f}), makeTensor<float>({1, 1, 1}, {2.0f}),
                   makeTensor<float>({1, 2}, {0.1f, 0.2f})};
    spec.outputCount = 2;
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "hidden_size", std::int64_t{1}); };
    auto r = runOneNode(spec);
    ASSERT_TRUE(r) << r.error().message;
    const float h1 = std::tanh(0.5f + 0.3f), h2 = std::tanh(-0.5f + 2 * h1 + 0.3f);
    EXPECT_TRUE(tensorsClose(r->at(0).tensor(), makeTensor<float>({2, 1, 1, 1}, {h1, h2})));
    EXPECT_TRUE(tensorsClose(r->at(1).tensor(), makeTensor<float>({1, 1, 1}, {h2})));
}

TEST(RnnOpTest, MatchesReference) {
    expectMatchesReference({.op = "RNN"});
    expectMatchesReference({.op = "RNN", .direction = "reverse"});
    expectMatchesReference({.op = "RNN", .direction = "bidirectional", .lengths = {3, 1}});
    expectMatchesReference({.op = "RNN", .withBias = false, .withInitial = false, .clip = 0.3f});
    expectMatchesReference({.op = "RNN", .direction = "bidirectional", .layout = 1});
}

TEST(GruOpTest, MatchesReference) {
    expectMatchesReference({.op = "GRU"});
    expectMatchesReference({.op = "GRU", .linearBeforeReset = true});
    expectMatchesReference(
        {.op = "GRU", .direction = "bidirectional", .lengths = {2, 3}, .linearBeforeReset = true});
    expectMatchesReference({.op = "GRU", .direction = "reverse", .lengths = {0, 2}});
    expectMatchesReference({.op = "GRU", .withBias = false, .clip = 0.2f, .layout = 1});
}

TEST(LstmOpTest, MatchesReference) {
    expectMatchesReference({.op = "LSTM"});
    expectMatchesReference({.op = "LSTM", .withPeepholes = true});
    expectMatchesReference(
        {.op = "LSTM", .direction = "bidirectional", .lengths = {1, 3}, .withPeepholes = true});
    expectMatchesReference(
        {.op = "LSTM", .direction = "reverse", .inputForget = true, .clip = 0.25f});
    expectMatchesReference({.op = "LSTM",
                            .seq = 4,
                            .batch = 3,
                            .input = 5,
                            .hidden = 4,
                            .direction = "bidirectional",
                            .withPeepholes = true,
                            .layout = 1});
}

TEST(LstmOpTest, LayoutOneGivesBatchFirstCellState) {
    const RecurrentCase c{.op = "LSTM", .direction = "bidirectional", .layout = 1};
    const RecurrentData d = randomData(c, 3);
    const RecurrentOutputs expected = reference(c, d);
    auto r = runOneNode(specFor(c, d));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(tensorsClose(
        r->at(2).tensor(),
        toFloatTensor({c.batch, 2, c.hidden}, swapLeading(expected.yC, 2, c.batch, c.hidden))));
}

TEST(LstmOpTest, DoubleInputs) {
    OneNodeSpec spec;
    spec.opType = "LSTM";
    // I = H = 1, zero weights: every gate pre-activation is 0, so i = f = o = 0.5 and g = 0:
    // c1 = 0.5 * c0, h1 = 0.5 * tanh(c1).
    spec.inputs = {makeTensor<double>({1, 1, 1}, {3.0}),
                   makeTensor<double>({1, 4, 1}, {0, 0, 0, 0}),
                   makeTensor<double>({1, 4, 1}, {0, 0, 0, 0}),
                   Value(),
                   Value(),
                   Value(),
                   makeTensor<double>({1, 1, 1}, {0.8})};
    spec.outputCount = 3;
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "hidden_size", std::int64_t{1}); };
    auto r = runOneNode(spec);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->at(0).tensor().dtype(), DataType::Double);
    EXPECT_TRUE(tensorsClose(r->at(2).tensor(), makeTensor<double>({1, 1, 1}, {0.4})));
    EXPECT_TRUE(
        tensorsClose(r->at(1).tensor(), makeTensor<double>({1, 1, 1}, {0.5 * std::tanh(0.4)})));
}

TEST(RnnOpTest, ActivationWithAlpha) {
    // LeakyRelu(alpha 0.1) on a negative pre-activation: x*w = -2 -> -0.2.
    OneNodeSpec spec;
    spec.opType = "RNN";
    spec.inputs = {makeTensor<float>({1, 1, 1}, {-1.0f}), makeTensor<float>({1, 1, 1}, {2.0f}),
                   makeTensor<float>({1, 1, 1}, {0.0f})};
    spec.outputCount = 2;
    spec.attributes = [](onnx::NodeProto& n) {
        setAttr(n, "hidden_size", std::int64_t{1});
        auto* a = n.add_attribute();
        a->set_name("activations");
        a->set_type(onnx::AttributeProto::STRINGS);
        a->add_strings("LeakyRelu");
        setAttr(n, "activation_alpha", std::vector<float>{0.1f});
    };
    auto r = runOneNode(spec);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(tensorsClose(r->at(1).tensor(), makeTensor<float>({1, 1, 1}, {-0.2f})));
}

TEST(RecurrentOpsTest, ZeroBatchAndZeroLengthSequence) {
    const RecurrentCase c{.op = "GRU", .seq = 2, .batch = 0, .withInitial = false};
    auto r = runOneNode(specFor(c, randomData(c, 1)));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->at(0).tensor().shape(), (Shape{2, 1, 0, 2}));
    EXPECT_EQ(r->at(1).tensor().shape(), (Shape{1, 0, 2}));

    const RecurrentCase empty{.op = "LSTM", .seq = 0, .batch = 2, .withInitial = false};
    auto e = runOneNode(specFor(empty, randomData(empty, 1)));
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->at(0).tensor().shape(), (Shape{0, 1, 2, 2}));
    // No step ran: the final states are the (zero) initial states.
    EXPECT_TRUE(tensorsClose(e->at(1).tensor(), Tensor::zeros(DataType::Float, {1, 2, 2})));
}

TEST(RecurrentOpsTest, BadInputsNameTheNode) {
    RecurrentCase c{.op = "LSTM"};
    const RecurrentData d = randomData(c, 1);
    OneNodeSpec spec = specFor(c, d);
    spec.inputs[1] = makeTensor<float>({1, 7, 3}, std::vector<float>(21, 0.0f));
    auto r = runOneNode(spec);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("under_test"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("W has shape [1x7x3]"), std::string::npos)
        << r.error().message;

    spec = specFor(c, d);
    spec.inputs[4] = makeTensor<std::int32_t>({2}, {1, 9});
    r = runOneNode(spec);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("sequence_lens"), std::string::npos) << r.error().message;

    spec = specFor(c, d);
    spec.attributes = [](onnx::NodeProto& n) { setAttr(n, "direction", std::string("sideways")); };
    r = runOneNode(spec);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("sideways"), std::string::npos) << r.error().message;
}

TEST(RecurrentOpsTest, BidirectionalLayersRunTheirDirectionsOnTwoThreads) {
    // Large enough that each direction is a task of its own at 2 threads.
    for (const char* op : {"LSTM", "GRU", "RNN"}) {
        SCOPED_TRACE(op);
        expectMatchesReference({.op = op,
                                .seq = 20,
                                .batch = 2,
                                .input = 16,
                                .hidden = 32,
                                .direction = "bidirectional",
                                .lengths = {20, 13}},
                               11, 2);
        expectMatchesReference({.op = op,
                                .seq = 20,
                                .input = 16,
                                .hidden = 32,
                                .direction = "bidirectional",
                                .layout = 1},
                               12, 2);
    }
}

TEST(RecurrentOpsTest, ASessionFollowsRecurrentWeightsThatChangeBetweenRuns) {
    // R fed at run time: the kernel's transposed copy of R must follow it, run after run.
    const RecurrentCase c{.op = "LSTM", .direction = "bidirectional"};
    auto session = compileForTest(buildOneNodeModel(specFor(c, randomData(c, 1))), true);
    ASSERT_TRUE(session);
    for (unsigned seed : {3u, 4u, 3u}) {
        SCOPED_TRACE(seed);
        const RecurrentData d = randomData(c, seed);
        const OneNodeSpec spec = specFor(c, d);
        std::map<std::string, Value> feeds;
        for (std::size_t i = 0; i < spec.inputs.size(); ++i)
            if (!spec.inputs[i].isNone()) feeds["x" + std::to_string(i)] = spec.inputs[i];
        auto result = session->run(feeds);
        ASSERT_TRUE(result) << result.error().message;
        const RecurrentOutputs expected = reference(c, d);
        EXPECT_TRUE(tensorsClose(result->at(1).tensor(),
                                 toFloatTensor({2, c.batch, c.hidden}, expected.yH),
                                 engine::Tolerance{1e-4, 1e-5}));
    }
}

}  // namespace
}  // namespace onnxlens::testing
