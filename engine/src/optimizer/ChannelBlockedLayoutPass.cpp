// The channel-blocked layout pass: Conv/FusedConv, the pools, Resize (spatial scales), Concat
// (channel axis), DepthToSpace and a squeeze-excitation block's Mul that follow them run on
// channel-blocked activations (ChannelBlockedLayout.h), the layout oneDNN's fast convolution
// kernels compute in. Plain NCHW data made oneDNN pick its im2col GEMM path, whose fused
// activations ran as a slow separate loop, and kept depthwise convolutions off oneDNN; a chain
// in blocked layout reorders once on the way in and once on the way out.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#ifdef ONNXLENS_WITH_DNNL
#include <dnnl.hpp>
#endif

#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/model/OnnxDomains.h"
#include "optimizer/Passes.h"
#include "optimizer/RewriteSupport.h"

namespace onnxlens::engine {

namespace {

enum class Role { Plain, Conv, Pool, Resize, Concat, DepthToSpace, ChannelScale };

struct NodePlan {
    Role role = Role::Plain;
    std::int64_t inChannels = 0, outChannels = 0;
    bool plainInput = false;   // a first convolution reading few plain channels directly
    bool plainOutput = false;  // a DepthToSpace writing plain data (fewer channels than a block)
    std::vector<std::int64_t> concatChannels;
    int scaleInput = 1;  // ChannelScale: which of the Mul's inputs is the [N, C, 1, 1] factor
};

// A constant float initializer's values, or nothing.
std::optional<std::vector<float>> constantFloats(const GraphIndex& index, const std::string& name) {
    const onnx::TensorProto* t = index.constantInitializer(name);
    if (!t || t->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
    auto tensor = constantTensor(index, name);
    if (!tensor) return std::nullopt;
    return std::vector<float>(tensor->data<float>(), tensor->data<float>() + tensor->numel());
}

// Convolutions with this few input channels read plain data (oneDNN has kernels for it).
constexpr std::int64_t kPlainInputChannels = 4;

}  // namespace

std::int64_t preferredChannelBlock() {
#ifdef ONNXLENS_WITH_DNNL
    using isa = dnnl::cpu_isa;
    switch (dnnl::get_effective_cpu_isa()) {
        case isa::avx512_core:
        case isa::avx512_core_vnni:
        case isa::avx512_core_bf16:
        case isa::avx512_core_amx:
            return 16;
        case isa::avx2:
        case isa::avx2_vnni:
            return 8;
        default:
            return 0;
    }
#else
    return 0;  // the blocked kernels would only convert around the plain ones
#endif
}

int convertToChannelBlockedLayout(PassContext& context, std::int64_t block) {
    if (block != 8 && block != 16) return 0;
    onnx::GraphProto& graph = context.graph();
    const GraphIndex& index = context.index();
    // The rewrite follows the listed order.
    auto ordered = ValueNames::inDependencyOrder(graph);
    if (!ordered) return 0;
    ValueNames& names = *ordered;

    // Which nodes go blocked, in graph order, and the channel count of each blocked value.
    std::vector<NodePlan> plans(static_cast<std::size_t>(graph.node_size()));
    std::unordered_map<std::string, std::int64_t> blockedChannels;
    std::unordered_map<std::string, int> blockedReads;
    // Blocked values whose spatial dims are all 1 -> the value they were pooled from: a
    // GlobalAveragePool's result and what 1x1 convolutions without padding make of it (a
    // squeeze-excitation block's factors, which then scale that same value: one batch).
    std::unordered_map<std::string, std::string> pooledFrom;
    int converted = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        NodePlan& plan = plans[static_cast<std::size_t>(i)];
        const bool conv = isOnnxOp(node, "Conv") ||
                          (node.domain() == kOnnxlensDomain && node.op_type() == "FusedConv");
        if (conv && node.output_size() == 1 && node.input_size() >= 2 && !node.input(0).empty()) {
            const onnx::TensorProto* w = index.constantInitializer(node.input(1));
            if (!w || w->data_type() != onnx::TensorProto::FLOAT || w->dims_size() != 4) continue;
            const std::int64_t groups = intAttribute(node, "group", 1);
            const std::int64_t m = w->dims(0), perGroup = w->dims(1);
            if (groups < 1 || m < 1 || perGroup < 1) continue;
            if (groups > 1 && !(perGroup == 1 && m == groups)) continue;  // only depthwise
            plan.role = Role::Conv;
            plan.inChannels = perGroup * groups;
            plan.outChannels = m;
            const auto* pads = findAttribute(node, "pads");
            bool unpadded = !pads;
            if (pads) {
                unpadded = true;
                for (auto v : pads->ints()) unpadded = unpadded && v == 0;
            }
            const auto* autoPad = findAttribute(node, "auto_pad");
            if (pooledFrom.count(node.input(0)) && w->dims(2) == 1 && w->dims(3) == 1 && unpadded &&
                (!autoPad || autoPad->s() == "NOTSET" || autoPad->s() == "VALID"))
                pooledFrom[node.output(0)] = pooledFrom[node.input(0)];
            plan.plainInput =
                !blockedChannels.count(node.input(0)) && plan.inChannels <= kPlainInputChannels;
            if (!plan.plainInput) ++blockedReads[node.input(0)];
            if (node.input_size() > 3 && !node.input(3).empty()) ++blockedReads[node.input(3)];
        } else if (isDefaultDomain(node) && node.input_size() >= 1 &&
                   blockedChannels.count(node.input(0)) &&
                   (node.op_type() == "MaxPool" || node.op_type() == "AveragePool" ||
                    node.op_type() == "GlobalAveragePool")) {
            const bool secondOutput = node.output_size() > 1 && !node.output(1).empty();
            const auto* kernel = findAttribute(node, "kernel_shape");
            if (secondOutput ||
                (node.op_type() != "GlobalAveragePool" && (!kernel || kernel->ints_size() != 2)))
                continue;
            plan.role = Role::Pool;
            plan.inChannels = plan.outChannels = blockedChannels[node.input(0)];
            ++blockedReads[node.input(0)];
            if (node.op_type() == "GlobalAveragePool") pooledFrom[node.output(0)] = node.input(0);
        } else if (isOnnxOp(node, "Resize") && context.defaultOpset() >= 11 &&
                   node.input_size() >= 3 && node.output_size() == 1 &&
                   blockedChannels.count(node.input(0)) && !findAttribute(node, "axes") &&
                   (node.input_size() < 4 || node.input(3).empty())) {
            // Spatial scales only (N and C kept), given as a constant.
            const auto scales = constantFloats(index, node.input(2));
            if (!scales || scales->size() != 4 || (*scales)[0] != 1.0f || (*scales)[1] != 1.0f)
                continue;
            plan.role = Role::Resize;
            plan.inChannels = plan.outChannels = blockedChannels[node.input(0)];
            ++blockedReads[node.input(0)];
        } else if (isOnnxOp(node, "Concat") && node.input_size() >= 2 && node.output_size() == 1) {
            const auto* axis = findAttribute(node, "axis");
            bool blocked = axis && (axis->i() == 1 || axis->i() == -3);  // blocked values: 4-D
            for (const auto& in : node.input()) blocked = blocked && blockedChannels.count(in);
            if (!blocked) continue;
            plan.role = Role::Concat;
            for (const auto& in : node.input()) {
                plan.concatChannels.push_back(blockedChannels[in]);
                plan.outChannels += blockedChannels[in];
                ++blockedReads[in];
            }
        } else if (isOnnxOp(node, "Mul") && node.input_size() == 2 && node.output_size() == 1 &&
                   blockedChannels.count(node.input(0)) && blockedChannels.count(node.input(1)) &&
                   blockedChannels[node.input(0)] == blockedChannels[node.input(1)] && [&] {
                       for (int k = 0; k < 2; ++k) {
                           auto f = pooledFrom.find(node.input(k));
                           if (f != pooledFrom.end() && f->second == node.input(1 - k)) return true;
                       }
                       return false;
                   }()) {
            // X * S with S pooled from X itself (one value a channel of each image): the blocked
            // channel scale.
            plan.role = Role::ChannelScale;
            auto f = pooledFrom.find(node.input(1));
            plan.scaleInput = f != pooledFrom.end() && f->second == node.input(0) ? 1 : 0;
            plan.inChannels = plan.outChannels = blockedChannels[node.input(0)];
            ++blockedReads[node.input(0)];
            ++blockedReads[node.input(1)];
        } else if (isOnnxOp(node, "DepthToSpace") && node.input_size() == 1 &&
                   node.output_size() == 1 && blockedChannels.count(node.input(0))) {
            const std::int64_t size = intAttribute(node, "blocksize", 0);
            const auto* mode = findAttribute(node, "mode");
            const std::int64_t channels = blockedChannels[node.input(0)];
            if (size < 1 || channels % (size * size) != 0 ||
                (mode && mode->s() != "DCR" && mode->s() != "CRD"))
                continue;
            plan.role = Role::DepthToSpace;
            plan.inChannels = channels;
            plan.outChannels = channels / (size * size);
            // Fewer channels than a block would mostly write padding: plain output then.
            plan.plainOutput = plan.outChannels < block;
            ++blockedReads[node.input(0)];
            ++converted;
            if (!plan.plainOutput) blockedChannels[node.output(0)] = plan.outChannels;
            continue;
        } else {
            continue;
        }
        blockedChannels[node.output(0)] = plan.outChannels;
        ++converted;
    }
    if (converted == 0) return 0;

    std::unordered_map<std::string, std::string> blockedNameOf;
    std::vector<onnx::NodeProto> rewritten;
    rewritten.reserve(static_cast<std::size_t>(graph.node_size()) * 2);
    auto blockedInput = [&](const std::string& value, const std::string& nodeName) {
        auto found = blockedNameOf.find(value);
        if (found != blockedNameOf.end()) return found->second;
        onnx::NodeProto reorder;
        reorder.set_name(nodeName + "/ReorderToBlocked");
        reorder.set_domain(kOnnxlensDomain);
        reorder.set_op_type("ReorderToBlocked");
        reorder.add_input(value);
        std::string name = names.fresh(value + "/blocked");
        reorder.add_output(name);
        setIntAttribute(reorder, "block", block);
        rewritten.push_back(std::move(reorder));
        blockedNameOf[value] = name;
        return name;
    };
    for (int i = 0; i < graph.node_size(); ++i) {
        const NodePlan& plan = plans[static_cast<std::size_t>(i)];
        const onnx::NodeProto& node = graph.node(i);
        if (plan.role == Role::Plain) {
            rewritten.push_back(node);
            continue;
        }
        onnx::NodeProto blocked = node;
        blocked.set_domain(kOnnxlensDomain);
        blocked.set_op_type(plan.role == Role::Conv           ? "BlockedConv"
                            : plan.role == Role::ChannelScale ? "BlockedChannelScale"
                                                              : "Blocked" + node.op_type());
        if (plan.role == Role::Conv) {
            setIntAttribute(blocked, "block", block);
            if (node.input_size() > 3 && !node.input(3).empty())
                blocked.set_input(3, blockedInput(node.input(3), node.name()));
        }
        if (plan.role == Role::Concat) {
            blocked.clear_attribute();
            auto* channels = blocked.add_attribute();
            channels->set_name("channels");
            channels->set_type(onnx::AttributeProto::INTS);
            for (auto c : plan.concatChannels) channels->add_ints(c);
            for (int k = 0; k < node.input_size(); ++k)
                blocked.set_input(k, blockedInput(node.input(k), node.name()));
        }
        if (plan.role == Role::ChannelScale) {  // X first, then the factors
            const std::string x = node.input(1 - plan.scaleInput);
            const std::string factor = node.input(plan.scaleInput);
            blocked.set_input(0, blockedInput(x, node.name()));
            blocked.set_input(1, blockedInput(factor, node.name()));
            setIntAttribute(blocked, "channels", plan.inChannels);
        }
        if (plan.role == Role::DepthToSpace) {
            setIntAttribute(blocked, "channels", plan.inChannels);
            setIntAttribute(blocked, "plain_output", plan.plainOutput ? 1 : 0);
        }
        if (!plan.plainInput && plan.role != Role::ChannelScale)
            blocked.set_input(0, blockedInput(node.input(0), node.name()));
        if (plan.plainOutput) {  // the node writes the plain value itself
            rewritten.push_back(std::move(blocked));
            continue;
        }
        const std::string plainOutput = node.output(0);
        const std::string blockedOutput = names.fresh(plainOutput + "/blocked");
        blocked.set_output(0, blockedOutput);
        blockedNameOf[plainOutput] = blockedOutput;
        rewritten.push_back(std::move(blocked));
        if (index.readCount(plainOutput) > blockedReads[plainOutput]) {
            onnx::NodeProto reorder;
            reorder.set_name(node.name() + "/ReorderFromBlocked");
            reorder.set_domain(kOnnxlensDomain);
            reorder.set_op_type("ReorderFromBlocked");
            reorder.add_input(blockedOutput);
            reorder.add_output(plainOutput);
            setIntAttribute(reorder, "channels", plan.outChannels);
            rewritten.push_back(std::move(reorder));
        }
    }
    graph.clear_node();
    for (auto& node : rewritten) *graph.add_node() = std::move(node);
    importOnnxlensDomain(context.model());
    return converted;
}

}  // namespace onnxlens::engine
