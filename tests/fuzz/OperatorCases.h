#pragma once
// One-node models for every operator the engine registers, with attribute values and input
// shapes chosen to be hostile (0, -1, huge, empty and wrong-length lists, NaN, zero-size dims,
// rank 0 and rank 8). Shared by the structure-aware fuzz target (choices drawn from the fuzzer's
// bytes) and the deterministic sweep in tests/engine/HostileAttributesTest.cpp (choices
// enumerated). Every case must end in an error value or a result, never a crash.
#include <onnx/defs/schema.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "OperatorTemplates.h"
#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/ModelLoader.h"

namespace onnxlens::testing {

// Where the choices of one case come from: a fuzzer's bytes, or an enumeration.
class ChoiceSource {
  public:
    virtual ~ChoiceSource() = default;
    // A number in [0, bound); bound >= 1.
    virtual std::uint32_t pick(std::uint32_t bound) = 0;
};

// Reads choices from bytes; past the end every choice is 0 (the first, plain option).
class ByteChoices final : public ChoiceSource {
  public:
    ByteChoices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    std::uint32_t pick(std::uint32_t bound) override {
        if (bound <= 1) return 0;
        std::uint32_t v = 0;
        for (int i = 0; i < (bound > 256 ? 2 : 1); ++i)
            v = (v << 8) | (pos_ < size_ ? data_[pos_++] : 0);
        return v % bound;
    }

  private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

// The operators under test: every (domain, op, since-version) range the engine registers.
inline std::vector<engine::KernelRegistry::Entry> registeredOperators() {
    auto entries = engine::KernelRegistry::global().entries();
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        return std::tie(a.domain, a.opType, a.sinceVersion) <
               std::tie(b.domain, b.opType, b.sinceVersion);
    });
    return entries;
}

// The opset a case imports for its operator: the range's first version, raised to the onnx
// library's schema for that operator when the range starts before the operator existed.
inline int caseOpset(const engine::KernelRegistry::Entry& e) { return std::max(e.sinceVersion, 1); }

// The schema of an operator: onnx's, or onnxlens's for ONNX Runtime's operators (registered
// here first, so that the first case of a process reads the same schema as the others); ORT's
// default-domain extensions (LayerNormalization before opset 17, SimplifiedLayerNormalization)
// are kept under a placeholder domain.
inline const onnx::OpSchema* schemaOf(const engine::KernelRegistry::Entry& e) {
    registerMicrosoftOpSchemas();
    const std::string domain = e.domain.empty() ? onnx::ONNX_DOMAIN : e.domain;
    if (const auto* s = onnx::OpSchemaRegistry::Schema(e.opType, caseOpset(e), domain)) return s;
    if (!e.domain.empty()) return nullptr;
    return onnx::OpSchemaRegistry::Schema(e.opType, caseOpset(e), kOrtOnnxDomainPlaceholder);
}

// Values hostile to a kernel's arithmetic, per attribute type.
inline constexpr std::int64_t kHugeInt = std::int64_t{1} << 40;
inline const std::vector<std::int64_t>& hostileInts() {
    static const std::vector<std::int64_t> v{0,
                                             -1,
                                             1,
                                             2,
                                             3,
                                             kHugeInt,
                                             -kHugeInt,
                                             std::numeric_limits<std::int64_t>::max(),
                                             std::numeric_limits<std::int64_t>::min()};
    return v;
}
inline const std::vector<std::vector<std::int64_t>>& hostileIntLists() {
    static const std::vector<std::vector<std::int64_t>> v{
        {},
        {0},
        {0, 0},
        {-1, -1},
        {1, 1},
        {2, 2},
        {kHugeInt, kHugeInt},
        {0, 0, 0, 0},
        {-1, -1, -1, -1},
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {3, 0, -2},
        {std::numeric_limits<std::int64_t>::max()}};
    return v;
}
inline const std::vector<float>& hostileFloats() {
    static const std::vector<float> v{0.0f,
                                      -1.0f,
                                      1.0f,
                                      std::numeric_limits<float>::quiet_NaN(),
                                      std::numeric_limits<float>::infinity(),
                                      1e30f,
                                      -1e30f};
    return v;
}
inline const std::vector<std::vector<float>>& hostileFloatLists() {
    static const std::vector<std::vector<float>> v{
        {},
        {0.0f, 0.0f},
        {std::numeric_limits<float>::quiet_NaN()},
        {-1.0f, -1.0f, -1.0f, -1.0f},
        {1e30f, 1e30f, 1e30f, 1e30f, 1e30f},
        {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}};
    return v;
}
inline const std::vector<std::string>& hostileStrings() {
    static const std::vector<std::string> v{"", "bogus", "NOTSET", std::string(300, 'x')};
    return v;
}

// Input shapes: plain, zero-size, rank 0, rank 1, rank 2, rank 8, and one with a big dim.
inline const std::vector<engine::Shape>& hostileShapes() {
    static const std::vector<engine::Shape> v{
        {2, 3, 4, 5}, {0, 3, 4, 5}, {}, {3}, {2, 3}, {1, 1, 1, 1, 1, 1, 1, 2}, {1, 3, 1, 4096}};
    return v;
}

struct AttributeChoice {
    std::string name;
    onnx::AttributeProto::AttributeType type = onnx::AttributeProto::UNDEFINED;
    std::uint32_t valueIndex = 0;
};

struct CaseChoices {
    std::size_t operatorIndex = 0;
    // -1: the generic hostile shapes below; else one of the operator's valid input templates
    // (templatesOf), whose inputs replace `inputShapes` and whose attributes the hostile ones
    // override; `templateInputs` then changes one or more of its inputs (TemplatePerturbation).
    int templateIndex = -1;
    std::vector<std::uint32_t> templateInputs;
    std::vector<std::uint32_t> inputShapes;   // index into hostileShapes(), per input
    std::vector<AttributeChoice> attributes;  // set on the node, others left at their defaults
    bool inputsAsInitializers = false;  // constant inputs: the optimizer folds at compile time
    std::uint32_t valueSeed = 0;
};

inline std::uint32_t hostileValueCount(onnx::AttributeProto::AttributeType type) {
    switch (type) {
        case onnx::AttributeProto::INT:
            return static_cast<std::uint32_t>(hostileInts().size());
        case onnx::AttributeProto::INTS:
            return static_cast<std::uint32_t>(hostileIntLists().size());
        case onnx::AttributeProto::FLOAT:
            return static_cast<std::uint32_t>(hostileFloats().size());
        case onnx::AttributeProto::FLOATS:
            return static_cast<std::uint32_t>(hostileFloatLists().size());
        case onnx::AttributeProto::STRING:
            return static_cast<std::uint32_t>(hostileStrings().size());
        case onnx::AttributeProto::TENSOR:
            return 3;
        case onnx::AttributeProto::GRAPH:
            return 2;
        default:
            return 0;
    }
}

inline void setHostileAttribute(onnx::NodeProto& node, const AttributeChoice& choice) {
    auto* a = node.add_attribute();
    a->set_name(choice.name);
    a->set_type(choice.type);
    const std::uint32_t i = choice.valueIndex;
    switch (choice.type) {
        case onnx::AttributeProto::INT:
            a->set_i(hostileInts()[i % hostileInts().size()]);
            break;
        case onnx::AttributeProto::INTS:
            for (auto x : hostileIntLists()[i % hostileIntLists().size()]) a->add_ints(x);
            break;
        case onnx::AttributeProto::FLOAT:
            a->set_f(hostileFloats()[i % hostileFloats().size()]);
            break;
        case onnx::AttributeProto::FLOATS:
            for (auto x : hostileFloatLists()[i % hostileFloatLists().size()]) a->add_floats(x);
            break;
        case onnx::AttributeProto::STRING:
            a->set_s(hostileStrings()[i % hostileStrings().size()]);
            break;
        case onnx::AttributeProto::TENSOR: {
            auto* t = a->mutable_t();
            if (i % 3 == 0) {  // a float scalar
                t->set_data_type(onnx::TensorProto::FLOAT);
                t->add_float_data(1.0f);
            } else if (i % 3 == 1) {  // an empty int64 vector
                t->set_data_type(onnx::TensorProto::INT64);
                t->add_dims(0);
            } else {  // dims that claim more data than it holds
                t->set_data_type(onnx::TensorProto::FLOAT);
                t->add_dims(kHugeInt);
                t->add_float_data(0.0f);
            }
            break;
        }
        case onnx::AttributeProto::GRAPH: {
            auto* g = a->mutable_g();
            g->set_name("hostile_body");
            if (i % 2 == 1) {  // a body with an output nobody defines
                g->add_output()->set_name("undefined_in_body");
            }
            break;
        }
        default:
            break;
    }
}

// The element type an input gets: the first of these the schema allows.
inline onnx::TensorProto::DataType inputElementType(const onnx::OpSchema* schema,
                                                    std::size_t inputIndex) {
    if (!schema || schema->inputs().empty()) return onnx::TensorProto::FLOAT;
    const auto& formal = schema->inputs()[std::min(inputIndex, schema->inputs().size() - 1)];
    std::vector<std::string> allowed;
    for (const auto& c : schema->typeConstraintParams())
        if (c.type_param_str == formal.GetTypeStr()) allowed = c.allowed_type_strs;
    if (allowed.empty()) allowed.push_back(formal.GetTypeStr());
    static const std::vector<std::pair<std::string, onnx::TensorProto::DataType>> preference{
        {"tensor(float)", onnx::TensorProto::FLOAT},
        {"tensor(int64)", onnx::TensorProto::INT64},
        {"tensor(int32)", onnx::TensorProto::INT32},
        {"tensor(uint8)", onnx::TensorProto::UINT8},
        {"tensor(int8)", onnx::TensorProto::INT8},
        {"tensor(bool)", onnx::TensorProto::BOOL},
        {"tensor(double)", onnx::TensorProto::DOUBLE},
        {"tensor(float16)", onnx::TensorProto::FLOAT16}};
    for (const auto& [name, type] : preference)
        if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) return type;
    return onnx::TensorProto::FLOAT;
}

// How many inputs a case feeds: every single and optional formal input, a variadic one twice.
inline std::size_t caseInputCount(const onnx::OpSchema* schema) {
    if (!schema) return 2;
    std::size_t n = 0;
    for (const auto& formal : schema->inputs())
        n += formal.GetOption() == onnx::OpSchema::Variadic ? 2 : 1;
    return n;
}

// Small values for the element type: integers 0..2 (valid indices, axes and sizes for small
// shapes), floats in -2..2.
inline engine::Tensor hostileInputTensor(onnx::TensorProto::DataType type,
                                         const engine::Shape& shape, std::uint32_t seed) {
    const auto dtype = static_cast<engine::DataType>(type);
    engine::Tensor t = engine::Tensor::zeros(dtype, shape);
    const std::int64_t n = t.numel();
    std::uint32_t state = seed * 2654435761u + 1;
    auto next = [&state] {
        state = state * 1664525u + 1013904223u;
        return state >> 8;
    };
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t r = next();
        switch (type) {
            case onnx::TensorProto::FLOAT:
                t.data<float>()[i] = static_cast<float>(r % 401) / 100.0f - 2.0f;
                break;
            case onnx::TensorProto::DOUBLE:
                t.data<double>()[i] = static_cast<double>(r % 401) / 100.0 - 2.0;
                break;
            case onnx::TensorProto::INT64:
                t.data<std::int64_t>()[i] = r % 3;
                break;
            case onnx::TensorProto::INT32:
                t.data<std::int32_t>()[i] = static_cast<std::int32_t>(r % 3);
                break;
            case onnx::TensorProto::UINT8:
                t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(r % 3);
                break;
            case onnx::TensorProto::INT8:
                t.data<std::int8_t>()[i] = static_cast<std::int8_t>(r % 3);
                break;
            case onnx::TensorProto::BOOL:
                t.data<bool>()[i] = (r & 1) != 0;
                break;
            default:
                break;  // float16: zeros
        }
    }
    return t;
}

// The valid input templates of an operator (OperatorTemplates.h), in table order.
inline std::vector<const OperatorTemplate*> templatesOf(const engine::KernelRegistry::Entry& e) {
    std::vector<const OperatorTemplate*> out;
    for (const auto& t : operatorTemplates())
        if (t.domain == e.domain && t.opType == e.opType) out.push_back(&t);
    return out;
}

// What a case does to one input of its template: 0 keeps it; then its values all NaN (floats)
// or -1 (integers; 255 for uint8), all +inf or the type's maximum, all zero; its presence
// toggled (a required input left out, an optional one fed); another element type (float <->
// int32); the template's values plus one (an index, length or position just past its valid
// range: seqlens_k = total, a position one past the cos/sin cache, a token id one past the
// vocabulary); and from kTemplateShapePerturbation on, each hostile shape with generated values.
enum TemplatePerturbation : std::uint32_t {
    kAsTemplate = 0,
    kNegativeValues,
    kExtremeValues,
    kZeroValues,
    kPresenceToggled,
    kOtherElementType,
    kValuesPlusOne,
    kTemplateShapePerturbation
};
inline std::uint32_t templatePerturbationCount() {
    return kTemplateShapePerturbation + static_cast<std::uint32_t>(hostileShapes().size());
}

// A tensor of the element type holding `values` cycled over its elements (integers wrap around
// to the type's width, from int64; other types than these stay zero).
inline engine::Tensor tensorOfValues(onnx::TensorProto::DataType type, const engine::Shape& shape,
                                     const std::vector<double>& values) {
    engine::Tensor t = engine::Tensor::zeros(static_cast<engine::DataType>(type), shape);
    if (values.empty()) return t;
    for (std::int64_t i = 0, n = t.numel(); i < n; ++i) {
        const double v = values[static_cast<std::size_t>(i) % values.size()];
        switch (type) {
            case onnx::TensorProto::FLOAT:
                t.data<float>()[i] = static_cast<float>(v);
                break;
            case onnx::TensorProto::DOUBLE:
                t.data<double>()[i] = v;
                break;
            case onnx::TensorProto::INT64:
                t.data<std::int64_t>()[i] = static_cast<std::int64_t>(v);
                break;
            case onnx::TensorProto::INT32:
                t.data<std::int32_t>()[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(v));
                break;
            case onnx::TensorProto::UINT8:
                t.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(static_cast<std::int64_t>(v));
                break;
            case onnx::TensorProto::INT8:
                t.data<std::int8_t>()[i] = static_cast<std::int8_t>(static_cast<std::int64_t>(v));
                break;
            case onnx::TensorProto::BOOL:
                t.data<bool>()[i] = v != 0.0;
                break;
            default:
                break;
        }
    }
    return t;
}

// The value of kNegativeValues (extreme = false) or kExtremeValues (extreme = true) in a type.
inline double hostileFill(onnx::TensorProto::DataType type, bool extreme) {
    switch (type) {
        case onnx::TensorProto::FLOAT:
        case onnx::TensorProto::FLOAT16:
        case onnx::TensorProto::DOUBLE:
            return extreme ? std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::quiet_NaN();
        case onnx::TensorProto::INT64:
            // 2^62: huge, and exact in a double (converting it back to int64 cannot overflow).
            return extreme ? 4611686018427387904.0 : -1.0;
        case onnx::TensorProto::INT32:
            return extreme ? std::numeric_limits<std::int32_t>::max() : -1.0;
        case onnx::TensorProto::UINT8:
            return 255.0;
        case onnx::TensorProto::INT8:
            return extreme ? 127.0 : -128.0;
        default:
            return extreme ? 1.0 : 0.0;
    }
}

struct OperatorCase {
    std::string label;  // "Conv-11 strides=[0, 0] shapes=[0,0]"
    LoadedModel model;
    std::map<std::string, engine::Value> feeds;
};

inline std::string describeShape(const engine::Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
    return out + "]";
}

// One input of a template case after its perturbation: present or not, type, shape, value.
struct TemplateCaseInput {
    bool present = true;
    onnx::TensorProto::DataType type = onnx::TensorProto::FLOAT;
    engine::Shape shape;
    engine::Tensor value;
    std::string label;  // "" when kept as the template has it
};

inline TemplateCaseInput perturbTemplateInput(const TemplateInput& in, std::uint32_t perturbation,
                                              std::uint32_t seed) {
    TemplateCaseInput out;
    out.present = !in.absent;
    out.type = in.type;
    out.shape = in.shape;
    const std::uint32_t p = perturbation % templatePerturbationCount();
    std::vector<double> values = in.values;
    switch (p) {
        case kAsTemplate:
            break;
        case kNegativeValues:
        case kExtremeValues:
            values = {hostileFill(in.type, p == kExtremeValues)};
            out.present = true;
            out.label = p == kExtremeValues ? "extreme" : "negative";
            break;
        case kZeroValues:
            values = {0.0};
            out.present = true;
            out.label = "zeros";
            break;
        case kPresenceToggled:
            out.present = in.absent;
            out.label = in.absent ? "fed" : "absent";
            break;
        case kOtherElementType:
            out.type = in.type == onnx::TensorProto::FLOAT ? onnx::TensorProto::INT32
                                                           : onnx::TensorProto::FLOAT;
            values.clear();
            out.present = true;
            out.label = "retyped";
            break;
        case kValuesPlusOne:
            for (double& v : values) v += 1.0;
            if (values.empty()) values = {1.0};
            out.present = true;
            out.label = "plus_one";
            break;
        default:
            out.shape = hostileShapes()[p - kTemplateShapePerturbation];
            values.clear();
            out.present = true;
            out.label = describeShape(out.shape);
            break;
    }
    // Half precision: made in float, then converted.
    const bool half = out.type == onnx::TensorProto::FLOAT16;
    const auto made = half ? onnx::TensorProto::FLOAT : out.type;
    out.value = values.empty() ? hostileInputTensor(made, out.shape, seed)
                               : tensorOfValues(made, out.shape, values);
    if (half) out.value = out.value.castTo(engine::DataType::Float16);
    return out;
}

// Builds the case the choices describe.
inline OperatorCase buildOperatorCase(const std::vector<engine::KernelRegistry::Entry>& operators,
                                      const CaseChoices& choices) {
    const auto& entry = operators[choices.operatorIndex % operators.size()];
    const onnx::OpSchema* schema = schemaOf(entry);
    const auto templates = templatesOf(entry);
    const OperatorTemplate* tpl =
        choices.templateIndex >= 0 && !templates.empty()
            ? templates[static_cast<std::size_t>(choices.templateIndex) % templates.size()]
            : nullptr;
    OperatorCase c;
    c.label = (entry.domain.empty() ? "" : entry.domain + ".") + entry.opType + "-" +
              std::to_string(caseOpset(entry));
    if (tpl) c.label += " template=" + (tpl->variant.empty() ? "plain" : tpl->variant);
    auto proto = std::make_shared<onnx::ModelProto>();
    proto->set_ir_version(8);
    auto* opset = proto->add_opset_import();
    opset->set_domain(entry.domain);
    opset->set_version(caseOpset(entry));
    if (!entry.domain.empty()) {
        auto* def = proto->add_opset_import();
        def->set_domain("");
        def->set_version(17);
    }
    auto* graph = proto->mutable_graph();
    graph->set_name("hostile_case");
    auto* node = graph->add_node();
    node->set_op_type(entry.opType);
    node->set_domain(entry.domain);
    node->set_name("under_test");
    auto addInput = [&](const std::string& name, onnx::TensorProto::DataType type,
                        const engine::Shape& shape, engine::Tensor value) {
        node->add_input(name);
        if (choices.inputsAsInitializers) {
            auto* init = graph->add_initializer();
            init->set_name(name);
            init->set_data_type(type);
            for (auto d : shape) init->add_dims(d);
            init->set_raw_data(std::string(static_cast<const char*>(value.raw() ? value.raw() : ""),
                                           value.byteSize()));
        } else {
            auto* in = graph->add_input();
            in->set_name(name);
            auto* tt = in->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(type);
            auto* dims = tt->mutable_shape();
            for (auto d : shape) dims->add_dim()->set_dim_value(d);
            c.feeds.emplace(name, engine::Value(std::move(value)));
        }
    };
    std::string shapes;
    if (tpl) {
        for (std::size_t i = 0; i < tpl->inputs.size(); ++i) {
            const std::uint32_t p =
                i < choices.templateInputs.size() ? choices.templateInputs[i] : 0;
            TemplateCaseInput in = perturbTemplateInput(
                tpl->inputs[i], p, choices.valueSeed + static_cast<std::uint32_t>(i));
            if (!in.label.empty()) shapes += " x" + std::to_string(i) + "=" + in.label;
            if (in.present)
                addInput("x" + std::to_string(i), in.type, in.shape, std::move(in.value));
            else
                node->add_input("");
        }
        while (node->input_size() > 0 && node->input(node->input_size() - 1).empty())
            node->mutable_input()->RemoveLast();
        for (const auto& a : tpl->attributes) {
            const bool overridden =
                std::any_of(choices.attributes.begin(), choices.attributes.end(),
                            [&](const AttributeChoice& h) { return h.name == a.name; });
            if (overridden) continue;
            auto* attr = node->add_attribute();
            attr->set_name(a.name);
            attr->set_type(a.type);
            if (a.type == onnx::AttributeProto::INT) attr->set_i(a.i);
            if (a.type == onnx::AttributeProto::FLOAT) attr->set_f(a.f);
            if (a.type == onnx::AttributeProto::STRING) attr->set_s(a.s);
            for (auto x : a.ints) attr->add_ints(x);
        }
    } else {
        const std::size_t inputs = caseInputCount(schema);
        for (std::size_t i = 0; i < inputs; ++i) {
            const auto type = inputElementType(schema, i);
            const std::uint32_t shapeIndex =
                i < choices.inputShapes.size() ? choices.inputShapes[i] : 0;
            const engine::Shape& shape = hostileShapes()[shapeIndex % hostileShapes().size()];
            shapes += (i ? "," : "") + describeShape(shape);
            addInput(
                "x" + std::to_string(i), type, shape,
                hostileInputTensor(type, shape, choices.valueSeed + static_cast<std::uint32_t>(i)));
        }
        shapes = " shapes=" + shapes;
    }
    const int outputs = schema ? std::max(1, schema->min_output()) : 1;
    for (int o = 0; o < outputs; ++o) {
        const std::string name = "y" + std::to_string(o);
        node->add_output(name);
        graph->add_output()->set_name(name);
    }
    std::string attrs;
    for (const auto& a : choices.attributes) {
        setHostileAttribute(*node, a);
        attrs += " " + a.name + "#" + std::to_string(a.valueIndex);
    }
    c.label += attrs + shapes + (choices.inputsAsInitializers ? " constant" : "");
    c.model.path = "hostile_case.onnx";
    c.model.proto = std::move(proto);
    return c;
}

// The attributes the schema declares (name and type), in name order.
inline std::vector<AttributeChoice> declaredAttributes(const engine::KernelRegistry::Entry& entry) {
    std::vector<AttributeChoice> out;
    if (const onnx::OpSchema* schema = schemaOf(entry))
        for (const auto& [name, attr] : schema->attributes())
            if (hostileValueCount(attr.type) > 0) out.push_back({name, attr.type, 0});
    return out;
}

// Draws a whole case from the fuzzer's bytes. An operator with valid input templates first
// picks one of them (past the end of the bytes: the first) or the generic hostile shapes; a
// template case sets each attribute with odds 1 in 8 and perturbs each input with odds 1 in 8,
// so that most cases change few things of a case that runs. (Operators without templates
// read the bytes as before the templates existed: their regression inputs still replay.)
inline CaseChoices drawCaseChoices(const std::vector<engine::KernelRegistry::Entry>& operators,
                                   ChoiceSource& source) {
    CaseChoices choices;
    choices.operatorIndex = source.pick(static_cast<std::uint32_t>(operators.size()));
    const auto& entry = operators[choices.operatorIndex];
    const auto templates = templatesOf(entry);
    if (!templates.empty()) {
        const std::uint32_t t = source.pick(static_cast<std::uint32_t>(templates.size()) + 1);
        if (t < templates.size()) {
            choices.templateIndex = static_cast<int>(t);
            for (std::size_t i = 0; i < templates[t]->inputs.size(); ++i) {
                const std::uint32_t p = source.pick(8 * templatePerturbationCount());
                choices.templateInputs.push_back(p < templatePerturbationCount() ? p : 0);
            }
            for (auto a : declaredAttributes(entry)) {
                if (source.pick(8) != 1) continue;
                a.valueIndex = source.pick(hostileValueCount(a.type));
                choices.attributes.push_back(a);
            }
            choices.inputsAsInitializers = source.pick(4) == 1;
            choices.valueSeed = source.pick(1u << 16);
            return choices;
        }
    }
    for (std::size_t i = 0, n = caseInputCount(schemaOf(entry)); i < n; ++i)
        choices.inputShapes.push_back(
            source.pick(static_cast<std::uint32_t>(hostileShapes().size())));
    for (auto a : declaredAttributes(entry)) {
        if (source.pick(2) == 0) continue;
        a.valueIndex = source.pick(hostileValueCount(a.type));
        choices.attributes.push_back(a);
    }
    choices.inputsAsInitializers = source.pick(4) == 0;
    choices.valueSeed = source.pick(1u << 16);
    return choices;
}

// Cancels a run still going after the limit (a Loop with a huge trip count is valid, not a bug).
class RunWatchdog {
  public:
    RunWatchdog(engine::RunControl& control, std::chrono::milliseconds limit)
        : thread_([this, &control, limit] {
              std::unique_lock lock(mutex_);
              if (!done_.wait_for(lock, limit, [this] { return finished_; })) control.cancel = true;
          }) {}
    ~RunWatchdog() {
        {
            std::lock_guard lock(mutex_);
            finished_ = true;
        }
        done_.notify_one();
        thread_.join();
    }
    RunWatchdog(const RunWatchdog&) = delete;
    RunWatchdog& operator=(const RunWatchdog&) = delete;

  private:
    std::mutex mutex_;
    std::condition_variable done_;
    bool finished_ = false;
    std::thread thread_;
};

// Compiles and runs a case under a small tensor limit; returns the error message ("" when it ran).
inline std::string runOperatorCase(const OperatorCase& c) {
    engine::SessionOptions options;
    options.threads = 1;
    options.maxTensorBytes = 16u << 20;
    auto session = engine::Session::create(c.model, options);
    if (!session) return session.error().message;
    engine::RunControl control;
    RunWatchdog watchdog(control, std::chrono::milliseconds(2000));
    auto outputs = (*session)->run(c.feeds, &control);
    return outputs ? std::string() : outputs.error().message;
}

}  // namespace onnxlens::testing
