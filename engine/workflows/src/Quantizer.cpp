#include "onnxlens/workflows/Quantizer.h"

#include <onnx/defs/schema.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>

#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::engine {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadataKey = "onnxlens.quantization";
// Symmetric int8: [-127, 127], so that the range is the same on both sides of zero (as ONNX
// Runtime's quantize_dynamic does for int8 weights).
constexpr int kWeightMax = 127;
constexpr const char* kMsDomain = "com.microsoft";

void addIntAttribute(onnx::NodeProto& node, const std::string& name, std::int64_t value) {
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

// Every name used for a value or a node anywhere in the model (subgraphs too), so that new names
// never shadow or collide with existing ones.
void collectNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
    for (const auto& v : graph.input()) names.insert(v.name());
    for (const auto& v : graph.output()) names.insert(v.name());
    for (const auto& v : graph.value_info()) names.insert(v.name());
    for (const auto& t : graph.initializer()) names.insert(t.name());
    for (const auto& node : graph.node()) {
        names.insert(node.name());
        for (const auto& o : node.output()) names.insert(o);
        for (const auto& i : node.input()) names.insert(i);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectNames(a.g(), names);
            for (const auto& g : a.graphs()) collectNames(g, names);
        }
    }
}

// Names read anywhere: node inputs in every graph and the graph outputs.
void collectUses(const onnx::GraphProto& graph, std::set<std::string>& uses) {
    for (const auto& v : graph.output()) uses.insert(v.name());
    for (const auto& node : graph.node()) {
        for (const auto& i : node.input()) uses.insert(i);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectUses(a.g(), uses);
            for (const auto& g : a.graphs()) collectUses(g, uses);
        }
    }
}

// Default-domain nodes of a graph and its subgraphs.
void forEachDefaultDomainNode(const onnx::GraphProto& graph,
                              const std::function<void(const onnx::NodeProto&)>& fn) {
    for (const auto& node : graph.node()) {
        if (isDefaultDomain(node.domain())) fn(node);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) forEachDefaultDomainNode(a.g(), fn);
            for (const auto& g : a.graphs()) forEachDefaultDomainNode(g, fn);
        }
    }
}

// Symmetric int8 values of a float tensor, one scale for the whole tensor (axis < 0) or one per
// index of `axis`. Rounds half to even, as numpy.round does in ONNX Runtime's quantizer.
struct SymmetricInt8 {
    std::vector<std::int8_t> values;
    std::vector<float> scales;
};

SymmetricInt8 quantizeSymmetric(const Tensor& weight, std::int64_t axis) {
    const auto w = weight.span<float>();
    const std::int64_t channels = axis < 0 ? 1 : weight.dim(axis);
    std::int64_t inner = 1;
    if (axis >= 0)
        for (std::int64_t d = axis + 1; d < weight.rank(); ++d) inner *= weight.dim(d);
    auto channelOf = [&](std::size_t i) {
        return axis < 0
                   ? std::size_t{0}
                   : static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels);
    };
    std::vector<float> absMax(static_cast<std::size_t>(channels), 0.0f);
    for (std::size_t i = 0; i < w.size(); ++i)
        absMax[channelOf(i)] = std::max(absMax[channelOf(i)], std::fabs(w[i]));
    SymmetricInt8 q;
    q.scales.resize(absMax.size());
    for (std::size_t c = 0; c < absMax.size(); ++c) {
        // (rmax - rmin) / (qmax - qmin) with rmin = -rmax: computed in float like the weights.
        float scale = (absMax[c] + absMax[c]) / static_cast<float>(2 * kWeightMax);
        // An all-zero channel: any scale represents it; 1 keeps the multiply harmless.
        if (!(scale >= std::numeric_limits<float>::min()) || !std::isfinite(scale)) scale = 1.0f;
        q.scales[c] = scale;
    }
    q.values.resize(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
        const float r = std::nearbyint(w[i] / q.scales[channelOf(i)]);
        q.values[i] = static_cast<std::int8_t>(
            std::clamp(r, static_cast<float>(-kWeightMax), static_cast<float>(kWeightMax)));
    }
    return q;
}

// An embedding table as quantize_dynamic writes it: the activation type (uint8), asymmetric per
// tensor. The range [min(lo, 0), max(hi, 0)] over 255 steps, zero point round(-rmin / scale),
// q = clamp(round(e / scale) + zero point, 0, 255), rounding half to even. A table whose values
// lie mostly on one side of 0 keeps about twice the resolution the symmetric int8 form gave it.
struct AsymmetricUInt8 {
    std::vector<std::uint8_t> values;
    float scale = 1.0f;
    std::uint8_t zeroPoint = 0;
};

AsymmetricUInt8 quantizeAsymmetricUInt8(const Tensor& table) {
    const auto w = table.span<float>();
    float lo = 0.0f, hi = 0.0f;
    for (float v : w) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    AsymmetricUInt8 q;
    const float scale = (hi - lo) / 255.0f;
    // An all-zero table: any scale represents it; 1 keeps the multiply harmless.
    if (scale >= std::numeric_limits<float>::min() && std::isfinite(scale)) {
        q.scale = scale;
        q.zeroPoint =
            static_cast<std::uint8_t>(std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f));
    }
    q.values.resize(w.size());
    for (std::size_t i = 0; i < w.size(); ++i)
        q.values[i] = static_cast<std::uint8_t>(std::clamp(
            std::nearbyint(w[i] / q.scale) + static_cast<float>(q.zeroPoint), 0.0f, 255.0f));
    return q;
}

Tensor transposed2d(const Tensor& t) {
    const std::int64_t rows = t.dim(0), cols = t.dim(1);
    Tensor out(DataType::Float, {cols, rows});
    const float* in = t.data<float>();
    float* o = out.data<float>();
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) o[c * rows + r] = in[r * cols + c];
    return out;
}

class DynamicQuantizer {
  public:
    DynamicQuantizer(onnx::ModelProto& model, const QuantizeOptions& options)
        : model_(model), options_(options) {
        graph_ = model_.mutable_graph();
        collectNames(*graph_, names_);
        std::set<std::string> graphInputs;
        for (const auto& v : graph_->input()) graphInputs.insert(v.name());
        // Below IR 4 every initializer is listed as an input too, and is still a constant.
        oldIr_ = model_.ir_version() < 4;
        for (const auto& t : graph_->initializer())
            if (oldIr_ || graphInputs.count(t.name()) == 0)
                constants_[t.name()] = &t;
            else
                overridable_.insert(t.name());
    }

    Result<QuantizationResult> run(const std::string& name) {
        QuantizationResult result;
        const std::set<std::string> opTypes(options_.opTypes.begin(), options_.opTypes.end());
        const std::set<std::string> excluded(options_.excludedNodes.begin(),
                                             options_.excludedNodes.end());
        std::set<std::string> excludedSeen;
        google::protobuf::RepeatedPtrField<onnx::NodeProto> original;
        original.Swap(graph_->mutable_node());
        for (auto& node : original) {
            if (!isDefaultDomain(node.domain()) || opTypes.count(node.op_type()) == 0) {
                *graph_->add_node() = std::move(node);
                continue;
            }
            const std::string nodeName = profileNameOf(node);
            std::string reason;
            if (excluded.count(nodeName) || (!node.name().empty() && excluded.count(node.name()))) {
                excludedSeen.insert(excluded.count(nodeName) ? nodeName : node.name());
                reason = "excluded";
            } else {
                reason = whyNotQuantizable(node);
            }
            if (!reason.empty()) {
                if (!isEmbeddingCandidate(node)) {
                    *graph_->add_node() = std::move(node);
                    continue;
                }
                result.skipped.push_back({nodeName, node.op_type(), reason});
                *graph_->add_node() = std::move(node);
                continue;
            }
            QuantizedNode q{nodeName,
                            node.op_type(),
                            node.op_type() == "Gather" ? node.input(0) : node.input(1),
                            node.output(0),
                            {}};
            const int before = graph_->node_size();
            emit(node);
            for (int i = before; i < graph_->node_size(); ++i)
                q.int8Nodes.push_back(profileNameOf(graph_->node(i)));
            result.quantizedPerOpType[node.op_type()]++;
            result.quantized.push_back(std::move(q));
        }
        for (const auto& e : excluded)
            if (!excludedSeen.count(e))
                return makeError(
                    name, "--exclude " + e + ": no " + joinedOpTypes() + " node of that name");
        if (result.quantized.empty()) {
            std::string why = "nothing to quantize: no " + joinedOpTypes() +
                              " node with a constant float32 weight";
            if (!result.skipped.empty()) {
                why += " (";
                for (std::size_t i = 0; i < result.skipped.size() && i < 5; ++i)
                    why +=
                        (i ? "; " : "") + result.skipped[i].name + ": " + result.skipped[i].reason;
                if (result.skipped.size() > 5)
                    why += "; " + std::to_string(result.skipped.size() - 5) + " more";
                why += ")";
            }
            return makeError(name, why);
        }
        removeUnusedWeights();
        return result;
    }

  private:
    struct QuantizedActivation {
        std::string quantized, scale, zeroPoint, dequantized;
    };
    struct QuantizedWeight {
        std::string quantized, scale, zeroPoint, dequantized;
    };

    std::string joinedOpTypes() const {
        std::string s;
        for (std::size_t i = 0; i < options_.opTypes.size(); ++i)
            s += (i == 0                             ? ""
                  : i + 1 == options_.opTypes.size() ? " or "
                                                     : ", ") +
                 options_.opTypes[i];
        return s;
    }

    std::string unique(const std::string& candidate) {
        std::string name = candidate;
        for (int k = 1; names_.count(name); ++k) name = candidate + "_" + std::to_string(k);
        names_.insert(name);
        return name;
    }

    const onnx::TensorProto* constant(const std::string& name) const {
        auto it = constants_.find(name);
        return it == constants_.end() ? nullptr : it->second;
    }

    // False for a Gather that is no embedding lookup: its data computed (a shape's dims) or a
    // constant that is not float. Such nodes are not listed as skipped.
    bool isEmbeddingCandidate(const onnx::NodeProto& node) const {
        if (node.op_type() != "Gather" || node.input_size() < 1) return true;
        if (overridable_.count(node.input(0))) return true;
        const auto* table = constant(node.input(0));
        return table != nullptr && table->data_type() == onnx::TensorProto::FLOAT;
    }

    std::string describeWeight(const std::string& weight, std::int64_t minRank) const {
        if (overridable_.count(weight))
            return "weight is also a graph input (it can be overridden at run time)";
        const auto* w = constant(weight);
        if (w == nullptr) return "weight is not a constant initializer";
        if (w->data_type() != onnx::TensorProto::FLOAT)
            return std::string("weight is ") + dataTypeName(dataTypeOfTensorProto(*w)) +
                   "; only float32 weights are quantized";
        if (w->dims_size() < minRank) return "weight has rank " + std::to_string(w->dims_size());
        for (auto d : w->dims())
            if (d <= 0) return "weight is empty";
        return {};
    }

    static DataType dataTypeOfTensorProto(const onnx::TensorProto& t) {
        onnx::TypeProto type;
        type.mutable_tensor_type()->set_elem_type(t.data_type());
        return dataTypeOfTypeProto(type);
    }

    std::string whyNotQuantizable(const onnx::NodeProto& node) const {
        const bool qdq = options_.format == QuantizationFormat::QDQ;
        if (node.input_size() < 2 || node.input(0).empty() || node.output_size() < 1)
            return "missing inputs or outputs";
        const std::string& op = node.op_type();
        if (options_.format == QuantizationFormat::Int4 && op != "MatMul")
            return "int4 quantizes MatMul only (to MatMulNBits)";
        if (op == "Gather") {
            if (auto w = describeWeight(node.input(0), 1); !w.empty()) return w;
            return {};
        }
        if (op == "MatMul") {
            if (auto w = describeWeight(node.input(1), 2); !w.empty()) return w;
            if (constant(node.input(1))->dims_size() != 2) return "weight is not 2-D";
            return {};
        }
        if (op == "Gemm") {
            if (auto w = describeWeight(node.input(1), 2); !w.empty()) return w;
            if (qdq) return {};
            if (intAttribute(node, "transA", 0) != 0)
                return "transA = 1 (MatMulInteger needs A untransposed)";
            if (node.input_size() > 2 && !node.input(2).empty() &&
                constant(node.input(2)) == nullptr && floatAttribute(node, "beta", 1.0f) != 1.0f)
                return "beta != 1 with a C that is not constant";
            if (node.input_size() > 2 && !node.input(2).empty() &&
                constant(node.input(2)) != nullptr &&
                constant(node.input(2))->data_type() != onnx::TensorProto::FLOAT)
                return "C is not float32";
            return {};
        }
        if (op == "Conv") {
            if (auto w = describeWeight(node.input(1), 3); !w.empty()) return w;
            if (qdq) return {};
            if (node.input_size() > 2 && !node.input(2).empty()) {
                const auto* b = constant(node.input(2));
                if (b != nullptr &&
                    (b->data_type() != onnx::TensorProto::FLOAT || b->dims_size() != 1))
                    return "bias is not a float32 vector";
            }
            return {};
        }
        return "not a quantizable op type";
    }

    Tensor constantTensor(const std::string& name) const {
        return tensorFromProto(*constant(name));
    }

    void addInitializer(const Tensor& tensor, const std::string& name) {
        *graph_->add_initializer() = tensorToProto(tensor, name);
        if (oldIr_) {
            auto* input = graph_->add_input();
            input->set_name(name);
            auto* type = input->mutable_type()->mutable_tensor_type();
            type->set_elem_type(graph_->initializer(graph_->initializer_size() - 1).data_type());
            for (auto d : tensor.shape()) type->mutable_shape()->add_dim()->set_dim_value(d);
        }
    }

    onnx::NodeProto* addNode(const std::string& op, const std::string& name,
                             std::vector<std::string> inputs, std::vector<std::string> outputs) {
        auto* node = graph_->add_node();
        node->set_op_type(op);
        node->set_name(name);
        for (auto& i : inputs) node->add_input(i);
        for (auto& o : outputs) node->add_output(o);
        return node;
    }

    const QuantizedActivation& activation(const std::string& value) {
        auto it = activations_.find(value);
        if (it != activations_.end()) return it->second;
        QuantizedActivation a;
        a.quantized = unique(value + "_quantized");
        a.scale = unique(value + "_scale");
        a.zeroPoint = unique(value + "_zero_point");
        addNode("DynamicQuantizeLinear", unique(value + "_QuantizeLinear"), {value},
                {a.quantized, a.scale, a.zeroPoint});
        return activations_.emplace(value, a).first->second;
    }

    std::string dequantizedActivation(const std::string& value) {
        QuantizedActivation a = activation(value);
        auto& stored = activations_.at(value);
        if (stored.dequantized.empty()) {
            stored.dequantized = unique(value + "_dequantized");
            addNode("DequantizeLinear", unique(value + "_DequantizeLinear"),
                    {a.quantized, a.scale, a.zeroPoint}, {stored.dequantized});
        }
        return stored.dequantized;
    }

    // The int8 weight, its scale(s) and zero point(s) as initializers. `axis` < 0: per tensor.
    // `transpose` stores a 2-D weight transposed (Gemm's transB for MatMulInteger). `scaleRank`
    // > 1 gives per-channel scales the shape [C, 1, ...] that broadcasts over a Conv output.
    const QuantizedWeight& weight(const std::string& name, bool transpose, std::int64_t axis,
                                  std::int64_t scaleRank) {
        const std::string key = name + (transpose ? "|T" : "") + "|" + std::to_string(axis);
        auto it = weights_.find(key);
        if (it != weights_.end()) return it->second;
        Tensor w = constantTensor(name);
        if (transpose) w = transposed2d(w);
        const SymmetricInt8 q = quantizeSymmetric(w, axis);
        QuantizedWeight out;
        out.quantized = unique(name + "_quantized");
        out.scale = unique(name + "_scale");
        out.zeroPoint = unique(name + "_zero_point");
        addInitializer(Tensor::fromVector<std::int8_t>(w.shape(), q.values), out.quantized);
        if (axis < 0) {
            addInitializer(Tensor::scalar<float>(q.scales[0]), out.scale);
            addInitializer(Tensor::scalar<std::int8_t>(0), out.zeroPoint);
        } else {
            const auto channels = static_cast<std::int64_t>(q.scales.size());
            Shape scaleShape{channels};
            for (std::int64_t d = 1; d < scaleRank; ++d) scaleShape.push_back(1);
            addInitializer(Tensor::fromVector<float>(scaleShape, q.scales), out.scale);
            // Symmetric: every channel's zero point is 0. ConvInteger takes it as a scalar, the
            // only form ONNX Runtime's kernel accepts; MatMulInteger one per column, as
            // quantize_dynamic writes it.
            if (scaleRank > 1)
                addInitializer(Tensor::scalar<std::int8_t>(0), out.zeroPoint);
            else
                addInitializer(Tensor::zeros(DataType::Int8, {channels}), out.zeroPoint);
        }
        quantizedWeights_.insert(name);
        return weights_.emplace(key, out).first->second;
    }

    std::string dequantizedWeight(const std::string& name, std::int64_t axis) {
        const QuantizedWeight w = weight(name, false, axis, 1);
        auto& stored = weights_.at(name + "|" + std::to_string(axis));
        if (stored.dequantized.empty()) {
            stored.dequantized = unique(name + "_dequantized");
            auto* dq = addNode("DequantizeLinear", unique(name + "_DequantizeLinear"),
                               {w.quantized, w.scale, w.zeroPoint}, {stored.dequantized});
            if (axis >= 0) addIntAttribute(*dq, "axis", axis);
        }
        return stored.dequantized;
    }

    void emit(const onnx::NodeProto& node) {
        if (node.op_type() == "Gather")
            emitGather(node);
        else if (options_.format == QuantizationFormat::Int4)
            emitInt4(node);
        else if (options_.format == QuantizationFormat::QDQ)
            emitQdq(node);
        else
            emitQOperator(node);
    }

    void emitQdq(const onnx::NodeProto& node) {
        const std::string& op = node.op_type();
        std::int64_t axis = -1;
        if (options_.perChannel) {
            if (op == "MatMul") axis = 1;
            if (op == "Gemm") axis = intAttribute(node, "transB", 0) != 0 ? 0 : 1;
            if (op == "Conv") axis = 0;
        }
        const std::string x = dequantizedActivation(node.input(0));
        const std::string w = dequantizedWeight(node.input(1), axis);
        auto* kept = graph_->add_node();
        *kept = node;
        kept->set_input(0, x);
        kept->set_input(1, w);
    }

    // MatMul -> com.microsoft MatMulNBits on the float activation, named as ONNX Runtime's
    // MatMulNBitsQuantizer names it (node "<name>_Q4", weight "<weight>_Q4", "_scales",
    // "_zero_points"). A weight shared by several MatMuls is quantized once.
    void emitInt4(const onnx::NodeProto& node) {
        const std::string& weightName = node.input(1);
        const onnx::TensorProto& proto = *constant(weightName);
        const std::int64_t k = proto.dims(0), n = proto.dims(1);
        const std::string key = weightName + "|int4";
        auto it = weights_.find(key);
        if (it == weights_.end()) {
            const Tensor w = constantTensor(weightName);
            const Int4Weight q =
                quantizeInt4(w.data<float>(), k, n, options_.blockSize, options_.symmetric);
            QuantizedWeight out;
            out.quantized = unique(weightName + "_Q4");
            out.scale = unique(weightName + "_scales");
            addInitializer(
                Tensor::fromVector<std::uint8_t>({n, q.kBlocks, options_.blockSize / 2}, q.packed),
                out.quantized);
            addInitializer(Tensor::fromVector<float>({n * q.kBlocks}, q.scales), out.scale);
            if (!options_.symmetric) {
                out.zeroPoint = unique(weightName + "_zero_points");
                addInitializer(Tensor::fromVector<std::uint8_t>(
                                   {static_cast<std::int64_t>(q.zeroPoints.size())}, q.zeroPoints),
                               out.zeroPoint);
            }
            quantizedWeights_.insert(weightName);
            it = weights_.emplace(key, out).first;
        }
        const QuantizedWeight& w = it->second;
        const std::string base = node.name().empty() ? node.output(0) : node.name();
        std::vector<std::string> inputs{node.input(0), w.quantized, w.scale};
        if (!w.zeroPoint.empty()) inputs.push_back(w.zeroPoint);
        auto* nbits = addNode("MatMulNBits", unique(base + "_Q4"), inputs, {node.output(0)});
        nbits->set_domain(std::string(kMsDomain));
        addIntAttribute(*nbits, "K", k);
        addIntAttribute(*nbits, "N", n);
        addIntAttribute(*nbits, "bits", 4);
        addIntAttribute(*nbits, "block_size", options_.blockSize);
        addIntAttribute(*nbits, "accuracy_level", options_.accuracyLevel);
    }

    // The uint8 table of a Gather (quantizeAsymmetricUInt8), once per table.
    const QuantizedWeight& gatherTable(const std::string& name) {
        const std::string key = name + "|gather";
        auto it = weights_.find(key);
        if (it != weights_.end()) return it->second;
        const Tensor table = constantTensor(name);
        const AsymmetricUInt8 q = quantizeAsymmetricUInt8(table);
        QuantizedWeight out;
        out.quantized = unique(name + "_quantized");
        out.scale = unique(name + "_scale");
        out.zeroPoint = unique(name + "_zero_point");
        addInitializer(Tensor::fromVector<std::uint8_t>(table.shape(), q.values), out.quantized);
        addInitializer(Tensor::scalar<float>(q.scale), out.scale);
        addInitializer(Tensor::scalar<std::uint8_t>(q.zeroPoint), out.zeroPoint);
        quantizedWeights_.insert(name);
        return weights_.emplace(key, out).first->second;
    }

    // An embedding table, as quantize_dynamic writes it (both formats): the Gather reads the uint8
    // table (asymmetric, per tensor) and a DequantizeLinear writes the float node's output.
    void emitGather(const onnx::NodeProto& node) {
        const QuantizedWeight w = gatherTable(node.input(0));
        const std::string base = node.name().empty() ? node.output(0) : node.name();
        const std::string gathered = unique(node.output(0) + "_quantized");
        auto* gather = graph_->add_node();
        *gather = node;
        gather->set_name(unique(base + "_quant"));
        gather->set_input(0, w.quantized);
        gather->set_output(0, gathered);
        addNode("DequantizeLinear", unique(node.output(0) + "_DequantizeLinear"),
                {gathered, w.scale, w.zeroPoint}, {node.output(0)});
    }

    void emitQOperator(const onnx::NodeProto& node) {
        const std::string& op = node.op_type();
        const std::string base = node.name().empty() ? node.output(0) : node.name();
        const std::string& output = node.output(0);
        const bool transB = op == "Gemm" && intAttribute(node, "transB", 0) != 0;
        const std::int64_t weightRank = constant(node.input(1))->dims_size();
        std::int64_t axis = -1;
        if (options_.perChannel) axis = op == "Conv" ? 0 : 1;
        const std::int64_t scaleRank = op == "Conv" ? weightRank - 1 : 1;

        const QuantizedActivation a = activation(node.input(0));
        const QuantizedWeight w = weight(node.input(1), transB, axis, scaleRank);
        const std::string integerOutput = unique(output + "_output_quantized");
        auto* integer =
            addNode(op == "Conv" ? "ConvInteger" : "MatMulInteger", unique(base + "_quant"),
                    {a.quantized, w.quantized, a.zeroPoint, w.zeroPoint}, {integerOutput});
        if (op == "Conv")
            for (const auto& attribute : node.attribute()) *integer->add_attribute() = attribute;

        const std::string castOutput = unique(integerOutput + "_cast_output");
        auto* cast =
            addNode("Cast", unique(integerOutput + "_cast"), {integerOutput}, {castOutput});
        addIntAttribute(*cast, "to", onnx::TensorProto::FLOAT);

        std::string weightScale = w.scale;
        if (op == "Gemm") {
            const float alpha = floatAttribute(node, "alpha", 1.0f);
            if (alpha != 1.0f) {
                Tensor scaled = constantScale(w.scale);
                for (auto& s : scaled.span<float>()) s *= alpha;
                weightScale = unique(w.scale + "_alpha");
                addInitializer(scaled, weightScale);
            }
        }
        const std::string scalesOutput = unique(base + "_quant_scales_mul:0");
        addNode("Mul", unique(base + "_quant_scales_mul"), {a.scale, weightScale}, {scalesOutput});

        const std::string bias = biasFor(node);
        const std::string scaledOutput = bias.empty() ? output : unique(output + "_scaled");
        addNode("Mul", unique(base + "_quant_output_scale_mul"), {castOutput, scalesOutput},
                {scaledOutput});
        if (!bias.empty())
            addNode("Add", unique(base + "_quant_bias_add"), {scaledOutput, bias}, {output});
    }

    Tensor constantScale(const std::string& name) const {
        for (const auto& t : graph_->initializer())
            if (t.name() == name) return tensorFromProto(t);
        return {};
    }

    // The value added after the scale multiply: Gemm's beta * C, Conv's bias shaped [M, 1, ...].
    std::string biasFor(const onnx::NodeProto& node) {
        if (node.input_size() < 3 || node.input(2).empty()) return {};
        const std::string& c = node.input(2);
        if (node.op_type() == "Gemm") {
            const float beta = floatAttribute(node, "beta", 1.0f);
            if (beta == 1.0f) return c;
            Tensor scaled = constantTensor(c);  // whyNotQuantizable checked that C is constant here
            for (auto& v : scaled.span<float>()) v *= beta;
            std::string name = unique(c + "_beta");
            addInitializer(scaled, name);
            replacedConstants_.insert(c);
            return name;
        }
        const std::int64_t spatial = constant(node.input(1))->dims_size() - 2;
        if (constant(c) == nullptr) {
            // A computed bias (exporters route shared zeros through Identity): reshaped per run
            // to [1, M, 1, ...], as ONNX Runtime's quantizer does.
            const std::string key = "|shape" + std::to_string(spatial);
            auto shapeIt = reshapedBiases_.find(key);
            if (shapeIt == reshapedBiases_.end()) {
                std::vector<std::int64_t> dims{1, -1};
                for (std::int64_t d = 0; d < spatial; ++d) dims.push_back(1);
                const std::string name =
                    unique("conv_bias_shape_rank" + std::to_string(spatial + 2));
                addInitializer(Tensor::fromVector<std::int64_t>(
                                   {static_cast<std::int64_t>(dims.size())}, dims),
                               name);
                shapeIt = reshapedBiases_.emplace(key, name).first;
            }
            std::string reshaped = unique(c + "_reshaped");
            addNode("Reshape", unique(c + "_reshape_" + node.output(0)), {c, shapeIt->second},
                    {reshaped});
            return reshaped;
        }
        Tensor b = constantTensor(c);
        Shape shape{b.numel()};
        for (std::int64_t d = 0; d < spatial; ++d) shape.push_back(1);
        const std::string key = c + "|bias" + std::to_string(spatial);
        if (auto it = reshapedBiases_.find(key); it != reshapedBiases_.end()) return it->second;
        const std::string name = unique(c + "_reshaped");
        replacedConstants_.insert(c);
        addInitializer(Tensor::fromVector<float>(shape, std::vector<float>(b.span<float>().begin(),
                                                                           b.span<float>().end())),
                       name);
        return reshapedBiases_[key] = name;
    }

    // The float weights (and biases) that nothing reads any more.
    void removeUnusedWeights() {
        std::set<std::string> uses;
        collectUses(*graph_, uses);
        std::set<std::string> removed;
        for (const auto& name : constantsReplaced())
            if (!uses.count(name)) removed.insert(name);
        constants_.clear();  // pointers into the repeated field are about to move
        auto* initializers = graph_->mutable_initializer();
        for (int i = initializers->size() - 1; i >= 0; --i)
            if (removed.count(initializers->Get(i).name())) initializers->DeleteSubrange(i, 1);
        if (oldIr_) {
            auto* inputs = graph_->mutable_input();
            for (int i = inputs->size() - 1; i >= 0; --i)
                if (removed.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
        }
        // value_info of a removed initializer would describe a value that no longer exists.
        auto* infos = graph_->mutable_value_info();
        for (int i = infos->size() - 1; i >= 0; --i)
            if (removed.count(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
    }

    std::set<std::string> constantsReplaced() const {
        std::set<std::string> names = quantizedWeights_;
        names.insert(replacedConstants_.begin(), replacedConstants_.end());
        return names;
    }

    onnx::ModelProto& model_;
    const QuantizeOptions& options_;
    onnx::GraphProto* graph_ = nullptr;
    bool oldIr_ = false;
    std::set<std::string> names_;
    std::map<std::string, const onnx::TensorProto*> constants_;
    std::set<std::string> overridable_;
    std::map<std::string, QuantizedActivation> activations_;
    std::map<std::string, QuantizedWeight> weights_;
    std::set<std::string> quantizedWeights_;
    std::set<std::string> replacedConstants_;  // Gemm C scaled by beta, Conv biases reshaped
    std::map<std::string, std::string> reshapedBiases_;
};

onnx::OperatorSetIdProto* defaultImport(onnx::ModelProto& model) {
    for (auto& o : *model.mutable_opset_import())
        if (isDefaultDomain(o.domain())) return &o;
    return nullptr;
}

// Raises the default-domain import of `quantized` to `target` when no operator of the float
// model `original` gets another version in between (the schema in force at the old and the new
// opset is the same one): then the raise cannot change what the model computes. Otherwise names
// the operators that would move to a newer version.
Status raiseOpset(const onnx::ModelProto& original, onnx::ModelProto& quantized,
                  std::int64_t target, const std::string& name) {
    auto* import = defaultImport(quantized);
    if (import == nullptr) {
        import = quantized.add_opset_import();
        import->set_domain("");
        import->set_version(target);
        return Ok{};
    }
    const std::int64_t from = import->version();
    if (from >= target) return Ok{};
    std::set<std::string> changed, unknown;
    forEachDefaultDomainNode(original.graph(), [&](const onnx::NodeProto& node) {
        const auto* before =
            onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(from), "");
        const auto* after =
            onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(target), "");
        if (before == nullptr)
            unknown.insert(node.op_type());
        else if (after == nullptr || after->since_version() != before->since_version())
            changed.insert(node.op_type() + "-" +
                           std::to_string(after ? after->since_version() : 0));
    });
    if (!changed.empty() || !unknown.empty()) {
        std::string list;
        for (const auto& op : changed) list += (list.empty() ? "" : ", ") + op;
        for (const auto& op : unknown)
            list += (list.empty() ? "" : ", ") + op + " (unknown at opset " + std::to_string(from) +
                    ")";
        return makeError(
            name,
            "the model imports opset " + std::to_string(from) + " and this quantization needs " +
                std::to_string(target) + "; raising the import would move " + list +
                " to newer operator versions, so it is not done: re-export the model at opset " +
                std::to_string(target) + " or newer" +
                (target == 13 ? " (or quantize per tensor, which needs opset 11)" : ""));
    }
    import->set_version(target);
    return Ok{};
}

void recordSettings(onnx::ModelProto& model, const QuantizeOptions& options,
                    const QuantizationResult& result) {
    const bool int4 = options.format == QuantizationFormat::Int4;
    nlohmann::json settings = {{"method", int4 ? "weight-only" : "dynamic"},
                               {"weight_type", int4 ? "int4" : "int8"},
                               {"activation_type", int4 ? "float" : "uint8"},
                               {"symmetric_weights", int4 ? options.symmetric : true},
                               {"per_channel", options.perChannel},
                               {"format", quantizationFormatName(options.format)},
                               {"op_types", options.opTypes},
                               {"excluded", options.excludedNodes},
                               {"quantized_nodes", result.quantized.size()},
                               {"tool", "onnxlens-cli quantize"}};
    if (int4) {
        settings["block_size"] = options.blockSize;
        settings["accuracy_level"] = options.accuracyLevel;
    }
    auto* props = model.mutable_metadata_props();
    for (int i = props->size() - 1; i >= 0; --i)
        if (props->Get(i).key() == kMetadataKey) props->DeleteSubrange(i, 1);
    auto* entry = model.add_metadata_props();
    entry->set_key(kMetadataKey);
    entry->set_value(settings.dump());
}

std::string describeUnsupported(const std::vector<UnsupportedNode>& nodes) {
    std::string s;
    for (std::size_t i = 0; i < nodes.size() && i < 5; ++i)
        s += (i ? ", " : "") + (nodes[i].nodeName.empty()
                                    ? nodes[i].opType
                                    : nodes[i].nodeName + " (" + nodes[i].opType + ")");
    if (nodes.size() > 5) s += " and " + std::to_string(nodes.size() - 5) + " more";
    return s;
}

}  // namespace

const char* quantizationFormatName(QuantizationFormat format) {
    switch (format) {
        case QuantizationFormat::QDQ:
            return "qdq";
        case QuantizationFormat::Int4:
            return "int4";
        case QuantizationFormat::QOperator:
            break;
    }
    return "qoperator";
}

Int4Weight quantizeInt4(const float* weight, std::int64_t k, std::int64_t n, std::int64_t blockSize,
                        bool symmetric) {
    Int4Weight q;
    q.k = k;
    q.n = n;
    q.blockSize = blockSize;
    q.kBlocks = (k + blockSize - 1) / blockSize;
    const std::int64_t blob = blockSize / 2, zpBytes = (q.kBlocks + 1) / 2;
    q.packed.assign(static_cast<std::size_t>(n * q.kBlocks * blob), 0);
    q.scales.assign(static_cast<std::size_t>(n * q.kBlocks), 0.0f);
    if (!symmetric) q.zeroPoints.assign(static_cast<std::size_t>(n * zpBytes), 0);
    for (std::int64_t col = 0; col < n; ++col)
        for (std::int64_t b = 0; b < q.kBlocks; ++b) {
            const std::int64_t k0 = b * blockSize, k1 = std::min(k, k0 + blockSize);
            float lo = std::numeric_limits<float>::max(), hi = std::numeric_limits<float>::lowest();
            for (std::int64_t r = k0; r < k1; ++r) {
                lo = std::min(lo, weight[r * n + col]);
                hi = std::max(hi, weight[r * n + col]);
            }
            // The padding rows beyond K are zeros, so they count in the range too.
            if (k1 - k0 < blockSize) {
                lo = std::min(lo, 0.0f);
                hi = std::max(hi, 0.0f);
            }
            float scale = 0.0f;
            int zeroPoint = 8;
            if (symmetric) {
                scale = (std::fabs(hi) > std::fabs(lo) ? hi : lo) / -8.0f;
            } else {
                lo = std::min(lo, 0.0f);
                hi = std::max(hi, 0.0f);
                scale = (hi - lo) / 15.0f;
                const float zp = scale != 0.0f ? -lo / scale : lo;
                zeroPoint = !(zp >= 0.0f) ? 0 : zp > 15.0f ? 15 : static_cast<int>(std::round(zp));
                auto& byte = q.zeroPoints[static_cast<std::size_t>(col * zpBytes + b / 2)];
                byte = static_cast<std::uint8_t>(byte | (zeroPoint << ((b % 2) * 4)));
            }
            q.scales[static_cast<std::size_t>(col * q.kBlocks + b)] = scale;
            const float reciprocal = scale != 0.0f ? 1.0f / scale : 0.0f;
            std::uint8_t* out = q.packed.data() + (col * q.kBlocks + b) * blob;
            for (std::int64_t j = 0; j < blockSize; ++j) {
                const std::int64_t r = k0 + j;
                const float v = r < k ? weight[r * n + col] : 0.0f;
                float level = std::round(v * reciprocal) + static_cast<float>(zeroPoint);
                if (!(level >= 0.0f)) level = 0.0f;  // NaN too
                if (level > 15.0f) level = 15.0f;
                out[j / 2] = static_cast<std::uint8_t>(out[j / 2] |
                                                       (static_cast<int>(level) << ((j % 2) * 4)));
            }
        }
    return q;
}

const std::vector<std::string>& quantizableOpTypes() {
    static const std::vector<std::string> types = {"MatMul", "Gemm", "Conv", "Gather"};
    return types;
}

std::int64_t requiredOpset(const QuantizeOptions& options) {
    // MatMulNBits is com.microsoft's; the default domain's import is left as it is.
    if (options.format == QuantizationFormat::Int4) return 1;
    // DynamicQuantizeLinear exists from opset 11; per-axis DequantizeLinear from 13.
    return options.format == QuantizationFormat::QDQ && options.perChannel ? 13 : 11;
}

Result<QuantizationResult> quantizeModel(const onnx::ModelProto& model, const std::string& name,
                                         const QuantizeOptions& options) {
    if (options.opTypes.empty()) return makeError(name, "no op types to quantize");
    for (const auto& op : options.opTypes)
        if (std::find(quantizableOpTypes().begin(), quantizableOpTypes().end(), op) ==
            quantizableOpTypes().end())
            return makeError(name, "cannot quantize op type '" + op +
                                       "' (MatMul, Gemm, Conv and Gather can be)");
    if (options.format == QuantizationFormat::Int4) {
        if (options.blockSize < 16 || options.blockSize > 256 ||
            (options.blockSize & (options.blockSize - 1)) != 0)
            return makeError(name, "block size " + std::to_string(options.blockSize) +
                                       ": give a power of two from 16 to 256");
        if (options.accuracyLevel < 0 || options.accuracyLevel > 4)
            return makeError(
                name, "accuracy level " + std::to_string(options.accuracyLevel) + ": give 0 to 4");
    }
    QuantizationResult result;
    result.model = model;
    if (const auto* import = defaultImport(result.model)) result.opsetBefore = import->version();
    DynamicQuantizer quantizer(result.model, options);
    auto rewritten = quantizer.run(name);
    if (!rewritten) return rewritten.error();
    rewritten->model = std::move(result.model);
    rewritten->opsetBefore = result.opsetBefore;
    if (auto st = raiseOpset(model, rewritten->model, requiredOpset(options), name); !st)
        return st.error();
    rewritten->opsetAfter = defaultImport(rewritten->model)->version();
    if (options.format == QuantizationFormat::Int4) {
        bool imported = false;
        for (const auto& o : rewritten->model.opset_import())
            if (o.domain() == kMsDomain) imported = true;
        if (!imported) {
            auto* ms = rewritten->model.add_opset_import();
            ms->set_domain(kMsDomain);
            ms->set_version(1);
        }
    }
    recordSettings(rewritten->model, options, *rewritten);
    return rewritten;
}

Status checkQuantizeOutput(const fs::path& input, const fs::path& output) {
    if (output.empty()) return makeError("", "no output file given");
    std::error_code ec;
    if (fs::exists(output, ec) && fs::exists(input, ec) && fs::equivalent(input, output, ec))
        return makeError(output.string(), "is the input model; choose another output file");
    if (fs::weakly_canonical(fs::absolute(input), ec) ==
        fs::weakly_canonical(fs::absolute(output), ec))
        return makeError(output.string(), "is the input model; choose another output file");
    if (fs::is_directory(output, ec))
        return makeError(output.string(), "is a folder; give the output model's file name");
    const fs::path folder = output.parent_path().empty() ? fs::path(".") : output.parent_path();
    if (!fs::is_directory(folder, ec))
        return makeError(output.string(), "the folder " + folder.string() + " does not exist");
    if (::access(folder.c_str(), W_OK) != 0)
        return makeError(output.string(), "the folder " + folder.string() + " is not writable");
    return Ok{};
}

Result<QuantizedModelFile> quantizeModelFile(const fs::path& input,
                                             const QuantizeOptions& options) {
    auto loaded = loadModel(input);
    if (!loaded) return loaded.error();
    QuantizedModelFile q;
    q.input = input;
    onnx::ModelProto& proto = *loaded->proto;
    for (const auto& t : proto.graph().initializer())
        if (usesExternalData(t)) q.inputUsedExternalData = true;
    q.bytesBefore = modelBytesOnDisk(proto, input, loaded->directory);
    if (auto st = internalizeExternalData(proto, loaded->directory); !st) return st.error();
    const std::string name = input.string();
    if (auto unsupported = Session::findUnsupportedNodes(proto); !unsupported.empty())
        return makeError(
            name, "the engine cannot run " + describeUnsupported(unsupported) +
                      ", so the int8 model could not be checked against it; nothing written");
    auto result = quantizeModel(proto, name, options);
    if (!result) return result.error();
    if (const auto verdict = runChecker(result->model); !verdict.ok)
        return makeError(name, "the int8 model fails the onnx checker (" + verdict.message +
                                   "); nothing written");
    if (auto unsupported = Session::findUnsupportedNodes(result->model); !unsupported.empty())
        return makeError(name, "the engine cannot run the int8 model's " +
                                   describeUnsupported(unsupported) + "; nothing written");
    q.floatModel = std::move(*loaded);
    q.result = std::move(*result);
    return q;
}

Result<WrittenModel> writeQuantizedModel(QuantizedModelFile& quantized, const fs::path& output,
                                         ModelWriteOptions writeOptions) {
    if (quantized.inputUsedExternalData) writeOptions.forceExternalData = true;
    return writeModelFile(quantized.result.model, output, writeOptions);
}

}  // namespace onnxlens::engine
