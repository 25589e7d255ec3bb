#include "onnxlens/model/ShapeInferenceGuard.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/OnnxDomains.h"
namespace onnxlens {
namespace {

// Attributes whose every value must be positive wherever they appear (window geometry, block
// and group sizes, hidden sizes): onnx's inference divides by them, multiplies them together or
// sizes loops with them, so they are also bounded to keep those products inside int64.
const std::set<std::string>& positiveAttributes() {
    static const std::set<std::string> names{"strides",   "dilations", "kernel_shape",
                                             "blocksize", "group",     "hidden_size"};
    return names;
}

// Inputs whose rank onnx's inference functions index without checking: (op, input) -> rank.
const std::map<std::pair<std::string, int>, int>& requiredRanks() {
    static const std::map<std::pair<std::string, int>, int> ranks{
        {{"RNN", 0}, 3},  {{"RNN", 1}, 3},  {{"RNN", 2}, 3},  {{"RNN", 3}, 2},  {{"RNN", 4}, 1},
        {{"RNN", 5}, 3},  {{"GRU", 0}, 3},  {{"GRU", 1}, 3},  {{"GRU", 2}, 3},  {{"GRU", 3}, 2},
        {{"GRU", 4}, 1},  {{"GRU", 5}, 3},  {{"LSTM", 0}, 3}, {{"LSTM", 1}, 3}, {{"LSTM", 2}, 3},
        {{"LSTM", 3}, 2}, {{"LSTM", 4}, 1}, {{"LSTM", 5}, 3}, {{"LSTM", 6}, 3}, {{"LSTM", 7}, 2},
        {{"STFT", 0}, 3}, {{"STFT", 1}, 0}, {{"STFT", 2}, 1}, {{"STFT", 3}, 0},
    };
    return ranks;
}

// Window ops whose inference reads the input's spatial dims: [N, C, spatial...] needs rank >= 3.
const std::set<std::string>& windowOps() {
    static const std::set<std::string> ops{
        "Conv",         "ConvInteger", "QLinearConv",   "ConvTranspose",     "MaxPool",
        "AveragePool",  "LpPool",      "MaxRoundRobin", "GlobalAveragePool", "GlobalMaxPool",
        "GlobalLpPool", "MaxUnpool",   "DeformConv"};
    return ops;
}

// The weights input of the convolutions: onnx's inference reads a kernel dim from each of its
// dims after the second and indexes the per-spatial-dim attributes with it, so its rank must be
// the input's rank.
const std::map<std::string, std::size_t>& convWeightInputs() {
    static const std::map<std::string, std::size_t> inputs{{"Conv", 1},
                                                           {"ConvInteger", 1},
                                                           {"QLinearConv", 3},
                                                           {"ConvTranspose", 1},
                                                           {"DeformConv", 1}};
    return inputs;
}

constexpr std::int64_t kMaxSize = 0x7fffffff;

int rankOf(const onnx::TypeProto* type) {
    if (type == nullptr || type->value_case() != onnx::TypeProto::kTensorType ||
        !type->tensor_type().has_shape())
        return -1;
    return type->tensor_type().shape().dim_size();
}

}  // namespace

std::string hostileNodeProblem(const onnx::NodeProto& node, const std::vector<int>& inputRanks) {
    const bool defaultDomain = isDefaultDomain(node);
    for (const auto& a : node.attribute()) {
        if (!positiveAttributes().count(a.name())) continue;
        if (a.type() == onnx::AttributeProto::INT && (a.i() <= 0 || a.i() > kMaxSize))
            return "attribute " + a.name() + " is " + std::to_string(a.i()) +
                   "; it must be positive and at most " + std::to_string(kMaxSize);
        if (a.type() == onnx::AttributeProto::INTS)
            for (auto v : a.ints())
                if (v <= 0 || v > kMaxSize)
                    return "attribute " + a.name() + " holds " + std::to_string(v) +
                           "; its values must be positive and at most " + std::to_string(kMaxSize);
    }
    if (!defaultDomain) return {};
    if (windowOps().count(node.op_type())) {
        if (!inputRanks.empty() && inputRanks[0] >= 0 && inputRanks[0] < 3)
            return "input 0 has rank " + std::to_string(inputRanks[0]) +
                   "; a window operator needs [N, C, spatial...] (rank 3 or more)";
        const int spatial = !inputRanks.empty() && inputRanks[0] >= 3 ? inputRanks[0] - 2 : -1;
        if (auto w = convWeightInputs().find(node.op_type()); w != convWeightInputs().end()) {
            const std::size_t at = w->second;
            if (spatial >= 0 && at < inputRanks.size() && inputRanks[at] >= 0 &&
                inputRanks[at] != inputRanks[0])
                return "input " + std::to_string(at) + " (the weights) has rank " +
                       std::to_string(inputRanks[at]) + "; it must have the input's rank " +
                       std::to_string(inputRanks[0]);
        }
        for (const char* name : {"strides", "dilations", "kernel_shape"}) {
            const auto* a = findAttribute(node, name);
            if (a && spatial >= 0 && a->ints_size() != spatial)
                return std::string("attribute ") + name + " has " + std::to_string(a->ints_size()) +
                       " values for " + std::to_string(spatial) + " spatial dims";
        }
        if (const auto* pads = findAttribute(node, "pads")) {
            if (spatial >= 0 && pads->ints_size() != 2 * spatial)
                return "attribute pads has " + std::to_string(pads->ints_size()) + " values for " +
                       std::to_string(spatial) + " spatial dims";
            for (auto v : pads->ints())
                if (v < 0)
                    return "attribute pads holds " + std::to_string(v) +
                           "; pads must not be negative";
        }
    }
    for (std::size_t i = 0; i < inputRanks.size(); ++i) {
        auto it = requiredRanks().find({node.op_type(), static_cast<int>(i)});
        if (it != requiredRanks().end() && inputRanks[i] >= 0 && inputRanks[i] != it->second)
            return "input " + std::to_string(i) + " has rank " + std::to_string(inputRanks[i]) +
                   ", expected " + std::to_string(it->second);
    }
    return {};
}

namespace {

// Builds the NodeProto view the checks need from an inference context (attributes and ranks).
void guardedInference(const onnx::InferenceFunction& original, onnx::InferenceContext& ctx,
                      const std::string& opType) {
    onnx::NodeProto node;
    node.set_op_type(opType);
    std::vector<int> ranks;
    for (std::size_t i = 0; i < ctx.getNumInputs(); ++i)
        ranks.push_back(rankOf(ctx.getInputType(i)));
    for (const char* name :
         {"strides", "dilations", "kernel_shape", "blocksize", "group", "hidden_size", "pads"})
        if (const auto* a = ctx.getAttribute(name)) *node.add_attribute() = *a;
    const std::string problem = hostileNodeProblem(node, ranks);
    if (!problem.empty()) fail_shape_inference(opType, ": ", problem);
    if (original) original(ctx);
}

}  // namespace

void guardShapeInference() {
    static std::once_flag once;
    std::call_once(once, [] {
        // The registry hands out const pointers into its own map; the schemas themselves are
        // not const, and this runs once before any inference.
        for (const auto& copy : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
            const onnx::OpSchema* registered =
                onnx::OpSchemaRegistry::Schema(copy.Name(), copy.SinceVersion(), copy.domain());
            if (registered == nullptr || registered->SinceVersion() != copy.SinceVersion())
                continue;
            auto* schema = const_cast<onnx::OpSchema*>(registered);
            onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
            if (original)
                schema->TypeAndShapeInferenceFunction(
                    [original, opType = copy.Name()](onnx::InferenceContext& ctx) {
                        guardedInference(original, ctx, opType);
                    });
            // Data propagation (Shape, Size) reads input 0's type without checking that the
            // input has one: an untyped graph input (or the output of a node nothing could
            // type) gets no propagated value instead.
            if (schema->has_data_propagation_function()) {
                onnx::DataPropagationFunction propagate = schema->GetDataPropagationFunction();
                schema->PartialDataPropagationFunction(
                    [propagate](onnx::DataPropagationContext& ctx) {
                        if (ctx.getNumInputs() > 0 && ctx.getInputType(0) == nullptr) return;
                        propagate(ctx);
                    });
            }
        }
    });
}

}  // namespace onnxlens
