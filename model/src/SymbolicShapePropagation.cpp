#include "onnxlens/model/SymbolicShapePropagation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/SymbolicExpr.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

using Dim = std::optional<SymbolicExpr>;  // nullopt: unknown
using Dims = std::vector<Dim>;

// The longest shape value followed (a shape has a few dims; a Range feeding a Gather has more).
constexpr std::size_t kMaxValueElements = 64;
// Ends of Slice at or beyond this mean "to the end" (exporters write INT64_MAX or INT32_MAX).
constexpr std::int64_t kSliceToEnd = std::int64_t{1} << 30;

// The value of a small integer tensor of rank 0 or 1, element by element.
struct Value {
    bool scalar = false;
    Dims elements;
};

bool isGeneratedName(const std::string& name) {
    if (name.rfind("unk__", 0) != 0 || name.size() == 5) return false;
    for (std::size_t i = 5; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return false;
    return true;
}

Dim constantDim(std::int64_t v) { return SymbolicExpr::constant(v); }
std::optional<std::int64_t> constantOf(const Dim& d) {
    return d ? d->constantValue() : std::nullopt;
}

void setDim(onnx::TensorShapeProto_Dimension& d, const Dim& value) {
    d.Clear();
    if (!value) return;
    if (auto c = value->constantValue())
        d.set_dim_value(*c);
    else
        d.set_dim_param(value->toString());
}

bool isFloatType(int elemType) {
    return elemType == onnx::TensorProto::FLOAT || elemType == onnx::TensorProto::DOUBLE ||
           elemType == onnx::TensorProto::FLOAT16 || elemType == onnx::TensorProto::BFLOAT16;
}

// The elements of a rank-0/1 tensor of at most kMaxValueElements integers (floats when integral).
std::optional<Value> tensorValue(const onnx::TensorProto& t) {
    if (t.dims_size() > 1) return std::nullopt;
    Value v;
    v.scalar = t.dims_size() == 0;
    const bool read = visitSmallTensor(t, kMaxValueElements, [&v](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>) {
            if (!std::isfinite(x) || std::fabs(x) > 9.0e15 || std::floor(x) != x) {
                v.elements.emplace_back();
                return;
            }
        }
        v.elements.push_back(constantDim(static_cast<std::int64_t>(x)));
    });
    if (!read) return std::nullopt;
    return v;
}

std::optional<Value> constantNodeValue(const onnx::NodeProto& node) {
    for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.has_t()) return tensorValue(a.t());
        if (a.name() == "value_int") return Value{true, {constantDim(a.i())}};
        if (a.name() == "value_ints" && a.ints_size() <= static_cast<int>(kMaxValueElements)) {
            Value v;
            for (auto x : a.ints()) v.elements.push_back(constantDim(x));
            return v;
        }
    }
    return std::nullopt;
}

// Declared output symbols and the expressions they were found to be ("total_sequence" for a
// present key's dim computed as past_sequence + sequence).
using Aliases = std::map<std::string, SymbolicExpr>;

// What a graph sees: its own values, then the graphs around it.
class Scope {
  public:
    Scope(const Scope* outer, const GeneratedSymbols& generated, const Aliases& aliases)
        : outer_(outer), generated_(generated), aliases_(aliases) {}

    void addGraph(const onnx::GraphProto& graph) {
        for (const auto& t : graph.initializer()) {
            Dims dims;
            for (auto d : t.dims()) dims.push_back(constantDim(d));
            shapes_[t.name()] = dims;
            elemTypes_[t.name()] = t.data_type();
            if (auto v = tensorValue(t)) values_[t.name()] = *v;
        }
        for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()})
            for (const auto& info : *list)
                if (!shapes_.count(info.name())) inferred_[info.name()] = &info.type();
    }

    std::optional<Dims> shape(const std::string& name) const {
        if (name.empty()) return std::nullopt;
        if (auto it = shapes_.find(name); it != shapes_.end()) return it->second;
        if (auto it = inferred_.find(name); it != inferred_.end()) return dimsOf(it->second);
        return outer_ ? outer_->shape(name) : std::nullopt;
    }
    const onnx::TypeProto* inferredType(const std::string& name) const {
        auto it = inferred_.find(name);
        return it == inferred_.end() ? nullptr : it->second;
    }
    // onnx's inferred dims only (what a hint is compared against).
    std::optional<Dims> inferredShape(const std::string& name) const {
        if (auto it = inferred_.find(name); it != inferred_.end()) return dimsOf(it->second);
        return std::nullopt;
    }
    int elemType(const std::string& name) const {
        if (auto it = elemTypes_.find(name); it != elemTypes_.end()) return it->second;
        if (auto it = inferred_.find(name); it != inferred_.end())
            return it->second->has_tensor_type() ? it->second->tensor_type().elem_type() : 0;
        return outer_ ? outer_->elemType(name) : 0;
    }
    const Value* value(const std::string& name) const {
        if (name.empty()) return nullptr;
        if (auto it = values_.find(name); it != values_.end()) return &it->second;
        return outer_ ? outer_->value(name) : nullptr;
    }
    void setValue(const std::string& name, Value v) { values_[name] = std::move(v); }
    void setShape(const std::string& name, Dims d) { shapes_[name] = std::move(d); }
    void setElemType(const std::string& name, int t) { elemTypes_[name] = t; }

  private:
    std::optional<Dims> dimsOf(const onnx::TypeProto* type) const {
        if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
            return std::nullopt;
        Dims dims;
        for (const auto& d : type->tensor_type().shape().dim()) {
            if (d.has_dim_value() && d.dim_value() >= 0)
                dims.push_back(constantDim(d.dim_value()));
            else if (auto alias = aliases_.find(d.dim_param()); alias != aliases_.end())
                dims.push_back(alias->second);
            else if (d.has_dim_param() && !d.dim_param().empty() &&
                     !generated_.isGenerated(d.dim_param()))
                dims.push_back(SymbolicExpr::parse(d.dim_param()));
            else
                dims.emplace_back();
        }
        return dims;
    }

    const Scope* outer_;
    const GeneratedSymbols& generated_;
    const Aliases& aliases_;
    std::unordered_map<std::string, const onnx::TypeProto*> inferred_;
    std::unordered_map<std::string, Dims> shapes_;
    std::unordered_map<std::string, int> elemTypes_;
    std::unordered_map<std::string, Value> values_;
};

Dim binary(const std::string& op, const Dim& a, const Dim& b, bool floating) {
    if (!a || !b) {
        // x * 0 is 0 whatever x is.
        if (op == "Mul" && ((a && constantOf(a) == 0) || (b && constantOf(b) == 0)))
            return constantDim(0);
        return std::nullopt;
    }
    if (op == "Add") return SymbolicExpr::add(*a, *b);
    if (op == "Sub") return SymbolicExpr::sub(*a, *b);
    if (op == "Mul") return SymbolicExpr::mul(*a, *b);
    if (op == "Div") {
        const auto ca = a->constantValue(), cb = b->constantValue();
        if (cb == 0) return std::nullopt;
        if (ca && cb) {
            if (*ca % *cb == 0) return constantDim(*ca / *cb);
            if (floating) return std::nullopt;
            // Integer Div truncates toward zero.
            if (*cb == -1) return std::nullopt;
            return constantDim(*ca / *cb);
        }
        if (auto exact = SymbolicExpr::exactDiv(*a, *b)) return exact;
        if (!floating && cb && *cb > 0) return SymbolicExpr::floorDiv(*a, *cb);
        return std::nullopt;
    }
    if (op == "Max" || op == "Min") {
        if (*a == *b) return a;
        const auto ca = a->constantValue(), cb = b->constantValue();
        if (ca && cb) return constantDim(op == "Max" ? std::max(*ca, *cb) : std::min(*ca, *cb));
        return std::nullopt;
    }
    if (op == "Equal") {
        if (*a == *b) return constantDim(1);
        auto difference = SymbolicExpr::sub(*a, *b);
        if (difference && difference->isConstant()) return constantDim(0);  // a nonzero constant
        // A dim (>= 0) never equals a negative constant (-1 in torch's Expand pattern).
        const auto ca = a->constantValue(), cb = b->constantValue();
        if ((ca && *ca < 0 && b->nonNegative()) || (cb && *cb < 0 && a->nonNegative()))
            return constantDim(0);
        return std::nullopt;
    }
    if (op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual") {
        const auto ca = a->constantValue(), cb = b->constantValue();
        if (!ca || !cb) return std::nullopt;
        const bool r = op == "Less"          ? *ca < *cb
                       : op == "Greater"     ? *ca > *cb
                       : op == "LessOrEqual" ? *ca <= *cb
                                             : *ca >= *cb;
        return constantDim(r ? 1 : 0);
    }
    if (op == "And" || op == "Or") {
        const auto ca = a->constantValue(), cb = b->constantValue();
        if (!ca || !cb) return std::nullopt;
        const bool r = op == "And" ? (*ca != 0 && *cb != 0) : (*ca != 0 || *cb != 0);
        return constantDim(r ? 1 : 0);
    }
    return std::nullopt;
}

// Numpy broadcasting of rank-0/1 values: lengths equal or 1.
std::optional<std::size_t> broadcastLength(const std::vector<const Value*>& values) {
    std::size_t length = 1;
    for (const auto* v : values) {
        const std::size_t n = v->elements.size();
        if (n == 1 || n == length) continue;
        if (length != 1) return std::nullopt;
        length = n;
    }
    return length;
}

const Dim& elementAt(const Value& v, std::size_t i) {
    return v.elements.size() == 1 ? v.elements[0] : v.elements[i];
}

std::optional<std::int64_t> normalizedIndex(std::int64_t i, std::size_t n) {
    const auto size = static_cast<std::int64_t>(n);
    if (i < -size || i >= size) return std::nullopt;
    return i < 0 ? i + size : i;
}

// Constant integers of a value (every element known), e.g. axes or steps.
std::optional<std::vector<std::int64_t>> constants(const Value* v) {
    if (!v) return std::nullopt;
    std::vector<std::int64_t> out;
    for (const auto& e : v->elements) {
        auto c = constantOf(e);
        if (!c) return std::nullopt;
        out.push_back(*c);
    }
    return out;
}

// One Slice axis: [start, end) by step over dim `d` (see the header for the assumptions).
Dim sliceLength(const Dim& d, const Dim& start, const Dim& end, std::int64_t step) {
    if (step == 0) return std::nullopt;
    const auto cd = constantOf(d), cs = constantOf(start), ce = constantOf(end);
    if (cd && cs && ce) {
        // The spec's clamping, on numbers.
        const std::int64_t n = *cd;
        std::int64_t b = *cs < 0 ? *cs + n : *cs, f = *ce < 0 ? *ce + n : *ce;
        std::int64_t span = 0;
        if (step > 0) {
            b = std::clamp<std::int64_t>(b, 0, n);
            f = std::clamp<std::int64_t>(f, 0, n);
            span = f - b;
        } else {
            b = std::clamp<std::int64_t>(b, 0, n - 1);
            f = std::clamp<std::int64_t>(f, -1, n - 1);
            span = b - f;
        }
        if (span <= 0) return constantDim(0);
        const std::int64_t absStep = step > 0 ? step : -step;
        return constantDim(span / absStep + (span % absStep != 0 ? 1 : 0));
    }
    if (!d) return std::nullopt;
    if (step < 0) {
        // The whole axis reversed: x[::-k].
        if (step == std::numeric_limits<std::int64_t>::min() || !cs || !ce ||
            !(*cs == -1 || *cs >= kSliceToEnd) || *ce > -kSliceToEnd)
            return std::nullopt;
        auto rounded = SymbolicExpr::add(*d, SymbolicExpr::constant(-step - 1));
        return rounded ? SymbolicExpr::floorDiv(*rounded, -step) : std::nullopt;
    }
    Dim s, e;
    if (cs) {
        if (*cs >= 0)
            s = start;  // assumed <= d
        else
            s = SymbolicExpr::add(*d, *start);  // d + start, assumed >= 0
    } else {
        s = start;
    }
    if (ce) {
        if (*ce >= kSliceToEnd)
            e = d;
        else if (*ce < 0 && *ce > -kSliceToEnd)
            e = SymbolicExpr::add(*d, *end);
        else
            return std::nullopt;  // a constant end on a symbolic dim: min(end, d)
    } else {
        e = end;
    }
    if (!s || !e) return std::nullopt;
    auto span = SymbolicExpr::sub(*e, *s);
    if (!span) return std::nullopt;
    if (auto c = span->constantValue(); c && *c < 0) return std::nullopt;
    if (step == 1) return span;
    auto rounded = SymbolicExpr::add(*span, SymbolicExpr::constant(step - 1));
    return rounded ? SymbolicExpr::floorDiv(*rounded, step) : std::nullopt;
}

const std::set<std::string>& broadcastOps() {
    static const std::set<std::string> ops{"Add",  "Sub",     "Mul",         "Div",
                                           "Pow",  "Mod",     "Where",       "Equal",
                                           "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                           "And",  "Or",      "Xor",         "Max",
                                           "Min",  "Sum",     "Mean",        "BitShift"};
    return ops;
}

// Numpy broadcasting of dims: a dim is known when the inputs prove it (1 against anything, equal
// expressions, a constant above 1 against an unknown); nullopt when the shapes cannot broadcast.
std::optional<Dims> broadcastShapes(const std::vector<Dims>& inputs) {
    std::size_t rank = 0;
    for (const auto& d : inputs) rank = std::max(rank, d.size());
    Dims out(rank, constantDim(1));
    std::vector<bool> unknown(rank, false);
    for (const auto& dims : inputs) {
        const std::size_t offset = rank - dims.size();
        for (std::size_t k = 0; k < dims.size(); ++k) {
            Dim& o = out[offset + k];
            const Dim& d = dims[k];
            const auto cd = constantOf(d), co = constantOf(o);
            if (cd == 1) continue;
            if (!d) {
                // Unknown: the result is the other side's when that is a constant above 1.
                if (!(co && *co > 1)) unknown[offset + k] = true;
                continue;
            }
            if (co == 1) {
                o = d;
            } else if (o && *o == *d) {
                // same
            } else if (co && cd) {
                return std::nullopt;  // two different constants, neither 1
            } else {
                unknown[offset + k] = true;
            }
        }
    }
    for (std::size_t k = 0; k < rank; ++k) {
        const auto c = constantOf(out[k]);
        // A proven constant above 1 stands; anything else meeting an unknown is unknown.
        if (unknown[k] && !(c && *c > 1)) out[k] = std::nullopt;
    }
    return out;
}

class Propagator {
  public:
    Propagator(const GeneratedSymbols& generated, int opset,
               std::map<std::string, onnx::TypeProto>& hints)
        : generated_(generated), opset_(opset), hints_(hints) {}

    void run(const onnx::GraphProto& g) {
        Scope scope(nullptr, generated_, aliases_);
        graph(g, scope);
    }

    void graph(const onnx::GraphProto& g, Scope& scope) {
        scope.addGraph(g);
        for (const auto& node : g.node()) {
            try {
                visit(node, scope);
            } catch (const std::exception&) {
                // A node the pass cannot read (a hostile attribute) only stays without a hint.
            }
        }
    }

  private:
    void visit(const onnx::NodeProto& node, Scope& scope) {
        if (!isDefaultDomain(node)) return;
        const std::string& op = node.op_type();
        if (op == "If") return visitIf(node, scope);
        if (op == "Loop" || op == "Scan") {
            for (const auto& a : node.attribute())
                if (a.has_g()) {
                    Scope body(&scope, generated_, aliases_);
                    graph(a.g(), body);
                }
            return;
        }
        if (node.output_size() == 0 || node.output(0).empty()) return;
        if (auto v = value(node, scope)) scope.setValue(node.output(0), std::move(*v));
        if (auto dims = shape(node, scope))
            offer(node.output(0), *dims, outputElemType(node, scope), scope);
    }

    int outputElemType(const onnx::NodeProto& node, const Scope& scope) const {
        int t = scope.elemType(node.output(0));
        if (t != 0) return t;
        const std::string& op = node.op_type();
        if (op == "ConstantOfShape") {
            const auto* a = findAttribute(node, "value");
            return a && a->has_t() ? a->t().data_type()
                                   : static_cast<int>(onnx::TensorProto::FLOAT);
        }
        if (node.input_size() > 0) return scope.elemType(node.input(0));
        return 0;
    }

    // Records `mine` for `name` where it knows more than onnx's inference.
    void offer(const std::string& name, const Dims& mine, int elemType, Scope& scope) {
        const auto inferred = scope.inferredShape(name);
        Dims merged = mine;
        bool improved = !inferred.has_value();
        if (inferred) {
            if (inferred->size() != mine.size()) return;  // disagreement: keep onnx's
            const auto& raw = scope.inferredType(name)->tensor_type().shape();
            for (std::size_t k = 0; k < mine.size(); ++k) {
                if ((*inferred)[k]) {
                    merged[k] = (*inferred)[k];
                    // A declared output symbol ("total_sequence") that the graph computes as an
                    // expression of the input symbols: later reads of it mean that expression.
                    const auto& d = raw.dim(static_cast<int>(k));
                    if (mine[k] && !mine[k]->isConstant() && !(*mine[k] == *(*inferred)[k]) &&
                        d.has_dim_param() && !generated_.isGenerated(d.dim_param()) &&
                        !generated_.isInputSymbol(d.dim_param()) &&
                        !aliases_.count(d.dim_param())) {
                        aliases_[d.dim_param()] = *mine[k];
                        merged[k] = mine[k];
                    }
                } else if (mine[k]) {
                    improved = true;
                }
            }
        }
        scope.setShape(name, merged);
        if (!improved || elemType == 0) return;
        onnx::TypeProto type;
        auto* tensor = type.mutable_tensor_type();
        tensor->set_elem_type(elemType);
        auto* shape = tensor->mutable_shape();
        for (const auto& d : merged) setDim(*shape->add_dim(), d);
        hints_[name] = std::move(type);
    }

    // ---- values -------------------------------------------------------------------------------

    std::optional<Value> value(const onnx::NodeProto& node, const Scope& scope) const {
        const std::string& op = node.op_type();
        auto in = [&](int i) -> const Value* {
            return i < node.input_size() ? scope.value(node.input(i)) : nullptr;
        };
        if (op == "Constant") return constantNodeValue(node);
        if (op == "Identity") return in(0) ? std::optional<Value>(*in(0)) : std::nullopt;
        if (op == "Shape") {
            auto dims = scope.shape(node.input(0));
            if (!dims) return std::nullopt;
            const auto rank = static_cast<std::int64_t>(dims->size());
            std::int64_t start = intAttribute(node, "start", 0),
                         end = intAttribute(node, "end", rank);
            if (start < 0) start += rank;
            if (end < 0) end += rank;
            start = std::clamp<std::int64_t>(start, 0, rank);
            end = std::clamp<std::int64_t>(end, 0, rank);
            Value v;
            for (std::int64_t k = start; k < end; ++k) v.elements.push_back((*dims)[k]);
            if (v.elements.size() > kMaxValueElements) return std::nullopt;
            return v;
        }
        if (op == "Size") {
            auto dims = scope.shape(node.input(0));
            if (!dims) return std::nullopt;
            Dim product = constantDim(1);
            for (const auto& d : *dims) product = binary("Mul", product, d, false);
            return Value{true, {product}};
        }
        if (op == "Cast") {
            const auto* x = in(0);
            if (!x) return std::nullopt;
            const auto to = intAttribute(node, "to", 0);
            if (to == onnx::TensorProto::BOOL) {
                Value v{x->scalar, {}};
                for (const auto& e : x->elements) {
                    auto c = constantOf(e);
                    v.elements.push_back(c ? constantDim(*c != 0) : Dim{});
                }
                return v;
            }
            return *x;
        }
        if (op == "Gather") {
            const auto* data = in(0);
            const auto* indices = in(1);
            if (!data || !indices || data->scalar || intAttribute(node, "axis", 0) != 0)
                return std::nullopt;
            auto picks = constants(indices);
            if (!picks) return std::nullopt;
            Value v{indices->scalar, {}};
            for (auto i : *picks) {
                auto k = normalizedIndex(i, data->elements.size());
                if (!k) return std::nullopt;
                v.elements.push_back(data->elements[static_cast<std::size_t>(*k)]);
            }
            return v;
        }
        if (op == "Unsqueeze") {
            const auto* x = in(0);
            if (!x || !x->scalar) return std::nullopt;
            const auto axes = opset_ >= 13 ? constants(in(1)) : intsAttribute(node, "axes");
            if (!axes || axes->size() != 1) return std::nullopt;
            return Value{false, x->elements};
        }
        if (op == "Squeeze") {
            const auto* x = in(0);
            if (!x || x->scalar || x->elements.size() != 1) return std::nullopt;
            return Value{true, x->elements};
        }
        if (op == "Reshape" || op == "Flatten") {
            const auto* x = in(0);
            if (!x) return std::nullopt;
            if (op == "Flatten") return std::nullopt;
            auto target = constants(in(1));
            if (!target) return std::nullopt;
            if (target->empty()) {
                if (x->elements.size() != 1) return std::nullopt;
                return Value{true, x->elements};
            }
            if (target->size() == 1) return Value{false, x->elements};
            return std::nullopt;
        }
        if (op == "Concat") {
            Value v;
            for (int i = 0; i < node.input_size(); ++i) {
                const auto* x = in(i);
                if (!x || x->scalar) return std::nullopt;
                v.elements.insert(v.elements.end(), x->elements.begin(), x->elements.end());
            }
            if (v.elements.size() > kMaxValueElements) return std::nullopt;
            return v;
        }
        if (op == "Slice") return sliceValue(node, scope);
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal" ||
            op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
            op == "And" || op == "Or" || ((op == "Max" || op == "Min") && node.input_size() == 2)) {
            const auto* a = in(0);
            const auto* b = in(1);
            if (!a || !b) return std::nullopt;
            auto n = broadcastLength({a, b});
            if (!n) return std::nullopt;
            const bool floating = isFloatType(scope.elemType(node.input(0)));
            Value v{a->scalar && b->scalar, {}};
            for (std::size_t i = 0; i < *n; ++i)
                v.elements.push_back(binary(op, elementAt(*a, i), elementAt(*b, i), floating));
            return v;
        }
        if (op == "Neg") {
            const auto* x = in(0);
            if (!x) return std::nullopt;
            Value v{x->scalar, {}};
            for (const auto& e : x->elements)
                v.elements.push_back(binary("Sub", constantDim(0), e, false));
            return v;
        }
        if (op == "Not") {
            const auto* x = in(0);
            if (!x) return std::nullopt;
            Value v{x->scalar, {}};
            for (const auto& e : x->elements) {
                auto c = constantOf(e);
                v.elements.push_back(c ? constantDim(*c == 0) : Dim{});
            }
            return v;
        }
        if (op == "Where") {
            const auto *c = in(0), *x = in(1), *y = in(2);
            if (!c || !x || !y) return std::nullopt;
            auto n = broadcastLength({c, x, y});
            if (!n) return std::nullopt;
            Value v{c->scalar && x->scalar && y->scalar, {}};
            for (std::size_t i = 0; i < *n; ++i) {
                auto pick = constantOf(elementAt(*c, i));
                const Dim& xe = elementAt(*x, i);
                const Dim& ye = elementAt(*y, i);
                if (pick)
                    v.elements.push_back(*pick != 0 ? xe : ye);
                else
                    v.elements.push_back(xe && ye && *xe == *ye ? xe : Dim{});
            }
            return v;
        }
        if (op == "ConstantOfShape") {
            auto shape = constants(in(0));
            if (!shape || shape->size() != 1 || (*shape)[0] < 0 ||
                static_cast<std::uint64_t>((*shape)[0]) > kMaxValueElements)
                return std::nullopt;
            Dim fill = constantDim(0);
            if (const auto* a = findAttribute(node, "value"); a && a->has_t()) {
                auto v = tensorValue(a->t());
                if (!v || v->elements.size() != 1) return std::nullopt;
                fill = v->elements[0];
            }
            return Value{false, Dims(static_cast<std::size_t>((*shape)[0]), fill)};
        }
        if (op == "Range") {
            auto start = constants(in(0)), limit = constants(in(1)), delta = constants(in(2));
            if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
                delta->size() != 1 || (*delta)[0] == 0)
                return std::nullopt;
            const double count =
                std::ceil((double((*limit)[0]) - double((*start)[0])) / double((*delta)[0]));
            if (count > double(kMaxValueElements)) return std::nullopt;
            Value v;
            for (std::int64_t k = 0; k < static_cast<std::int64_t>(std::max(0.0, count)); ++k)
                v.elements.push_back(constantDim((*start)[0] + k * (*delta)[0]));
            return v;
        }
        return std::nullopt;
    }

    struct SliceArgs {
        std::vector<Dim> starts, ends;
        std::vector<std::int64_t> axes, steps;
    };

    std::optional<SliceArgs> sliceArgs(const onnx::NodeProto& node, const Scope& scope,
                                       std::size_t rank) const {
        SliceArgs args;
        if (opset_ < 10) {
            for (auto s : intsAttribute(node, "starts")) args.starts.push_back(constantDim(s));
            for (auto e : intsAttribute(node, "ends")) args.ends.push_back(constantDim(e));
            args.axes = intsAttribute(node, "axes");
        } else {
            const auto* starts = node.input_size() > 1 ? scope.value(node.input(1)) : nullptr;
            const auto* ends = node.input_size() > 2 ? scope.value(node.input(2)) : nullptr;
            if (!starts || !ends) return std::nullopt;
            args.starts = starts->elements;
            args.ends = ends->elements;
            if (node.input_size() > 3 && !node.input(3).empty()) {
                auto axes = constants(scope.value(node.input(3)));
                if (!axes) return std::nullopt;
                args.axes = *axes;
            }
            if (node.input_size() > 4 && !node.input(4).empty()) {
                auto steps = constants(scope.value(node.input(4)));
                if (!steps) return std::nullopt;
                args.steps = *steps;
            }
        }
        if (args.ends.size() != args.starts.size()) return std::nullopt;
        if (args.axes.empty())
            for (std::size_t k = 0; k < args.starts.size(); ++k)
                args.axes.push_back(static_cast<std::int64_t>(k));
        if (args.steps.empty()) args.steps.assign(args.starts.size(), 1);
        if (args.axes.size() != args.starts.size() || args.steps.size() != args.starts.size())
            return std::nullopt;
        for (auto& a : args.axes) {
            auto axis = normalizedIndex(a, rank);
            if (!axis) return std::nullopt;
            a = *axis;
        }
        return args;
    }

    std::optional<Value> sliceValue(const onnx::NodeProto& node, const Scope& scope) const {
        const auto* data = scope.value(node.input(0));
        if (!data || data->scalar) return std::nullopt;
        auto args = sliceArgs(node, scope, 1);
        if (!args || args->axes.size() != 1) return std::nullopt;
        const auto n = static_cast<std::int64_t>(data->elements.size());
        auto s = constantOf(args->starts[0]), e = constantOf(args->ends[0]);
        const std::int64_t step = args->steps[0];
        if (!s || !e || step == 0) return std::nullopt;
        std::int64_t start = *s < 0 ? *s + n : *s, end = *e < 0 ? *e + n : *e;
        Value v;
        if (step > 0) {
            start = std::clamp<std::int64_t>(start, 0, n);
            end = std::clamp<std::int64_t>(end, 0, n);
            for (std::int64_t k = start; k < end; k += step)
                v.elements.push_back(data->elements[static_cast<std::size_t>(k)]);
        } else {
            start = std::clamp<std::int64_t>(start, -1, n - 1);
            end = std::clamp<std::int64_t>(end, -1, n - 1);
            for (std::int64_t k = start; k > end; k += step)
                v.elements.push_back(data->elements[static_cast<std::size_t>(k)]);
        }
        return v;
    }

    // ---- shapes -------------------------------------------------------------------------------

    std::optional<Dims> shape(const onnx::NodeProto& node, const Scope& scope) const {
        const std::string& op = node.op_type();
        if (broadcastOps().count(op)) {
            std::vector<Dims> inputs;
            for (const auto& name : node.input()) {
                auto dims = scope.shape(name);
                if (name.empty() || !dims) return std::nullopt;
                inputs.push_back(std::move(*dims));
            }
            return broadcastShapes(inputs);
        }
        if (op == "Concat") {
            std::vector<Dims> inputs;
            for (const auto& name : node.input()) {
                auto dims = scope.shape(name);
                if (!dims || (!inputs.empty() && dims->size() != inputs[0].size()))
                    return std::nullopt;
                inputs.push_back(std::move(*dims));
            }
            if (inputs.empty()) return std::nullopt;
            auto axis = normalizedIndex(intAttribute(node, "axis", 0), inputs[0].size());
            if (!axis) return std::nullopt;
            Dims out = inputs[0];
            for (std::size_t i = 1; i < inputs.size(); ++i)
                for (std::size_t k = 0; k < out.size(); ++k) {
                    if (k == static_cast<std::size_t>(*axis))
                        out[k] = binary("Add", out[k], inputs[i][k], false);
                    else if (!out[k])
                        out[k] = inputs[i][k];
                }
            return out;
        }
        auto valueOf = [&](int i) -> const Value* {
            return i < node.input_size() ? scope.value(node.input(i)) : nullptr;
        };
        if (op == "Reshape" && opset_ >= 5) {
            const auto* target = valueOf(1);
            if (!target || target->scalar) return std::nullopt;
            const auto data = scope.shape(node.input(0));
            const bool allowZero = intAttribute(node, "allowzero", 0) != 0;
            Dims out;
            std::optional<std::size_t> inferAt;
            for (std::size_t k = 0; k < target->elements.size(); ++k) {
                const Dim& e = target->elements[k];
                const auto c = constantOf(e);
                if (c && *c == 0 && !allowZero) {
                    out.push_back(data && k < data->size() ? (*data)[k] : Dim{});
                } else if (c && *c == -1) {
                    if (inferAt) return std::nullopt;
                    inferAt = k;
                    out.emplace_back();
                } else if (c && *c < 0) {
                    return std::nullopt;
                } else {
                    out.push_back(e);
                }
            }
            if (inferAt && data) {
                Dim total = constantDim(1), rest = constantDim(1);
                for (const auto& d : *data) total = binary("Mul", total, d, false);
                for (std::size_t k = 0; k < out.size(); ++k)
                    if (k != *inferAt) rest = binary("Mul", rest, out[k], false);
                if (total && rest && !rest->terms().empty())
                    out[*inferAt] = SymbolicExpr::exactDiv(*total, *rest);
            }
            return out;
        }
        if (op == "Expand") {
            const auto* target = valueOf(1);
            const auto data = scope.shape(node.input(0));
            if (!target || target->scalar || !data) return std::nullopt;
            const std::size_t rank = std::max(data->size(), target->elements.size());
            Dims out(rank);
            for (std::size_t k = 0; k < rank; ++k) {
                const std::size_t dk = k + data->size(), tk = k + target->elements.size();
                const Dim a = dk >= rank ? (*data)[dk - rank] : constantDim(1);
                const Dim b = tk >= rank ? target->elements[tk - rank] : constantDim(1);
                const auto ca = constantOf(a), cb = constantOf(b);
                if ((ca && *ca < 0) || (cb && *cb < 0)) return std::nullopt;
                if (ca == 1)
                    out[k] = b;
                else if (cb == 1)
                    out[k] = a;
                else if (a && b && *a == *b)
                    out[k] = a;
                else if (ca && cb)
                    return std::nullopt;  // not broadcastable
                else
                    out[k] = std::nullopt;
            }
            return out;
        }
        if (op == "ConstantOfShape") {
            const auto* target = valueOf(0);
            if (!target || target->scalar) return std::nullopt;
            for (const auto& e : target->elements)
                if (auto c = constantOf(e); c && *c < 0) return std::nullopt;
            return target->elements;
        }
        if (op == "Tile") {
            const auto* repeats = valueOf(1);
            const auto data = scope.shape(node.input(0));
            if (!repeats || !data || repeats->elements.size() != data->size()) return std::nullopt;
            Dims out;
            for (std::size_t k = 0; k < data->size(); ++k)
                out.push_back(binary("Mul", (*data)[k], repeats->elements[k], false));
            return out;
        }
        if (op == "Range") {
            const auto *start = valueOf(0), *limit = valueOf(1), *delta = valueOf(2);
            if (!start || !limit || !delta || start->elements.size() != 1 ||
                limit->elements.size() != 1 || delta->elements.size() != 1)
                return std::nullopt;
            const auto step = constantOf(delta->elements[0]);
            const Dim& s = start->elements[0];
            const Dim& l = limit->elements[0];
            if (!step || *step == 0 || !s || !l) return Dims{Dim{}};
            auto span = *step > 0 ? SymbolicExpr::sub(*l, *s) : SymbolicExpr::sub(*s, *l);
            if (!span) return Dims{Dim{}};
            const std::int64_t absStep = *step > 0 ? *step : -*step;
            if (auto c = span->constantValue())
                return Dims{constantDim(*c <= 0 ? 0 : (*c + absStep - 1) / absStep)};
            if (absStep == 1) return Dims{span};
            auto rounded = SymbolicExpr::add(*span, SymbolicExpr::constant(absStep - 1));
            return Dims{rounded ? SymbolicExpr::floorDiv(*rounded, absStep) : std::nullopt};
        }
        if (op == "Slice") {
            const auto data = scope.shape(node.input(0));
            if (!data) return std::nullopt;
            auto args = sliceArgs(node, scope, data->size());
            if (!args) return std::nullopt;
            Dims out = *data;
            for (std::size_t k = 0; k < args->axes.size(); ++k) {
                const auto axis = static_cast<std::size_t>(args->axes[k]);
                out[axis] =
                    sliceLength((*data)[axis], args->starts[k], args->ends[k], args->steps[k]);
            }
            return out;
        }
        return std::nullopt;
    }

    // If: each branch in its own scope; the output's value and dims are what the branches
    // agree on.
    void visitIf(const onnx::NodeProto& node, Scope& scope) {
        std::vector<const onnx::GraphProto*> branches;
        for (const auto& a : node.attribute())
            if ((a.name() == "then_branch" || a.name() == "else_branch") && a.has_g())
                branches.push_back(&a.g());
        std::vector<std::unique_ptr<Scope>> scopes;
        for (const auto* g : branches) {
            scopes.push_back(std::make_unique<Scope>(&scope, generated_, aliases_));
            graph(*g, *scopes.back());
        }
        if (branches.size() != 2) return;
        // A constant condition picks one branch.
        const auto* condition = scope.value(node.input(0));
        std::optional<std::size_t> only;
        if (condition && condition->elements.size() == 1)
            if (auto c = constantOf(condition->elements[0])) only = *c != 0 ? 0 : 1;
        for (int i = 0; i < node.output_size(); ++i) {
            const std::string& name = node.output(i);
            if (name.empty() || i >= branches[0]->output_size() || i >= branches[1]->output_size())
                continue;
            const std::string& thenName = branches[0]->output(i).name();
            const std::string& elseName = branches[1]->output(i).name();
            const Value* tv = scopes[0]->value(thenName);
            const Value* ev = scopes[1]->value(elseName);
            if (only) {
                if (const Value* v = *only == 0 ? tv : ev) scope.setValue(name, *v);
            } else if (tv && ev && tv->scalar == ev->scalar &&
                       tv->elements.size() == ev->elements.size()) {
                Value merged{tv->scalar, {}};
                for (std::size_t k = 0; k < tv->elements.size(); ++k) {
                    const auto& a = tv->elements[k];
                    const auto& b = ev->elements[k];
                    merged.elements.push_back(a && b && *a == *b ? a : Dim{});
                }
                scope.setValue(name, std::move(merged));
            }
            auto td = scopes[0]->shape(thenName);
            auto ed = scopes[1]->shape(elseName);
            std::optional<Dims> dims;
            if (only)
                dims = *only == 0 ? td : ed;
            else if (td && ed && td->size() == ed->size()) {
                dims = Dims{};
                for (std::size_t k = 0; k < td->size(); ++k) {
                    const auto& a = (*td)[k];
                    const auto& b = (*ed)[k];
                    dims->push_back(a && b && *a == *b ? a : Dim{});
                }
            }
            if (dims) {
                int elem = scope.elemType(name);
                if (elem == 0) elem = scopes[0]->elemType(thenName);
                offer(name, *dims, elem, scope);
            }
        }
    }

    const GeneratedSymbols& generated_;
    int opset_;
    std::map<std::string, onnx::TypeProto>& hints_;
    Aliases aliases_;
};

void collectDeclared(const onnx::GraphProto& graph, std::set<std::string>& declared,
                     std::set<std::string>& values) {
    for (const auto& info : graph.value_info()) values.insert(info.name());
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()})
        for (const auto& info : *list)
            if (info.type().has_tensor_type())
                for (const auto& d : info.type().tensor_type().shape().dim())
                    if (d.has_dim_param()) declared.insert(d.dim_param());
    for (const auto& node : graph.node())
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectDeclared(a.g(), declared, values);
            for (const auto& g : a.graphs()) collectDeclared(g, declared, values);
        }
}

bool complete(const onnx::TypeProto& type, const GeneratedSymbols& generated) {
    if (!type.has_tensor_type()) return type.value_case() != onnx::TypeProto::VALUE_NOT_SET;
    if (!type.tensor_type().has_shape()) return false;
    for (const auto& d : type.tensor_type().shape().dim()) {
        if (d.has_dim_value()) continue;
        if (d.has_dim_param() && !d.dim_param().empty() && !generated.isGenerated(d.dim_param()))
            continue;
        return false;
    }
    return true;
}

void applyToGraph(onnx::GraphProto& graph, const std::map<std::string, onnx::TypeProto>& hints,
                  const GeneratedSymbols& generated) {
    for (auto& node : *graph.mutable_node())
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g()) applyToGraph(*a.mutable_g(), hints, generated);
            for (auto& g : *a.mutable_graphs()) applyToGraph(g, hints, generated);
        }
    std::set<std::string> produced;
    for (const auto& node : graph.node())
        for (const auto& o : node.output())
            if (hints.count(o)) produced.insert(o);
    auto* infos = graph.mutable_value_info();
    for (int i = infos->size() - 1; i >= 0; --i) {
        auto* info = infos->Mutable(i);
        if (produced.count(info->name())) {
            infos->DeleteSubrange(i, 1);
        } else if (!complete(info->type(), generated)) {
            // What the model itself declares stays (less the made-up dims); what inference
            // wrote is dropped, to be inferred again.
            if (generated.declaresValue(info->name()) && info->type().has_tensor_type()) {
                auto* shape = info->mutable_type()->mutable_tensor_type()->mutable_shape();
                for (auto& d : *shape->mutable_dim())
                    if (d.has_dim_param() && generated.isGenerated(d.dim_param())) d.Clear();
            } else {
                infos->DeleteSubrange(i, 1);
            }
        }
    }
    for (auto& output : *graph.mutable_output()) {
        if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) {
            if (auto it = hints.find(output.name());
                it != hints.end() && produced.count(output.name())) {
                const int declared =
                    output.type().has_tensor_type() ? output.type().tensor_type().elem_type() : 0;
                *output.mutable_type() = it->second;
                if (declared != 0)
                    output.mutable_type()->mutable_tensor_type()->set_elem_type(declared);
                produced.erase(output.name());
            }
            continue;
        }
        auto* shape = output.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (auto& d : *shape->mutable_dim())
            if (d.has_dim_param() && generated.isGenerated(d.dim_param())) d.Clear();
        auto it = hints.find(output.name());
        if (it == hints.end() || !produced.count(output.name())) continue;
        produced.erase(output.name());
        const auto& hinted = it->second.tensor_type().shape();
        if (hinted.dim_size() != shape->dim_size()) continue;
        for (int k = 0; k < shape->dim_size(); ++k) {
            auto* d = shape->mutable_dim(k);
            if (!d->has_dim_value() && !d->has_dim_param()) *d = hinted.dim(k);
        }
    }
    for (const auto& name : produced) {
        auto* info = graph.add_value_info();
        info->set_name(name);
        *info->mutable_type() = hints.at(name);
    }
}

}  // namespace

GeneratedSymbols::GeneratedSymbols(const onnx::ModelProto& original) {
    collectDeclared(original.graph(), declared_, declaredValues_);
    for (const auto& input : original.graph().input())
        for (const auto& d : input.type().tensor_type().shape().dim())
            if (d.has_dim_param()) inputSymbols_.insert(d.dim_param());
}

bool GeneratedSymbols::isInputSymbol(const std::string& dimParam) const {
    return inputSymbols_.count(dimParam) > 0;
}

bool GeneratedSymbols::declaresValue(const std::string& name) const {
    return declaredValues_.count(name) > 0;
}

bool GeneratedSymbols::isGenerated(const std::string& dimParam) const {
    return isGeneratedName(dimParam) && !declared_.count(dimParam);
}

std::map<std::string, onnx::TypeProto> propagateSymbolicShapes(const onnx::ModelProto& inferred,
                                                               const GeneratedSymbols& generated) {
    std::map<std::string, onnx::TypeProto> hints;
    Propagator propagator(generated, defaultOpset(inferred), hints);
    propagator.run(inferred.graph());
    return hints;
}

void applySymbolicHints(onnx::ModelProto& model,
                        const std::map<std::string, onnx::TypeProto>& hints,
                        const GeneratedSymbols& generated) {
    applyToGraph(*model.mutable_graph(), hints, generated);
}

}  // namespace onnxlens
