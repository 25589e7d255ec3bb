// Constant folding: nodes whose inputs are all constants run once, on their kernel directly, and
// become initializers; Shape and Size of statically shaped values (by shape inference) become
// constants too, so that shape-computation chains fold away.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "OpenMpThreads.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

// Ops whose outputs change from run to run (or are meant to), never folded.
bool isNondeterministic(const std::string& op) {
    static const std::set<std::string> ops = {
        "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike",
        "Bernoulli",     "Multinomial",       "Dropout"};
    return ops.count(op) > 0;
}

// Folded values larger than this stay computed at run time (they would bloat the model).
constexpr std::size_t kMaxFoldedBytes = std::size_t{64} << 20;

// Shape (with start/end) or Size of a value whose dims are all known.
Tensor shapeOrSize(const onnx::NodeProto& node, const std::vector<std::int64_t>& dims) {
    if (node.op_type() == "Size") {
        return Tensor::scalar<std::int64_t>(shapeElementCount(dims));
    }
    const auto rank = static_cast<std::int64_t>(dims.size());
    std::int64_t start = intAttribute(node, "start", 0), end = intAttribute(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<std::int64_t>(start, 0, rank);
    end = std::clamp<std::int64_t>(end, start, rank);
    return Tensor::fromVector<std::int64_t>(
        {end - start}, std::vector<std::int64_t>(dims.begin() + start, dims.begin() + end));
}

// Runs one node on its kernel with constant inputs; nothing when the engine has no kernel for it
// or it fails (the node then stays in the graph, where the session reports the problem).
std::optional<std::vector<Value>> runOnce(const onnx::NodeProto& node, int opset,
                                          const std::vector<const onnx::TensorProto*>& inputs,
                                          const std::filesystem::path& directory,
                                          ThreadPool& pool) {
    const KernelFactory* factory =
        KernelRegistry::global().find(node.domain(), node.op_type(), opset);
    if (!factory) return std::nullopt;
    try {
        std::vector<Value> values;
        values.reserve(inputs.size());
        std::vector<const Value*> inputPointers;
        for (const auto* proto : inputs) {
            if (!proto) {
                inputPointers.push_back(nullptr);
                continue;
            }
            values.emplace_back(tensorFromProto(*proto, directory));
            inputPointers.push_back(&values.back());
        }
        const NodeInfo info(node, opset,
                            [](const onnx::GraphProto&) -> std::shared_ptr<CompiledGraph> {
                                throw EngineError("constant folding runs no subgraphs");
                            });
        auto kernel = (*factory)(info);
        KernelContext context(pool, nullptr, nullptr);
        std::vector<Value> outputs(static_cast<std::size_t>(node.output_size()));
        kernel->run(context, inputPointers, outputs);
        return outputs;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

int foldConstants(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    const auto opsets = opsetImports(context.model());

    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    std::vector<onnx::TensorProto> newInitializers;
    std::unordered_map<std::string, std::size_t> newIndex;
    int rewrites = 0;
    std::optional<ThreadPool> pool;

    // Initializers that are also graph inputs can be overridden at run time: not constants.
    auto constantProto = [&](const std::string& name) -> const onnx::TensorProto* {
        if (const auto* init = index.constantInitializer(name)) return init;
        auto jt = newIndex.find(name);
        if (jt != newIndex.end()) return &newInitializers[jt->second];
        return nullptr;
    };
    auto addFolded = [&](onnx::TensorProto proto) {
        newIndex[proto.name()] = newInitializers.size();
        newInitializers.push_back(std::move(proto));
    };

    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        if (!isDefaultDomain(node) || isNondeterministic(node.op_type()) || hasSubgraph(node))
            continue;
        bool producesGraphOutput = false;
        for (const auto& o : node.output())
            producesGraphOutput = producesGraphOutput || index.isGraphOutput(o);
        if (producesGraphOutput) continue;
        // The weights of a QDQ convolution or product stay int8 for fuse-qdq-conv/-matmul.
        if (isFusedQdqWeight(index, node)) continue;

        // Shape/Size of a statically shaped value.
        if ((node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size() == 1 &&
            !constantProto(node.input(0))) {
            auto dims = context.shapes().staticDimsOf(node.input(0));
            if (dims && checkedElementCount(*dims)) {
                addFolded(tensorToProto(shapeOrSize(node, *dims), node.output(0)));
                remove[static_cast<std::size_t>(i)] = true;
                ++rewrites;
                continue;
            }
        }

        std::vector<const onnx::TensorProto*> inputs;
        bool allConstant = true;
        for (const auto& in : node.input()) {
            inputs.push_back(in.empty() ? nullptr : constantProto(in));
            if (!in.empty() && !inputs.back()) allConstant = false;
        }
        if (!allConstant) continue;
        if (node.input_size() == 0 && node.op_type() != "Constant" &&
            node.op_type() != "ConstantOfShape")
            continue;
        auto opset = opsets.find(canonicalDomain(node.domain()));
        if (opset == opsets.end()) continue;

        if (!pool) {
            pool.emplace(1);
            applyThreadCountToCallingThread(1);
        }
        auto result = runOnce(node, opset->second, inputs, context.modelDirectory(), *pool);
        if (!result) continue;
        bool ok = true;
        std::vector<onnx::TensorProto> produced;
        for (int k = 0; k < node.output_size() && ok; ++k) {
            if (node.output(k).empty()) continue;
            const Value& v = (*result)[static_cast<std::size_t>(k)];
            ok = v.isTensor() && v.tensor().byteSize() <= kMaxFoldedBytes;
            if (ok) produced.push_back(tensorToProto(v.tensor(), node.output(k)));
        }
        if (!ok) continue;
        for (auto& p : produced) addFolded(std::move(p));
        remove[static_cast<std::size_t>(i)] = true;
        ++rewrites;
    }
    if (rewrites) {
        removeNodes(graph, remove);
        for (auto& t : newInitializers) *graph.add_initializer() = std::move(t);
        // Initializers nobody reads any more (inputs of folded nodes) are dropped.
        removeUnreadInitializers(graph);
    }
    return rewrites;
}

}  // namespace onnxlens::engine
