// The channels-last pass for 8-bit convolution chains (the QOperator models ONNX Runtime's
// quantize_static writes): QLinearConv with constant 2-D weights becomes com.onnxlens
// QLinearConvChannelsLast, which reads and writes [N, H, W, C], the layout oneDNN's int8 kernels
// compute in; QLinearAdd of two such values of one shape and QLinearGlobalAveragePool reading one
// (its channels_last attribute) stay channels-last too. A Transpose moves a value to channels-last
// where a chain starts and back where a plain reader (or a graph output) needs it, so the layers
// of a chain never change layout between them (with NCHW kept between layers, each 8-bit
// convolution transposed its source and its result).
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInference.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

enum class Role { Plain, Conv, Add, GlobalPool };

bool isMicrosoftOp(const onnx::NodeProto& node, const char* op) {
    return node.domain() == "com.microsoft" && node.op_type() == op;
}

// QLinearConv with constant 4-D weights (a 2-D convolution) and one output.
bool isConvToConvert(const onnx::NodeProto& node, const GraphIndex& index) {
    if (!isOnnxOp(node, "QLinearConv") || node.input_size() < 8 || node.output_size() != 1 ||
        node.input(0).empty() || node.output(0).empty())
        return false;
    const onnx::TensorProto* w = index.constantInitializer(node.input(3));
    return w && w->dims_size() == 4;
}

onnx::NodeProto transposeNode(const std::string& name, const std::string& input,
                              const std::string& output, const std::vector<std::int64_t>& perm) {
    onnx::NodeProto node = makeNode("Transpose", "", name, {input}, output);
    auto* attribute = node.add_attribute();
    attribute->set_name("perm");
    attribute->set_type(onnx::AttributeProto::INTS);
    for (auto p : perm) attribute->add_ints(p);
    return node;
}

}  // namespace

int convertQLinearConvToChannelsLast(PassContext& context) {
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    int convs = 0;
    for (const auto& node : graph.node()) convs += isConvToConvert(node, index) ? 1 : 0;
    // One convolution alone gains nothing: the two Transposes cost what its own moves cost.
    if (convs < 2) return 0;
    // The rewrite follows the listed order.
    auto ordered = ValueNames::inDependencyOrder(graph);
    if (!ordered) return 0;
    ValueNames& names = *ordered;

    // Which nodes run channels-last, in graph order; which values are channels-last, and how many
    // of each value's reads a channels-last node makes.
    std::vector<Role> roles(static_cast<std::size_t>(graph.node_size()), Role::Plain);
    std::unordered_set<std::string> channelsLast;
    std::unordered_map<std::string, int> channelsLastReads;
    const InferredShapes* shapes = nullptr;
    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        Role& role = roles[static_cast<std::size_t>(i)];
        if (isConvToConvert(node, index)) {
            // X of another rank is the model's error: left to the plain kernel to report.
            if (!shapes) shapes = &context.shapes();
            const auto x = shapes->dimsOf(node.input(0));
            if (x && x->size() != 4) continue;
            role = Role::Conv;
            ++channelsLastReads[node.input(0)];
        } else if (isMicrosoftOp(node, "QLinearAdd") && node.input_size() >= 7 &&
                   node.output_size() == 1 && channelsLast.count(node.input(0)) &&
                   channelsLast.count(node.input(3))) {
            // Elementwise in any layout, when neither side broadcasts: one 4-D shape.
            if (!shapes) shapes = &context.shapes();
            const auto a = shapes->dimsOf(node.input(0)), b = shapes->dimsOf(node.input(3));
            if (!a || !b || a->size() != 4 || *a != *b) continue;
            role = Role::Add;
            ++channelsLastReads[node.input(0)];
            ++channelsLastReads[node.input(3)];
        } else if (isMicrosoftOp(node, "QLinearGlobalAveragePool") && node.input_size() >= 1 &&
                   node.output_size() == 1 && channelsLast.count(node.input(0)) &&
                   intAttribute(node, "channels_last", 0) == 0) {
            role = Role::GlobalPool;
            ++channelsLastReads[node.input(0)];
        } else {
            continue;
        }
        channelsLast.insert(node.output(0));
    }

    std::unordered_map<std::string, std::string> channelsLastNameOf;
    std::vector<onnx::NodeProto> rewritten;
    rewritten.reserve(static_cast<std::size_t>(graph.node_size()) * 2);
    auto channelsLastInput = [&](const std::string& value, const std::string& nodeName) {
        auto found = channelsLastNameOf.find(value);
        if (found != channelsLastNameOf.end()) return found->second;
        std::string name = names.fresh(value + "/channels_last");
        rewritten.push_back(transposeNode(nodeName + "/ToChannelsLast", value, name, {0, 2, 3, 1}));
        channelsLastNameOf[value] = name;
        return name;
    };
    int converted = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        const Role role = roles[static_cast<std::size_t>(i)];
        const onnx::NodeProto& node = graph.node(i);
        if (role == Role::Plain) {
            rewritten.push_back(node);
            continue;
        }
        onnx::NodeProto moved = node;
        moved.set_input(0, channelsLastInput(node.input(0), node.name()));
        if (role == Role::Conv) {
            moved.set_domain(kOnnxlensDomain);
            moved.set_op_type("QLinearConvChannelsLast");
        } else if (role == Role::Add) {
            moved.set_input(3, channelsLastInput(node.input(3), node.name()));
        } else {
            setIntAttribute(moved, "channels_last", 1);
        }
        const std::string plainOutput = node.output(0);
        const std::string movedOutput = names.fresh(plainOutput + "/channels_last");
        moved.set_output(0, movedOutput);
        channelsLastNameOf[plainOutput] = movedOutput;
        rewritten.push_back(std::move(moved));
        ++converted;
        if (index.readCount(plainOutput) > channelsLastReads[plainOutput])
            rewritten.push_back(transposeNode(node.name() + "/FromChannelsLast", movedOutput,
                                              plainOutput, {0, 3, 1, 2}));
    }
    graph.clear_node();
    for (auto& node : rewritten) *graph.add_node() = std::move(node);
    importOnnxlensDomain(context.model());
    return converted;
}

}  // namespace onnxlens::engine
