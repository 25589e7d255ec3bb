// MatMul and FusedMatMul with constant float 2-D weights become com.onnxlens PackedMatMul, whose
// weights are stored once, at load, in the layout oneDNN's 1x1-convolution kernels read
// (ops/PackedMatMulWeights.h). oneDNN's matmul primitive on plain weights packs them again on
// every call; for the small row counts of latency-bound transformers (batch 1, sequence 16) that
// repacking cost as much as the product itself.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

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

}  // namespace

int packMatMulWeights(PassContext& context, std::int64_t block) {
    if (block != 8 && block != 16) return 0;
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    ValueNames names(graph);

    // The nodes to rewrite, by weights.
    std::unordered_map<std::string, std::vector<int>> readers;
    std::vector<std::string> order;
    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        const bool matmul = isOnnxOp(node, "MatMul") && node.input_size() == 2;
        const bool fused = node.domain() == kOnnxlensDomain && node.op_type() == "FusedMatMul" &&
                           (node.input_size() == 2 || node.input_size() == 3);
        if ((!matmul && !fused) || node.output_size() != 1 || node.input(0).empty()) continue;
        const auto dims = initializerDims(index, node.input(1));
        if (!dims || dims->size() != 2 ||
            initializerType(index, node.input(1)) != onnx::TensorProto::FLOAT)
            continue;
        const std::int64_t k = (*dims)[0], n = (*dims)[1];
        if (k < 1 || n < 1 || k * n < kMinPackedWeights) continue;
        auto& list = readers[node.input(1)];
        if (list.empty()) order.push_back(node.input(1));
        list.push_back(i);
    }
    std::unordered_map<std::string, int> initializerIndex;
    for (int i = 0; i < graph.initializer_size(); ++i)
        initializerIndex.emplace(graph.initializer(i).name(), i);
    int rewrites = 0;
    // One weight at a time, replacing the plain initializer in place when nothing else reads it,
    // so that loading holds one extra weight at most.
    for (const std::string& weights : order) {
        const std::vector<int>& nodes = readers[weights];
        auto slot = initializerIndex.find(weights);
        const onnx::TensorProto* plain = index.constantInitializer(weights);
        if (slot == initializerIndex.end() || !plain) continue;
        const std::int64_t k = plain->dims(0), n = plain->dims(1);
        const std::string name = names.unused(weights + "/packed");
        onnx::TensorProto packed;
        packed.set_name(name);
        packed.set_data_type(onnx::TensorProto::FLOAT);
        const Shape shape = ops::packedMatMulWeightShape(k, n, block);
        for (auto d : shape) packed.add_dims(d);
        std::string& bytes = *packed.mutable_raw_data();
        bytes.assign(static_cast<std::size_t>(shapeElementCount(shape)) * sizeof(float), '\0');
        // Straight from the initializer's little-endian bytes when it holds them (no decoded
        // copy of a large weight), else through its tensor.
        const bool raw =
            plain->data_location() != onnx::TensorProto::EXTERNAL &&
            plain->raw_data().size() == static_cast<std::size_t>(k * n) * sizeof(float);
        if (raw) {
            ops::packMatMulWeightsInto(plain->raw_data().data(), k, n, block, bytes.data());
        } else {
            auto w = constantTensor(index, weights, context.modelDirectory());
            if (!w || w->dtype() != DataType::Float || w->shape() != Shape{k, n}) continue;
            ops::packMatMulWeightsInto(w->data<float>(), k, n, block, bytes.data());
        }
        names.add(name);
        if (index.readCount(weights) == static_cast<int>(nodes.size()))
            *graph.mutable_initializer(slot->second) = std::move(packed);
        else
            *graph.add_initializer() = std::move(packed);
        for (int i : nodes) {
            onnx::NodeProto& node = *graph.mutable_node(i);
            node.set_domain(kOnnxlensDomain);
            node.set_op_type("PackedMatMul");
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
