// Counting rules of ONNX Runtime's contrib operators (docs/cost-model.md): products count their
// multiply-accumulates as the float product would (2 FLOPs each), attention counts Q x K^T and
// the weights x V over the whole attended length (past + new), normalisations and activations a
// fixed number of operations per element (a transcendental function counts 1), and QLinear*
// operators as their float counterparts (their bytes are the int8 bytes they move).
#include "MicrosoftOpCosts.h"

#include <map>

#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens {

namespace {

using Dims = std::vector<std::int64_t>;

std::optional<double> count(const std::optional<Dims>& dims) {
    if (!dims) return std::nullopt;
    double n = 1;
    for (auto d : *dims) {
        if (d < 0) return std::nullopt;
        n *= static_cast<double>(d);
    }
    return n;
}

std::optional<double> dimAt(const std::optional<Dims>& dims, std::size_t axis, std::size_t rank) {
    if (!dims || dims->size() != rank || (*dims)[axis] < 0) return std::nullopt;
    return static_cast<double>((*dims)[axis]);
}

// Operations per element of input 0 (normalisations) or of output 0 (activations).
const std::map<std::string, std::pair<double, bool>>& perElement() {
    // {operations, counted on the output (true) or on input 0 (false)}
    static const std::map<std::string, std::pair<double, bool>> ops{
        {"SkipLayerNormalization", {6, false}},            // skip add + LayerNormalization's 5
        {"SkipSimplifiedLayerNormalization", {5, false}},  // skip add + RMS normalisation's 4
        {"SimplifiedLayerNormalization", {4, false}},
        {"LayerNormalization", {5, false}},
        {"EmbedLayerNormalization", {7, true}},  // two embedding adds + LayerNormalization
        {"GroupNorm", {5, false}},
        {"Gelu", {1, true}},
        {"FastGelu", {1, true}},
        {"BiasGelu", {2, true}},
        {"QuickGelu", {3, true}},  // alpha * x, sigmoid, multiply
        {"BiasAdd", {2, true}},
        {"RotaryEmbedding", {3, true}},  // two products and a sum per rotated element
        {"QLinearAdd", {1, true}},
        {"QLinearMul", {1, true}},
        {"QLinearSigmoid", {1, true}},
        {"QLinearLeakyRelu", {1, true}},
        {"QLinearSoftmax", {3, false}},
        {"QLinearGlobalAveragePool", {1, false}},
    };
    return ops;
}

}  // namespace

bool countMicrosoftOpCost(const onnx::NodeProto& node, const CostDimsOf& dimsOf, NodeCost& cost) {
    const bool microsoft = node.domain() == kMicrosoftDomain;
    const bool extension =
        node.domain() == kOrtOnnxDomainPlaceholder ||
        (isDefaultDomain(node) && node.op_type() == "SimplifiedLayerNormalization");
    if (!microsoft && !extension) return false;
    if (node.domain() == kOrtOnnxDomainPlaceholder) cost.opType = node.op_type();
    const std::string& op = node.op_type();
    auto in = [&](int i) -> std::optional<Dims> {
        if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
        return dimsOf(node.input(i));
    };
    auto out = [&](int i) -> std::optional<Dims> {
        if (i >= node.output_size() || node.output(i).empty()) return std::nullopt;
        return dimsOf(node.output(i));
    };
    auto present = [&](int i) { return i < node.input_size() && !node.input(i).empty(); };
    auto unknown = [&](const std::string& what) {
        cost.shapesKnown = false;
        cost.note = "shape of " + what + " unknown";
        return true;
    };
    CostFigures& f = cost.figures;

    if (auto it = perElement().find(op); it != perElement().end()) {
        const auto n = count(it->second.second ? out(0) : in(0));
        if (!n) return unknown(it->second.second ? "output" : "input");
        f.flops = it->second.first * *n;
        if (op == "FastGelu" && present(1)) f.flops += *n;  // the bias add
        if (op == "GroupNorm" && intAttribute(node, "activation", 0) == 1) f.flops += 2 * *n;
        return true;
    }
    if (op == "BiasSplitGelu") {
        const auto x = count(in(0)), y = count(out(0));
        if (!x || !y) return unknown("BiasSplitGelu input or output");
        f.flops = *x + 2 * *y;  // bias add, then GELU of one half times the other
        return true;
    }
    if (op == "MatMulNBits" || op == "DynamicQuantizeMatMul" || op == "MatMulIntegerToFloat" ||
        op == "QGemm") {
        // Each output element is a dot product over K.
        const auto y = count(out(0));
        std::optional<double> k;
        if (op == "MatMulNBits") {
            const std::int64_t attr = intAttribute(node, "K", 0);
            if (attr > 0) k = static_cast<double>(attr);
        } else if (const auto a = in(0); a && !a->empty()) {
            const std::int64_t d =
                op == "QGemm" && a->size() == 2 && intAttribute(node, "transA", 0) ? (*a)[0]
                                                                                   : a->back();
            if (d >= 0) k = static_cast<double>(d);
        }
        if (!y || !k) return unknown("product input or output");
        f.macs = *y * *k;
        const int bias = op == "MatMulNBits"             ? 5
                         : op == "QGemm"                 ? 6
                         : op == "DynamicQuantizeMatMul" ? 4
                                                         : 6;
        f.flops = 2 * f.macs + (present(bias) ? *y : 0);
        return true;
    }
    if (op == "Attention" || op == "QAttention") {
        // Projection input [B, S, Hin] x [Hin, Hq + Hk + Hv], then per head Q x K^T and the
        // weights x V over T = past + S: B * S * T * (Hq + Hv) MACs, softmax 3 per score.
        const auto x = in(0), w = in(1), y = out(0);
        const auto b = dimAt(x, 0, 3), s = dimAt(x, 1, 3), hin = dimAt(x, 2, 3);
        const auto hall = dimAt(w, 1, 2), hv = dimAt(y, 2, 3);
        const int pastIndex = op == "Attention" ? 4 : 8;
        std::optional<double> past = 0.0;
        if (present(pastIndex)) past = dimAt(in(pastIndex), 3, 5);
        if (intAttribute(node, "past_present_share_buffer", 0) != 0) past = std::nullopt;
        const double heads = static_cast<double>(intAttribute(node, "num_heads", 1));
        if (!b || !s || !hin || !hall || !hv || !past) return unknown("attention input or past");
        const double t = *past + *s, hq = (*hall - *hv) / 2;
        if (hq < 0) return unknown("attention hidden sizes");
        f.macs = *b * *s * *hin * *hall + *b * *s * t * (hq + *hv);
        f.flops = 2 * f.macs + 3 * *b * heads * *s * t + (present(2) ? *b * *s * *hall : 0);
        return true;
    }
    if (op == "MultiHeadAttention" || op == "GroupQueryAttention") {
        // No projection: Q x K^T and weights x V over T, the present length (past + new).
        const auto y = out(0), presentKey = out(1);
        const auto b = dimAt(y, 0, 3), s = dimAt(y, 1, 3), hv = dimAt(y, 2, 3);
        const double heads = static_cast<double>(intAttribute(node, "num_heads", 1));
        std::optional<double> t = dimAt(presentKey, 2, 4);
        if (!t && op == "GroupQueryAttention" && s) {
            const auto pastKey = dimAt(in(3), 2, 4);
            if (pastKey) t = *pastKey + *s;
        }
        if (!t && op == "MultiHeadAttention") {
            const auto key = in(1);
            if (key && key->size() == 3 && (*key)[1] >= 0) t = static_cast<double>((*key)[1]);
            if (key && key->size() == 4 && (*key)[2] >= 0) t = static_cast<double>((*key)[2]);
            if (t && present(6)) {
                const auto past = dimAt(in(6), 2, 4);
                t = past ? std::optional<double>(*t + *past) : std::nullopt;
            }
        }
        if (!b || !s || !hv || !t) return unknown("attention output or present length");
        f.macs = 2 * *b * *s * *t * *hv;  // query hidden = value hidden for these operators
        f.flops = 2 * f.macs + 3 * *b * heads * *s * *t;
        return true;
    }
    if (op == "QLinearAveragePool") {
        const auto y = count(out(0));
        if (!y) return unknown("pool output");
        double window = 1;
        for (auto k : intsAttribute(node, "kernel_shape")) window *= static_cast<double>(k);
        f.flops = *y * window;
        return true;
    }
    if (op == "DynamicQuantizeLSTM") {
        // As LSTM: 4 gates of input and hidden products per step, 12 gate operations per unit.
        const auto x = in(0);
        const std::int64_t hidden = intAttribute(node, "hidden_size", -1);
        const auto seq = dimAt(x, 0, 3), batch = dimAt(x, 1, 3), input = dimAt(x, 2, 3);
        if (!seq || !batch || !input || hidden <= 0) return unknown("LSTM input or hidden_size");
        const double dirs =
            stringAttribute(node, "direction", "forward") == "bidirectional" ? 2 : 1;
        const double h = static_cast<double>(hidden);
        f.macs = dirs * *seq * *batch * 4 * h * (*input + h);
        f.flops = 2 * f.macs + dirs * *seq * *batch * h * 12;
        return true;
    }
    // GatherBlockQuantized dequantizes what it gathers: 2 operations per output element.
    if (op == "GatherBlockQuantized") {
        const auto y = count(out(0));
        if (!y) return unknown("output");
        f.flops = 2 * *y;
        return true;
    }
    // QLinearConcat and the operators onnxlens has no rule for move data: 0 FLOPs.
    return microsoft ? op == "QLinearConcat" : true;
}

std::optional<PackedWeights> packedWeightsOfInput(const onnx::NodeProto& node, int input,
                                                  std::uint64_t storedElements) {
    if (node.domain() != kMicrosoftDomain) return std::nullopt;
    if (node.op_type() == "MatMulNBits" && input == 1) {
        const std::int64_t bits = intAttribute(node, "bits", 4);
        const std::int64_t k = intAttribute(node, "K", 0), n = intAttribute(node, "N", 0);
        if ((bits != 2 && bits != 4 && bits != 8) || k <= 0 || n <= 0) return std::nullopt;
        const auto weights = static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(n);
        // Blocks are padded, so B holds at least N x K weights; anything else is not this
        // operator's layout and keeps its stored count.
        if (weights / static_cast<std::uint64_t>(n) != static_cast<std::uint64_t>(k) ||
            storedElements * 8 < weights * static_cast<std::uint64_t>(bits))
            return std::nullopt;
        return PackedWeights{weights, static_cast<int>(bits)};
    }
    if (node.op_type() == "GatherBlockQuantized" && input == 0) {
        const std::int64_t bits = intAttribute(node, "bits", 4);
        if (bits != 2 && bits != 4 && bits != 8) return std::nullopt;
        return PackedWeights{storedElements * 8 / static_cast<std::uint64_t>(bits),
                             static_cast<int>(bits)};
    }
    return std::nullopt;
}

std::map<std::string, PackedWeights> packedWeightsOf(
    const onnx::GraphProto& graph,
    const std::function<std::optional<std::uint64_t>(const std::string&)>& elementsOf) {
    std::map<std::string, PackedWeights> packed;
    for (const auto& node : graph.node())
        for (int i = 0; i < node.input_size(); ++i) {
            if (node.input(i).empty()) continue;
            const auto stored = elementsOf(node.input(i));
            if (!stored) continue;
            if (const auto p = packedWeightsOfInput(node, i, *stored)) packed[node.input(i)] = *p;
        }
    return packed;
}

std::string packedWeightsTypeName(int bits) { return std::to_string(bits) + "-bit packed"; }

}  // namespace onnxlens
