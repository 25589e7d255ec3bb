// MatMul, FusedMatMul and Gemm with constant float 2-D weights become com.onnxlens PackedMatMul
// (and ONNX Runtime's Attention the com.onnxlens Attention), whose weights are stored once, at
// load, in the layout oneDNN's fastest 1x1-convolution kernel on this processor reads
// (ops/PackedMatMulWeights.h, ops::preferredPackedMatMulBlocks). oneDNN's matmul primitive on plain
// weights packs them again on every call; for the small row counts of latency-bound transformers
// (batch 1, sequence 16) that repacking cost as much as the product itself. ONNX Runtime's
// com.microsoft FusedMatMul (A not transposed, no transBatch) is packed too: its transB and alpha
// go into the packed copy (B^T read row by row, every weight times alpha: the product of A with
// alpha * B, which differs from alpha times the product by rounding only, not at all for a
// power-of-two alpha such as BERT's 1/8). Gemm likewise (transB and alpha in the packed copy, a
// constant C of N values as the bias): a CNN's classifier, whose transposed weights oneDNN's matmul
// otherwise repacks on every run (ResNet-50's 8 MB: 0.9 ms a run).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "DnnlPackedMatMul.h"
#include "PackedMatMulWeights.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

// Smaller weights stay on the plain path (Eigen takes the small products, and they are cheap to
// repack anyway).
constexpr std::int64_t kMinPackedWeights = 64 * 64;

// How a node reads its constant weights: transposed (stored [N, K]) and scaled. Plain for
// MatMul and com.onnxlens FusedMatMul; nothing for a com.microsoft FusedMatMul it cannot pack.
struct WeightUse {
    bool transposed = false;
    float alpha = 1.0f;
};

// ONNX Runtime's com.microsoft Attention, whose QKV projection reads constant [K, 3H] weights as
// input 1: it becomes the com.onnxlens Attention of the same inputs and attributes, with the
// weights packed (ops/MsAttentionOps.cpp).
bool isMicrosoftAttention(const onnx::NodeProto& node) {
    return node.domain() == "com.microsoft" && node.op_type() == "Attention" &&
           node.input_size() >= 2 && !node.input(1).empty();
}

// alpha and transB as a node's attributes give them (Gemm's, com.microsoft FusedMatMul's): the
// INT attributes `mustBeZero` names must be 0, and `beta`, where the caller asks for it, is read
// into it. Any other attribute, or a non-finite alpha: a form the packed product does not express.
std::optional<WeightUse> scaledTransposedUse(const onnx::NodeProto& node,
                                             std::initializer_list<std::string_view> mustBeZero,
                                             float* beta = nullptr) {
    WeightUse use;
    for (const auto& a : node.attribute()) {
        const bool isInt = a.type() == onnx::AttributeProto::INT;
        if (a.name() == "alpha" && a.type() == onnx::AttributeProto::FLOAT)
            use.alpha = a.f();
        else if (beta && a.name() == "beta" && a.type() == onnx::AttributeProto::FLOAT)
            *beta = a.f();
        else if (a.name() == "transB" && isInt)
            use.transposed = a.i() != 0;
        else if (!isInt || a.i() != 0 ||
                 std::find(mustBeZero.begin(), mustBeZero.end(), a.name()) == mustBeZero.end())
            return std::nullopt;
    }
    if (!std::isfinite(use.alpha)) return std::nullopt;
    return use;
}

std::optional<WeightUse> weightUse(const onnx::NodeProto& node) {
    if (isMicrosoftAttention(node)) return WeightUse{};
    if (isOnnxOp(node, "MatMul")) {
        if (node.input_size() != 2) return std::nullopt;
        return WeightUse{};
    }
    if (node.domain() == kOnnxlensDomain && node.op_type() == "FusedMatMul") {
        if (node.input_size() != 2 && node.input_size() != 3) return std::nullopt;
        return WeightUse{};
    }
    if (isOnnxOp(node, "Gemm")) {
        // alpha * A * B' + C: A not transposed, C absent or added once (beta 1; its shape is
        // checked against N where the weights are known, gemmBiasFits).
        if (node.input_size() != 2 && node.input_size() != 3) return std::nullopt;
        float beta = 1.0f;
        auto use = scaledTransposedUse(node, {"transA"}, &beta);
        const bool withC = node.input_size() == 3 && !node.input(2).empty();
        if (!use || (withC && beta != 1.0f)) return std::nullopt;
        return use;
    }
    if (node.domain() != "com.microsoft" || node.op_type() != "FusedMatMul" ||
        node.input_size() != 2)
        return std::nullopt;
    return scaledTransposedUse(node, {"transA", "transBatchA", "transBatchB"});
}

// A Gemm's C, when it has one, as PackedMatMul's bias: a constant float row of the N outputs.
bool gemmBiasFits(const GraphIndex& index, const onnx::NodeProto& node, std::int64_t n) {
    if (!isOnnxOp(node, "Gemm") || node.input_size() < 3 || node.input(2).empty()) return true;
    const auto dims = initializerDims(index, node.input(2));
    return dims && dims->size() == 1 && (*dims)[0] == n &&
           initializerType(index, node.input(2)) == onnx::TensorProto::FLOAT;
}

// The packed copy's key: the weights' name and how they are read.
std::string useKey(const std::string& weights, const WeightUse& use) {
    std::uint32_t bits;
    std::memcpy(&bits, &use.alpha, sizeof bits);
    return weights + (use.transposed ? "\n^T" : "\n") + std::to_string(bits);
}

}  // namespace

int packMatMulWeights(PassContext& context, std::int64_t block) {
    if (block != 8 && block != 16) return 0;
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    ValueNames names(graph);

    // The nodes to rewrite, by weights and the way they read them.
    struct Group {
        std::string weights;
        WeightUse use;
        std::vector<int> nodes;
    };
    std::unordered_map<std::string, std::size_t> groupOf;
    std::vector<Group> groups;
    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        const auto use = weightUse(node);
        if (!use || node.input(0).empty()) continue;
        if (node.output_size() != 1 && !isMicrosoftAttention(node)) continue;
        const auto dims = initializerDims(index, node.input(1));
        if (!dims || dims->size() != 2 ||
            initializerType(index, node.input(1)) != onnx::TensorProto::FLOAT)
            continue;
        const std::int64_t k = (*dims)[use->transposed ? 1 : 0],
                           n = (*dims)[use->transposed ? 0 : 1];
        if (k < 1 || n < 1 || k * n < kMinPackedWeights || !gemmBiasFits(index, node, n)) continue;
        const auto [slot, added] = groupOf.emplace(useKey(node.input(1), *use), groups.size());
        if (added) groups.push_back({node.input(1), *use, {}});
        groups[slot->second].nodes.push_back(i);
    }
    std::unordered_map<std::string, int> initializerIndex;
    for (int i = 0; i < graph.initializer_size(); ++i)
        initializerIndex.emplace(graph.initializer(i).name(), i);
    int rewrites = 0;
    // One weight at a time, replacing the plain initializer in place when nothing else reads it,
    // so that loading holds one extra weight at most.
    for (const Group& group : groups) {
        const std::string& weights = group.weights;
        const std::vector<int>& nodes = group.nodes;
        const bool plainUse = !group.use.transposed && group.use.alpha == 1.0f;
        auto slot = initializerIndex.find(weights);
        const onnx::TensorProto* plain = index.constantInitializer(weights);
        if (slot == initializerIndex.end() || !plain) continue;
        // Stored [K, N], or [N, K] when read transposed.
        const std::int64_t k = plain->dims(group.use.transposed ? 1 : 0),
                           n = plain->dims(group.use.transposed ? 0 : 1);
        const std::string name = names.unused(weights + "/packed");
        onnx::TensorProto packed;
        packed.set_name(name);
        packed.set_data_type(onnx::TensorProto::FLOAT);
        const ops::PackedMatMulBlocks blocks = ops::preferredPackedMatMulBlocks(k, n, block);
        const Shape shape = ops::packedMatMulWeightShape(k, n, blocks);
        for (auto d : shape) packed.add_dims(d);
        std::string& bytes = *packed.mutable_raw_data();
        bytes.assign(static_cast<std::size_t>(shapeElementCount(shape)) * sizeof(float), '\0');
        // Straight from the initializer's little-endian bytes when it holds them (no decoded
        // copy of a large weight), else through its tensor.
        const bool raw =
            plainUse && plain->data_location() != onnx::TensorProto::EXTERNAL &&
            plain->raw_data().size() == static_cast<std::size_t>(k * n) * sizeof(float);
        if (raw) {
            ops::packMatMulWeightsInto(plain->raw_data().data(), k, n, blocks, bytes.data());
        } else {
            auto w = constantTensor(index, weights, context.modelDirectory());
            const Shape stored = group.use.transposed ? Shape{n, k} : Shape{k, n};
            if (!w || w->dtype() != DataType::Float || w->shape() != stored) continue;
            if (plainUse) {
                ops::packMatMulWeightsInto(w->data<float>(), k, n, blocks, bytes.data());
            } else {
                // alpha * B as [K, N], then packed.
                std::vector<float> b(static_cast<std::size_t>(k * n));
                const float* src = w->data<float>();
                for (std::int64_t i = 0; i < k; ++i)
                    for (std::int64_t j = 0; j < n; ++j)
                        b[static_cast<std::size_t>(i * n + j)] =
                            group.use.alpha * src[group.use.transposed ? j * k + i : i * n + j];
                ops::packMatMulWeightsInto(b.data(), k, n, blocks, bytes.data());
            }
        }
        names.add(name);
        if (index.readCount(weights) == static_cast<int>(nodes.size()))
            *graph.mutable_initializer(slot->second) = std::move(packed);
        else
            *graph.add_initializer() = std::move(packed);
        for (int i : nodes) {
            onnx::NodeProto& node = *graph.mutable_node(i);
            if (!isMicrosoftAttention(node)) {
                // alpha, trans*: in the packed weights
                if (node.domain() == "com.microsoft" || isOnnxOp(node, "Gemm"))
                    node.clear_attribute();
                node.set_op_type("PackedMatMul");
            }
            node.set_domain(kOnnxlensDomain);
            node.set_input(1, name);
            setIntAttribute(node, "k", k);
            setIntAttribute(node, "n", n);
            ++rewrites;
        }
    }
    if (rewrites == 0) return 0;
    importOnnxlensDomain(context.model());
    return rewrites;
}

}  // namespace onnxlens::engine
