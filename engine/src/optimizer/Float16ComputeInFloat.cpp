// A float16 model computed in float32: the weights are converted once at load, the graph's
// float16 inputs and outputs get one Cast each at the border, and every node in between runs the
// engine's float kernels (oneDNN convolutions, blocked layouts, fusions), instead of each float16
// kernel converting its operands to float and back on every run.
//
// The results are those of a float16 graph whose intermediate values are not rounded to float16
// (as ONNX Runtime's CPU provider runs float16 nodes that have no float16 kernel). A Cast to
// float16 written in the model keeps its rounding: it becomes Cast to float16 then back to float.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kFloat16 = onnx::TensorProto::FLOAT16;

bool isExternal(const onnx::TensorProto& t) {
    return t.data_location() == onnx::TensorProto::EXTERNAL;
}

// A model worth converting: float16 weights of a Conv, ConvTranspose, MatMul or Gemm, no
// subgraphs (their values would need the same treatment), no external float16 data.
bool isFloat16Model(const onnx::GraphProto& graph) {
    std::unordered_set<std::string> halfWeights;
    for (const auto& init : graph.initializer()) {
        if (init.data_type() != kFloat16) continue;
        if (isExternal(init)) return false;
        halfWeights.insert(init.name());
    }
    bool productOnHalf = false;
    for (const auto& node : graph.node()) {
        if (hasSubgraph(node) || !isDefaultDomain(node)) return false;
        const std::string& op = node.op_type();
        if ((op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm") &&
            node.input_size() > 1 && halfWeights.count(node.input(1)))
            productOnHalf = true;
    }
    return productOnHalf;
}

void toFloat(onnx::TensorProto& t, const std::filesystem::path& modelDirectory) {
    if (t.data_type() != kFloat16) return;
    onnx::TensorProto converted =
        tensorToProto(tensorFromProto(t, modelDirectory).castTo(DataType::Float), t.name());
    t = std::move(converted);
}

void toFloat(onnx::TypeProto& type) {
    if (type.has_tensor_type() && type.tensor_type().elem_type() == kFloat16)
        type.mutable_tensor_type()->set_elem_type(kFloat);
}

onnx::NodeProto castNode(const std::string& input, const std::string& output, int to) {
    onnx::NodeProto cast = makeNode("Cast", "", output, {input}, output);
    auto* a = cast.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
    return cast;
}

}  // namespace

int computeFloat16InFloat(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const std::filesystem::path& modelDirectory = context.modelDirectory();
    if (!isFloat16Model(graph)) return 0;
    int rewrites = 0;
    for (auto& init : *graph.mutable_initializer())
        if (init.data_type() == kFloat16) {
            toFloat(init, modelDirectory);
            ++rewrites;
        }
    for (auto& info : *graph.mutable_value_info()) toFloat(*info.mutable_type());

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    // Float16 graph inputs are read through a Cast to float.
    std::unordered_map<std::string, std::string> renamedInputs;
    std::unordered_set<std::string> initializers;
    for (const auto& init : graph.initializer()) initializers.insert(init.name());
    for (const auto& in : graph.input()) {
        if (initializers.count(in.name()) || !in.type().has_tensor_type() ||
            in.type().tensor_type().elem_type() != kFloat16)
            continue;
        const std::string asFloat = in.name() + "__float";
        renamedInputs[in.name()] = asFloat;
        *nodes.Add() = castNode(in.name(), asFloat, kFloat);
    }
    for (auto& in : *graph.mutable_input())
        if (initializers.count(in.name())) toFloat(*in.mutable_type());
    // Float16 graph outputs are written by a Cast from the float value.
    std::unordered_map<std::string, std::string> renamedOutputs;
    for (const auto& out : graph.output())
        if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() == kFloat16 &&
            !renamedInputs.count(out.name()) && !initializers.count(out.name()))
            renamedOutputs[out.name()] = out.name() + "__float";

    const auto rename = [](std::string* name,
                           const std::unordered_map<std::string, std::string>& names) {
        auto it = names.find(*name);
        if (it != names.end()) *name = it->second;
    };
    for (auto& node : *graph.mutable_node()) {
        for (auto& in : *node.mutable_input()) {
            rename(&in, renamedInputs);
            rename(&in, renamedOutputs);
        }
        for (auto& out : *node.mutable_output()) rename(&out, renamedOutputs);
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_t()) toFloat(*a.mutable_t(), modelDirectory);
            if (a.name() == "dtype" && a.type() == onnx::AttributeProto::INT && a.i() == kFloat16)
                a.set_i(kFloat);
        }
        const auto* to = findAttribute(node, "to");
        if (isOnnxOp(node, "Cast") && to && to->i() == kFloat16) {
            // Keep the model's rounding to float16, then carry the value on as float.
            const std::string output = node.output(0), rounded = output + "__float16";
            onnx::NodeProto back = castNode(rounded, output, kFloat);
            node.set_output(0, rounded);
            *nodes.Add() = std::move(node);
            *nodes.Add() = std::move(back);
            ++rewrites;
            continue;
        }
        *nodes.Add() = std::move(node);
    }
    for (const auto& [name, asFloat] : renamedOutputs)
        *nodes.Add() = castNode(asFloat, name, kFloat16);
    rewrites += static_cast<int>(renamedInputs.size() + renamedOutputs.size());
    graph.mutable_node()->Swap(&nodes);
    return rewrites;
}

}  // namespace onnxlens::engine
