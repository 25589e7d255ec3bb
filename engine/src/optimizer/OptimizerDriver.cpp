// The optimizer's driver: runs the pass table (PassTable.cpp) over one shared PassContext, so
// that the graph index and shape inference are built once per graph state, and names every node
// a pass wrote after it.
#include <string_view>
#include <unordered_set>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/ShapeInference.h"
#include "optimizer/PassTable.h"
#include "optimizer/Passes.h"

namespace onnxlens::engine {

namespace {

constexpr std::string_view kMadeByPass = "onnxlens optimizer pass: ";

// What tells a node a pass wrote from one the graph had before it: a pass that rewires inputs
// only (eliminate-identity) makes no new node, a fusion or fold changes the op or the output.
std::string nodeKey(const onnx::NodeProto& node) {
    std::string key = node.domain();
    key += '\x1f';
    key += node.op_type();
    key += '\x1f';
    if (node.output_size() > 0) key += node.output(0);
    return key;
}

std::unordered_set<std::string> nodeKeys(const onnx::GraphProto& graph) {
    std::unordered_set<std::string> keys;
    keys.reserve(static_cast<std::size_t>(graph.node_size()));
    for (const auto& node : graph.node()) keys.insert(nodeKey(node));
    return keys;
}

void markNewNodes(onnx::GraphProto& graph, const std::unordered_set<std::string>& before,
                  std::string_view pass) {
    for (auto& node : *graph.mutable_node())
        if (!before.count(nodeKey(node)))
            node.set_doc_string(std::string(kMadeByPass) + std::string(pass));
}

}  // namespace

OptimizationReport optimizeModel(onnx::ModelProto& model,
                                 const std::filesystem::path& modelDirectory,
                                 const OptimizerOptions& options) {
    OptimizationReport report;
    report.nodesBefore = model.graph().node_size();
    PassContext context(model, modelDirectory, options.shapes);
    const auto& table = optimizerPassTable();
    std::vector<int> totals(table.size(), 0);
    auto selected = [&](const OptimizerPass& pass) {
        return options.passes.empty() || options.passes.count(std::string(pass.name)) > 0;
    };
    auto run = [&](std::size_t i) {
        const OptimizerPass& pass = table[i];
        const auto before = nodeKeys(context.graph());
        const int rewrites = pass.run(context);
        if (rewrites > 0) {
            markNewNodes(context.graph(), before, pass.name);
            context.graphChanged(pass.keepsShapes());
        }
        totals[i] += rewrites;
        return rewrites;
    };
    constexpr int kMaxCleanupRounds = 4;
    for (int round = 0; round < kMaxCleanupRounds; ++round) {
        int changed = 0;
        for (std::size_t i = 0; i < table.size(); ++i)
            if (table[i].stage == PassStage::Cleanup && selected(table[i])) changed += run(i);
        if (changed == 0) break;
    }
    for (std::size_t i = 0; i < table.size(); ++i)
        if (table[i].stage == PassStage::Fusion && selected(table[i])) run(i);
    for (std::size_t i = 0; i < table.size(); ++i)
        if (selected(table[i])) report.passes.push_back({std::string(table[i].name), totals[i]});
    report.nodesAfter = model.graph().node_size();
    report.shapes = context.currentShapes();
    return report;
}

std::vector<OptimizerPassInfo> optimizerPasses() {
    std::vector<OptimizerPassInfo> passes;
    for (const auto& pass : optimizerPassTable())
        passes.push_back(
            {std::string(pass.name), pass.stage == PassStage::Cleanup, pass.needsShapes()});
    return passes;
}

Status checkOptimizerPassNames(const std::set<std::string>& names) {
    for (const auto& name : names) {
        bool known = false;
        std::string all;
        for (const auto& pass : optimizerPassTable()) {
            known = known || pass.name == name;
            all += (all.empty() ? "" : ", ") + std::string(pass.name);
        }
        if (!known)
            return makeError("optimizer pass '" + name + "'",
                             "no such pass (the passes: " + all + ")");
    }
    return Ok{};
}

std::string optimizerPassOf(const onnx::NodeProto& node) {
    const std::string& doc = node.doc_string();
    if (doc.rfind(kMadeByPass, 0) != 0) return {};
    return doc.substr(kMadeByPass.size());
}

// ---- Each pass alone --------------------------------------------------------------------------

int eliminateIdentityNodes(onnx::GraphProto& graph) {
    PassContext context(graph, 1, {});
    return eliminateIdentityNodes(context);
}

int eliminateInferenceDropout(onnx::GraphProto& graph, int opsetVersion) {
    PassContext context(graph, opsetVersion, {});
    return eliminateInferenceDropout(context);
}

int foldConstants(onnx::ModelProto& model, const std::filesystem::path& modelDirectory) {
    PassContext context(model, modelDirectory);
    return foldConstants(context);
}

int foldBatchNormIntoConv(onnx::GraphProto& graph, const std::filesystem::path& modelDirectory) {
    PassContext context(graph, 1, modelDirectory);
    return foldBatchNormIntoConv(context);
}

#define ONNXLENS_MODEL_PASS(F)          \
    int F(onnx::ModelProto& model) {    \
        PassContext context(model, {}); \
        return F(context);              \
    }
ONNXLENS_MODEL_PASS(reshapeTargetsFromInputDims)
ONNXLENS_MODEL_PASS(fuseConvAdd)
ONNXLENS_MODEL_PASS(fuseConvActivation)
ONNXLENS_MODEL_PASS(fuseGelu)
ONNXLENS_MODEL_PASS(fuseSilu)
ONNXLENS_MODEL_PASS(fuseLayerNormalization)
ONNXLENS_MODEL_PASS(fuseMatMulBias)
ONNXLENS_MODEL_PASS(fuseMatMulGelu)
ONNXLENS_MODEL_PASS(fuseMatMulIntegerToFloat)
ONNXLENS_MODEL_PASS(fuseConvIntegerToFloat)
ONNXLENS_MODEL_PASS(fuseQdqConv)
ONNXLENS_MODEL_PASS(fuseQdqMatMul)
ONNXLENS_MODEL_PASS(convertQLinearConvToChannelsLast)
#undef ONNXLENS_MODEL_PASS

int computeFloat16InFloat(onnx::ModelProto& model, const std::filesystem::path& modelDirectory) {
    PassContext context(model, modelDirectory);
    return computeFloat16InFloat(context);
}

int convertToChannelBlockedLayout(onnx::ModelProto& model, std::int64_t block) {
    PassContext context(model, {});
    return convertToChannelBlockedLayout(context, block);
}

void importOnnxlensDomain(onnx::ModelProto& model) {
    for (const auto& imp : model.opset_import())
        if (imp.domain() == kOnnxlensDomain) return;
    auto* imp = model.add_opset_import();
    imp->set_domain(kOnnxlensDomain);
    imp->set_version(1);
}

}  // namespace onnxlens::engine
