#include "onnxlens/model/CostModel.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#include "MicrosoftOpCosts.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInferenceAnyOpset.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

double CostFigures::intensity() const {
    const double bytes = static_cast<double>(bytesRead + bytesWritten + parameterBytes);
    return bytes > 0 ? flops / bytes : 0.0;
}

CostFigures& CostFigures::operator+=(const CostFigures& o) {
    macs += o.macs;
    flops += o.flops;
    parameters += o.parameters;
    parameterBytes += o.parameterBytes;
    bytesRead += o.bytesRead;
    bytesWritten += o.bytesWritten;
    return *this;
}

std::string scopeOfNodeName(const std::string& name) {
    const auto slash = name.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string() : name.substr(0, slash);
}

namespace {

using Dims = std::vector<std::int64_t>;  // -1: unknown dim

struct ValueType {
    std::int32_t elementType = 0;
    std::optional<Dims> dims;  // nullopt: unknown rank
};

std::optional<double> numel(const std::optional<Dims>& dims) {
    if (!dims) return std::nullopt;
    double n = 1;
    for (auto d : *dims) {
        if (d < 0) return std::nullopt;
        n *= static_cast<double>(d);
    }
    return n;
}

ValueType valueTypeOf(const onnx::TypeProto& type) {
    ValueType v;
    if (type.value_case() != onnx::TypeProto::kTensorType) return v;
    v.elementType = type.tensor_type().elem_type();
    if (!type.tensor_type().has_shape()) return v;
    Dims dims;
    for (const auto& d : type.tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    v.dims = std::move(dims);
    return v;
}

// The weight a Constant node holds (its value tensor): its type and the tensor.
struct ConstantWeight {
    ValueType type;
    const onnx::TensorProto* tensor = nullptr;
};

std::optional<ConstantWeight> constantNodeWeight(const onnx::NodeProto& node) {
    if (!isOnnxOp(node, "Constant") || node.output_size() != 1 || node.output(0).empty())
        return std::nullopt;
    // A tensor (value); the scalar and list forms (value_float, value_ints) are attributes, not
    // weights, as ModelSummary counts them.
    for (const auto& a : node.attribute()) {
        if (a.name() != "value" || !a.has_t()) continue;
        ConstantWeight w;
        w.type.elementType = a.t().data_type();
        w.type.dims = Dims(a.t().dims().begin(), a.t().dims().end());
        w.tensor = &a.t();
        return w;
    }
    return std::nullopt;
}

// Shapes and element types of every value a graph (and the graphs around it) can see.
class ValueTypes {
  public:
    explicit ValueTypes(const ValueTypes* outer = nullptr) : outer_(outer) {}
    void addGraph(const onnx::GraphProto& graph) {
        for (const auto& t : graph.initializer()) {
            ValueType v;
            v.elementType = t.data_type();
            v.dims = Dims(t.dims().begin(), t.dims().end());
            types_[t.name()] = v;
            initializers_.insert(t.name());
            initializerTensors_[t.name()] = &t;
        }
        for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()})
            for (const auto& vi : *list)
                if (!initializers_.count(vi.name())) types_[vi.name()] = valueTypeOf(vi.type());
        // Weights stored as Constant nodes (some exporters write every weight so) count as
        // parameters too.
        for (const auto& node : graph.node()) {
            auto weight = constantNodeWeight(node);
            if (!weight) continue;
            types_[node.output(0)] = weight->type;
            initializers_.insert(node.output(0));
            if (weight->tensor) initializerTensors_[node.output(0)] = weight->tensor;
        }
    }
    const ValueType* find(const std::string& name) const {
        auto it = types_.find(name);
        if (it != types_.end()) return &it->second;
        return outer_ ? outer_->find(name) : nullptr;
    }
    std::optional<Dims> dims(const std::string& name) const {
        const ValueType* v = find(name);
        return v ? v->dims : std::nullopt;
    }
    bool isInitializer(const std::string& name) const {
        return initializers_.count(name) || (outer_ && outer_->isInitializer(name));
    }
    const onnx::TensorProto* initializer(const std::string& name) const {
        auto it = initializerTensors_.find(name);
        if (it != initializerTensors_.end()) return it->second;
        return outer_ ? outer_->initializer(name) : nullptr;
    }
    std::optional<double> bytes(const std::string& name) const {
        const ValueType* v = find(name);
        if (!v) return std::nullopt;
        auto n = numel(v->dims);
        if (!n) return std::nullopt;
        return *n * static_cast<double>(elementTypeSize(v->elementType));
    }

  private:
    const ValueTypes* outer_;
    std::map<std::string, ValueType> types_;
    std::set<std::string> initializers_;
    std::map<std::string, const onnx::TensorProto*> initializerTensors_;
};

// Elementwise operators: one operation per output element (per extra input for variadic ones).
const std::set<std::string>& elementwiseOps() {
    static const std::set<std::string> ops{"Add",
                                           "Sub",
                                           "Mul",
                                           "Div",
                                           "Pow",
                                           "Mod",
                                           "Max",
                                           "Min",
                                           "Sum",
                                           "Mean",
                                           "Relu",
                                           "LeakyRelu",
                                           "PRelu",
                                           "ThresholdedRelu",
                                           "Sigmoid",
                                           "HardSigmoid",
                                           "HardSwish",
                                           "Tanh",
                                           "Exp",
                                           "Log",
                                           "Sqrt",
                                           "Reciprocal",
                                           "Neg",
                                           "Abs",
                                           "Erf",
                                           "Gelu",
                                           "Elu",
                                           "Selu",
                                           "Celu",
                                           "Mish",
                                           "Softplus",
                                           "Softsign",
                                           "Clip",
                                           "Where",
                                           "Equal",
                                           "Less",
                                           "LessOrEqual",
                                           "Greater",
                                           "GreaterOrEqual",
                                           "And",
                                           "Or",
                                           "Xor",
                                           "Not",
                                           "Sign",
                                           "Floor",
                                           "Ceil",
                                           "Round",
                                           "Sin",
                                           "Cos",
                                           "Tan",
                                           "Asin",
                                           "Acos",
                                           "Atan",
                                           "Sinh",
                                           "Cosh",
                                           "Asinh",
                                           "Acosh",
                                           "Atanh",
                                           "IsNaN",
                                           "IsInf",
                                           "BitShift",
                                           "BitwiseAnd",
                                           "BitwiseOr",
                                           "BitwiseXor",
                                           "BitwiseNot",
                                           "QuantizeLinear",
                                           "DequantizeLinear",
                                           "DynamicQuantizeLinear",
                                           "Shrink",
                                           "Dropout"};
    return ops;
}

// Per-element operation counts of normalisations and softmax (documented in docs/cost-model.md).
const std::map<std::string, double>& perElementOps() {
    static const std::map<std::string, double> ops{{"Softmax", 3},
                                                   {"LogSoftmax", 4},
                                                   {"LayerNormalization", 5},
                                                   {"BatchNormalization", 2},
                                                   {"InstanceNormalization", 5},
                                                   {"GroupNormalization", 5},
                                                   {"LpNormalization", 3},
                                                   {"MeanVarianceNormalization", 5},
                                                   {"RMSNormalization", 4},
                                                   {"SkipLayerNormalization", 6}};
    return ops;
}

// Reductions read every input element once.
bool isReduction(const std::string& op) {
    return op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin" ||
           op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool" ||
           op == "CumSum";
}

class CostCounter {
  public:
    // Fills `cost.figures` for one node; returns false when a needed shape is unknown.
    void count(const onnx::NodeProto& node, const ValueTypes& types, NodeCost& cost) {
        const std::string& op = node.op_type();
        auto in = [&](int i) -> std::optional<Dims> {
            if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
            return types.dims(node.input(i));
        };
        auto out = [&](int i) -> std::optional<Dims> {
            if (i >= node.output_size() || node.output(i).empty()) return std::nullopt;
            return types.dims(node.output(i));
        };
        auto unknown = [&](const std::string& what) {
            cost.shapesKnown = false;
            cost.note = "shape of " + what + " unknown";
        };
        CostFigures& f = cost.figures;
        // Bytes moved and parameters read, whatever the operator.
        for (int i = 0; i < node.input_size(); ++i) {
            const std::string& name = node.input(i);
            if (name.empty()) continue;
            auto b = types.bytes(name);
            if (types.isInitializer(name)) {
                if (auto n = numel(types.dims(name))) {
                    const auto stored = static_cast<std::uint64_t>(*n);
                    const ValueType* v = types.find(name);
                    const auto packed = v && v->elementType == onnx::TensorProto::UINT8
                                            ? packedWeightsOfInput(node, i, stored)
                                            : std::nullopt;
                    f.parameters += packed ? packed->weights : stored;
                }
                if (b) f.parameterBytes += static_cast<std::uint64_t>(*b);
            } else if (b) {
                f.bytesRead += static_cast<std::uint64_t>(*b);
            }
        }
        for (const auto& name : node.output())
            if (!name.empty())
                if (auto b = types.bytes(name)) f.bytesWritten += static_cast<std::uint64_t>(*b);

        if (countMicrosoftOpCost(
                node, [&](const std::string& v) { return types.dims(v); }, cost))
            return;
        const bool standard = isDefaultDomain(node.domain()) || node.domain() == "com.microsoft" ||
                              node.domain() == kOnnxlensDomain;
        if (!standard) {
            cost.note = "no counting rule for domain " + node.domain();
            return;
        }
        if (node.domain() == kOnnxlensDomain && !countOnnxlensOp(node, types, cost)) return;
        if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv" || op == "FusedConv" ||
            op == "ConvIntegerToFloat" || op == "QLinearConvChannelsLast") {
            // Each output element is a dot product over (C / group) x kernel: numel(W) / M (in
            // either layout: the optimizer's channels-last QLinearConv has the same inputs).
            const int w = op == "QLinearConv" || op == "QLinearConvChannelsLast" ? 3 : 1;
            auto wd = in(w), y = out(0);
            auto wn = numel(wd), yn = numel(y);
            if (!wn || !yn || wd->empty() || (*wd)[0] <= 0) return unknown("Conv weight or output");
            f.macs = *yn * (*wn / static_cast<double>((*wd)[0]));
            f.flops = 2 * f.macs +
                      ((op == "Conv" && node.input_size() > 2 && !node.input(2).empty()) ? *yn : 0);
        } else if (op == "ConvTranspose") {
            // Each input element is scattered over (M / group) x kernel outputs: numel(W) / C.
            auto x = in(0), wd = in(1);
            auto xn = numel(x), wn = numel(wd);
            if (!xn || !wn || wd->empty() || (*wd)[0] <= 0)
                return unknown("ConvTranspose input or weight");
            f.macs = *xn * (*wn / static_cast<double>((*wd)[0]));
            f.flops = 2 * f.macs;
        } else if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul" ||
                   op == "FusedMatMul" || op == "MatMulIntegerToFloat") {
            auto a = in(0), y = out(0);
            auto yn = numel(y);
            if (!a || a->empty() || !yn || a->back() < 0) return unknown("MatMul input or output");
            // ONNX Runtime's com.microsoft FusedMatMul reads A transposed (transA, rank >= 2):
            // K is its dim -2, or its first dim when transBatchA moved that behind the batch.
            std::int64_t k = a->back();
            if (op == "FusedMatMul" && node.domain() == "com.microsoft" && a->size() >= 2 &&
                intAttribute(node, "transA", 0))
                k = intAttribute(node, "transBatchA", 0) ? a->front() : (*a)[a->size() - 2];
            if (k < 0) return unknown("MatMul K");
            f.macs = *yn * static_cast<double>(k);
            f.flops = 2 * f.macs;
        } else if (op == "Gemm" || op == "FusedGemm") {  // FusedGemm: com.microsoft
            auto a = in(0), y = out(0);
            auto yn = numel(y);
            if (!a || a->size() != 2 || !yn) return unknown("Gemm input or output");
            const std::int64_t k = intAttribute(node, "transA", 0) ? (*a)[0] : (*a)[1];
            if (k < 0) return unknown("Gemm K");
            f.macs = *yn * static_cast<double>(k);
            f.flops = 2 * f.macs + (node.input_size() > 2 && !node.input(2).empty() ? *yn : 0);
        } else if (op == "Einsum") {
            countEinsum(node, types, cost);
        } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
            countRecurrent(node, types, cost);
        } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
            auto yn = numel(out(0));
            if (!yn) return unknown("pool output");
            double window = 1;
            for (auto k : intsAttribute(node, "kernel_shape")) window *= static_cast<double>(k);
            f.flops = *yn * window;
        } else if (isReduction(op)) {
            auto xn = numel(in(0));
            if (!xn) return unknown("reduced input");
            f.flops = *xn;
        } else if (auto it = perElementOps().find(op); it != perElementOps().end()) {
            auto xn = numel(in(0));
            if (!xn) return unknown("normalised input");
            f.flops = it->second * *xn;
        } else if (elementwiseOps().count(op)) {
            auto yn = numel(out(0));
            if (!yn) return unknown("output");
            int operands = 0;
            for (const auto& name : node.input()) operands += name.empty() ? 0 : 1;
            const bool variadic = op == "Sum" || op == "Max" || op == "Min" || op == "Mean";
            f.flops = *yn * (variadic ? std::max(1, operands - 1) : 1);
        } else if (op == "Resize" || op == "Upsample") {
            auto yn = numel(out(0));
            if (!yn) return unknown("resized output");
            const std::string mode = stringAttribute(node, "mode", "nearest");
            const double taps = mode == "linear" || mode == "bilinear" ? 4
                                : mode == "cubic"                      ? 16
                                                                       : 0;
            f.flops = *yn * taps;
        }
        // Everything else (Reshape, Transpose, Gather, Concat, Slice, ...) moves data: 0 FLOPs.
    }

  private:
    // The optimizer's own operators (com.onnxlens), in a model saved after it (`onnxlens-cli
    // optimize`): true when the common rules below count the node as they count the operator it
    // was made from (FusedConv, FusedMatMul, LayerNormalization...); otherwise counted here, or
    // marked unknown so that no product shows as a silent 0 (the channel-blocked kernels, whose
    // blocked shapes shape inference does not know, and the packed Attention).
    bool countOnnxlensOp(const onnx::NodeProto& node, const ValueTypes& types, NodeCost& cost) {
        static const std::set<std::string> sameRules{"FusedConv",
                                                     "FusedMatMul",
                                                     "LayerNormalization",
                                                     "Gelu",
                                                     "ConvIntegerToFloat",
                                                     "MatMulIntegerToFloat",
                                                     "QLinearConvChannelsLast",
                                                     "Conv",
                                                     "MatMul",
                                                     "Upsample"};
        // Layout conversions and copies: bytes moved, no arithmetic.
        static const std::set<std::string> movesData{"ReorderToBlocked", "ReorderFromBlocked",
                                                     "BlockedConcat", "BlockedDepthToSpace"};
        const std::string& op = node.op_type();
        if (sameRules.count(op)) return true;
        if (movesData.count(op)) return false;
        if (op == "PackedMatMul") {
            // A [..., K] times the packed [K, N] (attributes k and n), an optional bias of N.
            const std::int64_t k = intAttribute(node, "k", -1), n = intAttribute(node, "n", -1);
            auto a = node.input_size() > 0 ? types.dims(node.input(0)) : std::nullopt;
            auto an = numel(a);
            if (!an || k <= 0 || n <= 0) {
                cost.shapesKnown = false;
                cost.note = "shape of PackedMatMul input unknown";
                return false;
            }
            cost.figures.macs = *an * static_cast<double>(n);
            const bool bias = node.input_size() > 2 && !node.input(2).empty();
            cost.figures.flops = 2 * cost.figures.macs +
                                 (bias ? *an / static_cast<double>(k) * static_cast<double>(n) : 0);
            return false;
        }
        cost.shapesKnown = false;
        cost.note = "no counting rule for com.onnxlens::" + op;
        return false;
    }

    void countEinsum(const onnx::NodeProto& node, const ValueTypes& types, NodeCost& cost) {
        std::string equation = stringAttribute(node, "equation", "");
        equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
        const auto arrow = equation.find("->");
        const std::string lhs = equation.substr(0, arrow);
        std::map<char, std::int64_t> sizes;
        std::size_t start = 0;
        for (int i = 0; i < node.input_size(); ++i) {
            const auto comma = lhs.find(',', start);
            const std::string term =
                lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            start = comma == std::string::npos ? lhs.size() : comma + 1;
            auto dims = types.dims(node.input(i));
            if (!dims || term.find("...") != std::string::npos || term.size() != dims->size()) {
                cost.shapesKnown = false;
                cost.note = "Einsum term '" + term + "' not matched to a known shape";
                return;
            }
            for (std::size_t k = 0; k < term.size(); ++k) sizes[term[k]] = (*dims)[k];
        }
        double product = 1;
        for (const auto& [letter, size] : sizes) {
            if (size < 0) {
                cost.shapesKnown = false;
                cost.note = std::string("Einsum index '") + letter + "' unknown";
                return;
            }
            product *= static_cast<double>(size);
        }
        // Every combination of indices is one multiply-accumulate across the operands.
        cost.figures.macs = node.input_size() > 1 ? product * (node.input_size() - 1) : 0;
        cost.figures.flops = node.input_size() > 1 ? 2 * cost.figures.macs : product;
    }

    void countRecurrent(const onnx::NodeProto& node, const ValueTypes& types, NodeCost& cost) {
        const std::string& op = node.op_type();
        auto x = types.dims(node.input(0));
        const std::int64_t hidden = intAttribute(node, "hidden_size", -1);
        if (!x || x->size() != 3 || hidden <= 0 || (*x)[0] < 0 || (*x)[1] < 0 || (*x)[2] < 0) {
            cost.shapesKnown = false;
            cost.note = "recurrent input shape or hidden_size unknown";
            return;
        }
        const bool batchFirst = intAttribute(node, "layout", 0) == 1;
        const double seq = static_cast<double>(batchFirst ? (*x)[1] : (*x)[0]);
        const double batch = static_cast<double>(batchFirst ? (*x)[0] : (*x)[1]);
        const double input = static_cast<double>((*x)[2]);
        const double dirs =
            stringAttribute(node, "direction", "forward") == "bidirectional" ? 2 : 1;
        // Gates: LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1. Each step multiplies the input and
        // the previous hidden state by every gate's weights; the gate arithmetic after it (bias
        // adds, activations, the cell update) is counted per hidden unit: LSTM 12, GRU 10, RNN 3.
        const double gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
        const double gateOps = op == "LSTM" ? 12 : op == "GRU" ? 10 : 3;
        const double h = static_cast<double>(hidden);
        cost.figures.macs = dirs * seq * batch * gates * h * (input + h);
        cost.figures.flops = 2 * cost.figures.macs + dirs * seq * batch * h * gateOps;
    }
};

// Binds symbolic and unknown input dims on the copy that shape inference sees.
void bindInputDims(onnx::ModelProto& model, const std::map<std::string, std::int64_t>& dims,
                   ModelCost& result) {
    std::set<std::string> initializers;
    for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
    std::set<std::string> assumed;
    for (auto& input : *model.mutable_graph()->mutable_input()) {
        if (initializers.count(input.name())) continue;
        if (input.type().value_case() != onnx::TypeProto::kTensorType ||
            !input.type().tensor_type().has_shape())
            continue;
        auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (int axis = 0; axis < shape->dim_size(); ++axis) {
            auto* d = shape->mutable_dim(axis);
            if (d->has_dim_value()) continue;
            const std::string symbol = d->has_dim_param() ? d->dim_param() : std::string();
            // An unnamed dim is bound by its "input:axis" key (what a run's feeds gave it).
            const std::string axisKey = input.name() + ":" + std::to_string(axis);
            auto it = symbol.empty() ? dims.find(axisKey) : dims.find(symbol);
            const std::int64_t value = it != dims.end() ? it->second : 1;
            if (symbol.empty() && it != dims.end()) {
                result.dims[axisKey] = value;
            } else if (!symbol.empty()) {
                result.dims[symbol] = value;
                if (it == dims.end() && assumed.insert(symbol).second)
                    result.assumptions.push_back("dim '" + symbol + "' taken as 1 (--dim " +
                                                 symbol + "=N to set it)");
            } else {
                result.assumptions.push_back("input '" + input.name() + "' axis " +
                                             std::to_string(axis) + " is unknown, taken as 1");
            }
            d->set_dim_value(value);
        }
    }
}

std::optional<double> constantScalar(const onnx::TensorProto* t) {
    if (!t ||
        (t->data_type() != onnx::TensorProto::INT64 && t->data_type() != onnx::TensorProto::INT32))
        return std::nullopt;
    std::optional<double> value;
    if (!visitSmallTensor(*t, 1, [&value](auto v) { value = static_cast<double>(v); }))
        return std::nullopt;
    return value;
}

// The figures of a subgraph's nodes, once.
CostFigures countGraph(const onnx::GraphProto& graph, const ValueTypes& outer, CostCounter& counter,
                       bool& estimate, std::string& note);

// If, Loop and Scan: their bodies, per iteration times the trip count where it is known.
void countSubgraphs(const onnx::NodeProto& node, const ValueTypes& types, CostCounter& counter,
                    NodeCost& cost) {
    const std::string& op = node.op_type();
    if (!isDefaultDomain(node.domain()) || (op != "If" && op != "Loop" && op != "Scan")) return;
    bool estimate = false;
    std::string note;
    if (op == "If") {
        CostFigures best;
        for (const auto& a : node.attribute()) {
            if (!a.has_g()) continue;
            CostFigures branch = countGraph(a.g(), types, counter, estimate, note);
            if (branch.flops >= best.flops) best = branch;
        }
        cost.figures += best;
        cost.estimate = true;
        cost.note = "the larger branch of the If";
        return;
    }
    for (const auto& a : node.attribute()) {
        if (a.name() != "body" || !a.has_g()) continue;
        CostFigures body = countGraph(a.g(), types, counter, estimate, note);
        std::optional<double> trips;
        if (op == "Loop" && node.input_size() > 0 && !node.input(0).empty())
            trips = constantScalar(types.initializer(node.input(0)));
        if (op == "Scan") {
            const std::int64_t scanInputs = intAttribute(node, "num_scan_inputs", 0);
            const int first = node.input_size() - static_cast<int>(scanInputs);
            if (scanInputs > 0 && first >= 0) {
                auto dims = types.dims(node.input(first));
                const auto axes = intsAttribute(node, "scan_input_axes");
                std::int64_t axis = axes.empty() ? 0 : axes[0];
                if (dims && axis < 0) axis += static_cast<std::int64_t>(dims->size());
                if (dims && axis >= 0 && axis < static_cast<std::int64_t>(dims->size()) &&
                    (*dims)[axis] >= 0)
                    trips = static_cast<double>((*dims)[axis]);
            }
        }
        const double n = trips.value_or(1);
        cost.figures.macs += body.macs * n;
        cost.figures.flops += body.flops * n;
        cost.figures.bytesRead +=
            static_cast<std::uint64_t>(static_cast<double>(body.bytesRead) * n);
        cost.figures.bytesWritten +=
            static_cast<std::uint64_t>(static_cast<double>(body.bytesWritten) * n);
        cost.figures.parameters += body.parameters;
        cost.figures.parameterBytes += body.parameterBytes;
        if (!trips) {
            cost.estimate = true;
            cost.note = "trip count unknown: one iteration of the body counted";
        } else {
            cost.note = "body counted " + std::to_string(static_cast<long long>(n)) + " times";
        }
    }
    if (estimate && !cost.estimate) {
        cost.estimate = true;
        cost.note = note;
    }
}

CostFigures countGraph(const onnx::GraphProto& graph, const ValueTypes& outer, CostCounter& counter,
                       bool& estimate, std::string& note) {
    ValueTypes types(&outer);
    types.addGraph(graph);
    CostFigures total;
    for (const auto& node : graph.node()) {
        NodeCost cost;
        counter.count(node, types, cost);
        countSubgraphs(node, types, counter, cost);
        if (cost.estimate || !cost.shapesKnown) {
            estimate = true;
            note = cost.note;
        }
        total += cost.figures;
    }
    return total;
}

// The weights of a graph and of every subgraph in it: initializers and Constant nodes.
void collectWeights(const onnx::GraphProto& graph, std::map<std::string, ValueType>& weights) {
    for (const auto& t : graph.initializer())
        weights[t.name()] = ValueType{t.data_type(), Dims(t.dims().begin(), t.dims().end())};
    for (const auto& node : graph.node()) {
        if (auto w = constantNodeWeight(node)) weights[node.output(0)] = w->type;
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectWeights(a.g(), weights);
            for (const auto& g : a.graphs()) collectWeights(g, weights);
        }
    }
}

std::map<std::string, ValueType> weightsOf(const onnx::GraphProto& graph) {
    std::map<std::string, ValueType> weights;
    collectWeights(graph, weights);
    return weights;
}

// The names a node reads: its inputs and whatever the nodes of its subgraphs read.
void readsOf(const onnx::NodeProto& node, std::vector<std::string>& reads) {
    for (const auto& name : node.input())
        if (!name.empty()) reads.push_back(name);
    for (const auto& a : node.attribute()) {
        auto walk = [&](const onnx::GraphProto& g) {
            for (const auto& n : g.node()) readsOf(n, reads);
        };
        if (a.has_g()) walk(a.g());
        for (const auto& g : a.graphs()) walk(g);
    }
}

// Live activation bytes over the execution order: a value lives from the node that makes it
// (graph inputs: from the start) to the last node that reads it (graph outputs: to the end).
void computePeakActivations(const onnx::GraphProto& graph, const ValueTypes& types,
                            ModelCost& result) {
    std::map<std::string, std::size_t> lastUse;
    for (std::size_t i = 0; i < static_cast<std::size_t>(graph.node_size()); ++i) {
        const auto& node = graph.node(static_cast<int>(i));
        for (const auto& name : node.input()) lastUse[name] = i;
        // Names read inside subgraphs live until the node that owns the subgraph.
        std::function<void(const onnx::GraphProto&)> walk = [&](const onnx::GraphProto& g) {
            for (const auto& n : g.node()) {
                for (const auto& name : n.input()) lastUse[name] = std::max(lastUse[name], i);
                for (const auto& a : n.attribute()) {
                    if (a.has_g()) walk(a.g());
                    for (const auto& sub : a.graphs()) walk(sub);
                }
            }
        };
        for (const auto& a : node.attribute()) {
            if (a.has_g()) walk(a.g());
            for (const auto& sub : a.graphs()) walk(sub);
        }
    }
    const std::size_t end = static_cast<std::size_t>(graph.node_size());
    for (const auto& o : graph.output()) lastUse[o.name()] = end;
    auto bytesOf = [&](const std::string& name) {
        auto b = types.bytes(name);
        return b ? static_cast<std::uint64_t>(*b) : std::uint64_t{0};
    };
    std::uint64_t live = 0;
    for (const auto& in : graph.input())
        if (!types.isInitializer(in.name())) live += bytesOf(in.name());
    result.peakActivationBytes = live;
    std::map<std::size_t, std::vector<std::string>> freedAfter;
    for (const auto& in : graph.input())
        if (!types.isInitializer(in.name()) && lastUse.count(in.name()))
            freedAfter[lastUse[in.name()]].push_back(in.name());
    for (std::size_t i = 0; i < end; ++i) {
        const auto& node = graph.node(static_cast<int>(i));
        for (const auto& name : node.output()) {
            if (name.empty()) continue;
            live += bytesOf(name);
            auto it = lastUse.find(name);
            // An output nobody reads is freed right after its node.
            freedAfter[it == lastUse.end() ? i : it->second].push_back(name);
        }
        if (live > result.peakActivationBytes) {
            result.peakActivationBytes = live;
            result.peakAfterNode = profileNameOf(node);
        }
        for (const auto& name : freedAfter[i]) live -= std::min(live, bytesOf(name));
    }
}

}  // namespace

Result<ModelCost> computeModelCost(const onnx::ModelProto& model,
                                   const std::map<std::string, std::int64_t>& dims) {
    ModelCost result;
    try {
        onnx::ModelProto copy = copyWithoutBulkData(model);
        bindInputDims(copy, dims, result);
        // With the dims bound, the shape-computing subgraph (Shape -> Gather -> Range, position
        // ids, masks) is computed too (ShapeInferenceAnyOpset.h: onnx's data propagation and
        // onnxlens's symbolic propagation), so the shapes after it are known.
        const ShapeInferenceOutcome inference = inferShapesAnyOpset(copy);
        if (inference.skipped) result.assumptions.push_back("shape inference " + inference.message);
        ValueTypes types;
        types.addGraph(copy.graph());
        CostCounter counter;
        const std::map<std::string, ValueType> weights = weightsOf(copy.graph());
        std::set<std::string> countedWeights;
        // MatMulNBits and GatherBlockQuantized weights count as weights, not as the bytes that
        // pack them (a 4-bit weight is half a uint8).
        const auto packedWeights = packedWeightsOf(copy.graph(), [&](const std::string& name) {
            auto weight = weights.find(name);
            std::optional<std::uint64_t> stored;
            if (weight == weights.end() || weight->second.elementType != onnx::TensorProto::UINT8)
                return stored;
            if (auto n = numel(weight->second.dims)) stored = static_cast<std::uint64_t>(*n);
            return stored;
        });
        for (const auto& node : copy.graph().node()) {
            NodeCost cost;
            cost.name = profileNameOf(node);
            cost.opType = isDefaultDomain(node.domain()) ? node.op_type()
                                                         : node.domain() + "::" + node.op_type();
            cost.scope = scopeOfNodeName(node.name());
            counter.count(node, types, cost);
            countSubgraphs(node, types, counter, cost);
            if (!cost.shapesKnown) ++result.nodesWithUnknownShapes;
            // Model totals count each weight once, however many nodes read it, wherever it lives
            // (initializers and Constant nodes of the main graph and of subgraphs).
            CostFigures unique = cost.figures;
            unique.parameters = 0;
            unique.parameterBytes = 0;
            std::vector<std::string> reads;
            readsOf(node, reads);
            for (const auto& name : reads) {
                auto weight = weights.find(name);
                if (weight == weights.end() || !countedWeights.insert(name).second) continue;
                const ValueType& v = weight->second;
                auto n = numel(v.dims);
                const auto packed = packedWeights.find(name);
                const bool isPacked = packed != packedWeights.end();
                const auto parameters = isPacked ? packed->second.weights
                                        : n      ? static_cast<std::uint64_t>(*n)
                                                 : 0;
                const auto bytes = n ? static_cast<std::uint64_t>(
                                           *n * static_cast<double>(elementTypeSize(v.elementType)))
                                     : 0;
                unique.parameters += parameters;
                unique.parameterBytes += bytes;
                auto& byType =
                    result.parametersByType[isPacked ? packedWeightsTypeName(packed->second.bits)
                                                     : elementTypeName(v.elementType)];
                byType.parameters += parameters;
                byType.parameterBytes += bytes;
            }
            result.total += unique;
            for (std::string scope = cost.scope; !scope.empty(); scope = scopeOfNodeName(scope))
                result.scopes[scope] += cost.figures;
            result.nodes.push_back(std::move(cost));
        }
        if (result.nodesWithUnknownShapes > 0)
            result.assumptions.push_back(
                std::to_string(result.nodesWithUnknownShapes) +
                " node(s) have unknown shapes: the totals are lower bounds (at least)");
        computePeakActivations(copy.graph(), types, result);
    } catch (const std::exception& e) {
        return makeError("cost model", e.what());
    }
    return result;
}

}  // namespace onnxlens
