// Fusions of what quantizers write, so that a quantized model runs its products in int8 in one
// kernel each instead of as chains of integer and float nodes.
#include <string>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/Shape.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

constexpr std::int64_t kOnnxFloat = 1;  // TensorProto.DataType FLOAT

// A value the fused kernel can take as a scale of the product's columns: DynamicQuantizeLinear's
// scale (a scalar) or a float constant of one value or of `columns` values (1-D).
bool isColumnScale(const GraphIndex& index, const std::string& value, std::int64_t columns) {
    const int p = index.producer(value);
    if (p >= 0) {
        const auto& n = index.node(p);
        return isOnnxOp(n, "DynamicQuantizeLinear") && n.output_size() > 1 && n.output(1) == value;
    }
    const auto dims = initializerDims(index, value);
    if (!dims || initializerType(index, value) != kOnnxFloat) return false;
    const auto count = checkedElementCount(*dims);
    return count == 1 || (dims->size() == 1 && (*dims)[0] == columns);
}

bool isExactGelu(const onnx::NodeProto& node) {
    if (node.op_type() != "Gelu" || !(node.domain() == kOnnxlensDomain || isDefaultDomain(node)))
        return false;
    const auto* approximate = findAttribute(node, "approximate");
    return !approximate || approximate->s() == "none";
}

}  // namespace

int fuseMatMulIntegerToFloat(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    Rewriter rewriter(graph);
    for (int m = 0; m < graph.node_size(); ++m) {
        const auto& matmul = graph.node(m);
        if (!isOnnxOp(matmul, "MatMulInteger") || matmul.input_size() < 2) continue;
        const auto weights = initializerDims(index, matmul.input(1));
        if (!weights || weights->size() != 2) continue;
        const std::int64_t columns = (*weights)[1];
        std::vector<int> chain{m};

        const auto isScale = [&](const std::string& v) { return isColumnScale(index, v, columns); };
        const auto scaled = matchScaledIntegerAccumulator(
            index, matmul.output(0),
            [&](const std::string& a, const std::string& b) { return isScale(a) && isScale(b); },
            isScale);
        if (!scaled) continue;
        chain.insert(chain.end(), scaled->nodes.begin(), scaled->nodes.end());
        const std::string& aScale = scaled->scaleA;
        const std::string& bScale = scaled->scaleB;

        std::string output = scaled->output, bias, activation;
        const int add = soleReaderOp(index, output, "Add");
        if (add >= 0) {
            const std::string other = otherInput(index.node(add), output);
            const auto dims = initializerDims(index, other);
            if (dims && dims->size() == 1 && (*dims)[0] == columns &&
                initializerType(index, other) == kOnnxFloat) {
                bias = other;
                chain.push_back(add);
                output = index.node(add).output(0);
            }
        }
        const int gelu = index.soleConsumer(output);
        if (gelu >= 0 && isExactGelu(index.node(gelu))) {
            activation = "Gelu";
            chain.push_back(gelu);
            output = index.node(gelu).output(0);
        }
        if (!rewriter.free(chain)) continue;

        const auto input = [&](int i) { return i < matmul.input_size() ? matmul.input(i) : ""; };
        onnx::NodeProto fused = makeNode(
            "MatMulIntegerToFloat", kOnnxlensDomain, matmul.name().empty() ? output : matmul.name(),
            {input(0), input(1), aScale, bScale, input(2), input(3), bias}, output);
        while (fused.input_size() > 3 && fused.input(fused.input_size() - 1).empty())
            fused.mutable_input()->RemoveLast();
        if (!activation.empty()) setStringAttribute(fused, "activation", activation);
        rewriter.replace(chain, std::move(fused));
    }
    const int rewrites = rewriter.apply();
    if (rewrites) importOnnxlensDomain(context.model());
    return rewrites;
}

}  // namespace onnxlens::engine
