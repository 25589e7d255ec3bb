#include "onnxlens/model/NewerOpsets.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

using AP = onnx::AttributeProto;

// Element types by their TensorProto number (the enum of onnx 1.12 stops at BFLOAT16 = 16;
// IR 9 and 10 added float8 17-20, uint4 21, int4 22; IR 11 float4e2m1 23).
constexpr std::uint64_t bit(int type) { return std::uint64_t{1} << type; }
constexpr std::uint64_t kFloats = bit(1) | bit(10) | bit(11) | bit(16);
constexpr std::uint64_t kFloat8 = bit(17) | bit(18) | bit(19) | bit(20);
constexpr std::uint64_t kIntegers =
    bit(2) | bit(3) | bit(4) | bit(5) | bit(6) | bit(7) | bit(12) | bit(13);
constexpr std::uint64_t kNumeric = kFloats | kIntegers;
constexpr std::uint64_t kAnyType = ~std::uint64_t{0};

struct AttributeRule {
    const char* name;
    AP::AttributeType type;
    bool required = false;
};

// One operator version of opsets 18 to 24 whose inputs, outputs or attributes differ from the
// version before it (or a new operator). Counts are inclusive; -1: unbounded.
struct StructuralSchema {
    const char* op;
    int since;
    int minInputs, maxInputs, minOutputs, maxOutputs;
    std::vector<AttributeRule> attributes;
    std::uint64_t firstInputTypes = kAnyType;
};

const std::vector<AttributeRule> kReduceAttributes = {{"keepdims", AP::INT},
                                                      {"noop_with_empty_axes", AP::INT}};
const std::vector<AttributeRule> kResizeAttributes = {
    {"antialias", AP::INT},
    {"axes", AP::INTS},
    {"coordinate_transformation_mode", AP::STRING},
    {"cubic_coeff_a", AP::FLOAT},
    {"exclude_outside", AP::INT},
    {"extrapolation_value", AP::FLOAT},
    {"keep_aspect_ratio_policy", AP::STRING},
    {"mode", AP::STRING},
    {"nearest_mode", AP::STRING}};
const std::vector<AttributeRule> kPoolAttributes = {
    {"auto_pad", AP::STRING}, {"ceil_mode", AP::INT},           {"count_include_pad", AP::INT},
    {"dilations", AP::INTS},  {"kernel_shape", AP::INTS, true}, {"pads", AP::INTS},
    {"strides", AP::INTS}};
const std::vector<AttributeRule> kLpPoolAttributes = {
    {"auto_pad", AP::STRING}, {"ceil_mode", AP::INT},
    {"dilations", AP::INTS},  {"kernel_shape", AP::INTS, true},
    {"p", AP::INT},           {"pads", AP::INTS},
    {"strides", AP::INTS}};
const std::vector<AttributeRule> kAttentionAttributes = {
    {"is_causal", AP::INT},        {"kv_num_heads", AP::INT},
    {"q_num_heads", AP::INT},      {"qk_matmul_output_mode", AP::INT},
    {"scale", AP::FLOAT},          {"softcap", AP::FLOAT},
    {"softmax_precision", AP::INT}};

const std::vector<StructuralSchema>& structuralSchemas() {
    static const std::vector<StructuralSchema> table = [] {
        std::vector<StructuralSchema> t = {
            // Opset 18.
            {"BitwiseAnd", 18, 2, 2, 1, 1, {}, kIntegers},
            {"BitwiseOr", 18, 2, 2, 1, 1, {}, kIntegers},
            {"BitwiseXor", 18, 2, 2, 1, 1, {}, kIntegers},
            {"BitwiseNot", 18, 1, 1, 1, 1, {}, kIntegers},
            {"CenterCropPad", 18, 2, 2, 1, 1, {{"axes", AP::INTS}}},
            {"Col2Im",
             18,
             3,
             3,
             1,
             1,
             {{"dilations", AP::INTS}, {"pads", AP::INTS}, {"strides", AP::INTS}}},
            {"GroupNormalization",
             18,
             3,
             3,
             1,
             1,
             {{"epsilon", AP::FLOAT}, {"num_groups", AP::INT, true}},
             kFloats},
            {"LpPool", 18, 1, 1, 1, 1, kLpPoolAttributes, kFloats},
            {"Mish", 18, 1, 1, 1, 1, {}, kFloats},
            {"OptionalGetElement", 18, 1, 1, 1, 1, {}},
            {"OptionalHasElement", 18, 0, 1, 1, 1, {}},
            {"Pad", 18, 2, 4, 1, 1, {{"mode", AP::STRING}}},
            {"Resize", 18, 1, 4, 1, 1, kResizeAttributes},
            {"ScatterElements", 18, 3, 3, 1, 1, {{"axis", AP::INT}, {"reduction", AP::STRING}}},
            {"ScatterND", 18, 3, 3, 1, 1, {{"reduction", AP::STRING}}},
            {"Split", 18, 1, 2, 1, -1, {{"axis", AP::INT}, {"num_outputs", AP::INT}}},
            // Opset 19.
            {"AveragePool", 19, 1, 1, 1, 1, kPoolAttributes, kFloats},
            {"Cast", 19, 1, 1, 1, 1, {{"saturate", AP::INT}, {"to", AP::INT, true}}},
            {"CastLike", 19, 2, 2, 1, 1, {{"saturate", AP::INT}}},
            {"DeformConv",
             19,
             3,
             5,
             1,
             1,
             {{"dilations", AP::INTS},
              {"group", AP::INT},
              {"kernel_shape", AP::INTS},
              {"offset_group", AP::INT},
              {"pads", AP::INTS},
              {"strides", AP::INTS}},
             kFloats},
            {"DequantizeLinear", 19, 2, 3, 1, 1, {{"axis", AP::INT}}},
            {"Pad", 19, 2, 4, 1, 1, {{"mode", AP::STRING}}},
            {"QuantizeLinear", 19, 2, 3, 1, 1, {{"axis", AP::INT}, {"saturate", AP::INT}}},
            {"Resize", 19, 1, 4, 1, 1, kResizeAttributes},
            // Opset 20.
            {"AffineGrid", 20, 2, 2, 1, 1, {{"align_corners", AP::INT}}, kFloats},
            {"DFT", 20, 1, 3, 1, 1, {{"inverse", AP::INT}, {"onesided", AP::INT}}, kFloats},
            {"Gelu", 20, 1, 1, 1, 1, {{"approximate", AP::STRING}}, kFloats},
            {"GridSample",
             20,
             2,
             2,
             1,
             1,
             {{"align_corners", AP::INT}, {"mode", AP::STRING}, {"padding_mode", AP::STRING}}},
            {"ImageDecoder", 20, 1, 1, 1, 1, {{"pixel_format", AP::STRING}}, bit(2)},
            {"RegexFullMatch", 20, 1, 1, 1, 1, {{"pattern", AP::STRING}}, bit(8)},
            {"StringConcat", 20, 2, 2, 1, 1, {}, bit(8)},
            {"StringSplit",
             20,
             1,
             1,
             2,
             2,
             {{"delimiter", AP::STRING}, {"maxsplit", AP::INT}},
             bit(8)},
            // Opset 21.
            {"DequantizeLinear", 21, 2, 3, 1, 1, {{"axis", AP::INT}, {"block_size", AP::INT}}},
            {"GroupNormalization",
             21,
             3,
             3,
             1,
             1,
             {{"epsilon", AP::FLOAT}, {"num_groups", AP::INT, true}, {"stash_type", AP::INT}},
             kFloats},
            {"QuantizeLinear",
             21,
             2,
             3,
             1,
             1,
             {{"axis", AP::INT},
              {"block_size", AP::INT},
              {"output_dtype", AP::INT},
              {"saturate", AP::INT}}},
            // Opset 23.
            {"Attention", 23, 3, 6, 1, 4, kAttentionAttributes, kFloats},
            {"DequantizeLinear",
             23,
             2,
             3,
             1,
             1,
             {{"axis", AP::INT}, {"block_size", AP::INT}, {"output_dtype", AP::INT}}},
            {"QuantizeLinear",
             23,
             2,
             3,
             1,
             1,
             {{"axis", AP::INT},
              {"block_size", AP::INT},
              {"output_dtype", AP::INT},
              {"precision", AP::INT},
              {"saturate", AP::INT}}},
            {"RMSNormalization",
             23,
             2,
             2,
             1,
             1,
             {{"axis", AP::INT}, {"epsilon", AP::FLOAT}, {"stash_type", AP::INT}},
             kFloats},
            {"RotaryEmbedding",
             23,
             3,
             4,
             1,
             1,
             {{"interleaved", AP::INT}, {"num_heads", AP::INT}, {"rotary_embedding_dim", AP::INT}},
             kFloats},
            // Opset 24.
            {"Attention", 24, 3, 7, 1, 4, kAttentionAttributes, kFloats},
            {"Swish", 24, 1, 1, 1, 1, {{"alpha", AP::FLOAT}}, kFloats},
            {"TensorScatter", 24, 2, 3, 1, 1, {{"axis", AP::INT}, {"mode", AP::STRING}}},
        };
        for (const char* reduce :
             {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
              "ReduceMin", "ReduceProd", "ReduceSumSquare"})
            t.push_back({reduce, 18, 1, 2, 1, 1, kReduceAttributes, kNumeric | bit(9) | kFloat8});
        for (const char* reduce : {"ReduceMax", "ReduceMin"})
            t.push_back({reduce, 20, 1, 2, 1, 1, kReduceAttributes, kNumeric | bit(9) | kFloat8});
        return t;
    }();
    return table;
}

// Operator versions of opsets 18 to 24 that only widened the accepted types (float8, int4,
// bfloat16, ...): their structure is that of the newest version the library knows.
const std::map<std::string, std::vector<int>>& typeOnlyVersions() {
    static const std::map<std::string, std::vector<int>> table = [] {
        std::map<std::string, std::vector<int>> t;
        auto add = [&](int since, std::initializer_list<const char*> ops) {
            for (const char* op : ops) t[op].push_back(since);
        };
        add(19,
            {"Constant", "Equal", "Identity", "If", "Loop", "Reshape", "Scan", "Shape", "Size"});
        add(20, {"ConstantOfShape", "IsInf", "IsNaN"});
        add(21, {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If",
                 "Loop", "Pad", "QLinearMatMul", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                 "Transpose", "Unsqueeze"});
        add(22, {"Acos",
                 "Acosh",
                 "Asin",
                 "Asinh",
                 "Atan",
                 "Atanh",
                 "AveragePool",
                 "Bernoulli",
                 "Conv",
                 "ConvTranspose",
                 "Cos",
                 "Cosh",
                 "DeformConv",
                 "Det",
                 "Dropout",
                 "Elu",
                 "EyeLike",
                 "GRU",
                 "GlobalAveragePool",
                 "GlobalLpPool",
                 "GlobalMaxPool",
                 "GridSample",
                 "HardSigmoid",
                 "HardSwish",
                 "InstanceNormalization",
                 "LSTM",
                 "LpNormalization",
                 "LpPool",
                 "MaxPool",
                 "MaxRoiPool",
                 "MaxUnpool",
                 "Mish",
                 "Multinomial",
                 "NegativeLogLikelihoodLoss",
                 "RNN",
                 "RandomNormal",
                 "RandomNormalLike",
                 "RandomUniform",
                 "RandomUniformLike",
                 "RoiAlign",
                 "Round",
                 "Selu",
                 "Sin",
                 "Sinh",
                 "Softplus",
                 "Softsign",
                 "Tan",
                 "ThresholdedRelu"});
        add(23,
            {"Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop",
             "Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"});
        add(24, {"Cast",
                 "CastLike",
                 "Constant",
                 "ConstantOfShape",
                 "DequantizeLinear",
                 "Flatten",
                 "Identity",
                 "If",
                 "Loop",
                 "Pad",
                 "QuantizeLinear",
                 "Reshape",
                 "Scan",
                 "Shape",
                 "Size",
                 "SplitToSequence",
                 "Squeeze",
                 "TopK",
                 "Transpose",
                 "Unsqueeze"});
        return t;
    }();
    return table;
}

constexpr int kNewestTableOpset = 24;

// The newest version of `op` at `opset` according to the table: the structural schema, if the
// newest change is structural; else its version (0 when the table has no version in (after,
// opset]).
struct TableVersion {
    int version = 0;
    const StructuralSchema* structural = nullptr;
};

TableVersion tableVersion(const std::string& op, int opset) {
    TableVersion best;
    for (const auto& s : structuralSchemas())
        if (op == s.op && s.since <= opset && s.since > best.version) best = {s.since, &s};
    if (auto it = typeOnlyVersions().find(op); it != typeOnlyVersions().end())
        for (int since : it->second)
            if (since <= opset && since > best.version) best = {since, nullptr};
    // A type-only change after a structural one keeps that structure.
    if (!best.structural)
        for (const auto& s : structuralSchemas())
            if (op == s.op && s.since <= opset &&
                (!best.structural || s.since > best.structural->since))
                best.structural = &s;
    return best;
}

int importedOpset(const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                  int fallback) {
    for (const auto& o : imports)
        if (isDefaultDomain(o.domain())) return static_cast<int>(o.version());
    return fallback;
}

// Element types the graph declares: inputs, outputs, value_info and initializers.
using DeclaredTypes = std::unordered_map<std::string, int>;

void collectDeclaredTypes(const onnx::GraphProto& graph, DeclaredTypes& types) {
    auto note = [&](const onnx::ValueInfoProto& v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0)
            types[v.name()] = v.type().tensor_type().elem_type();
    };
    for (const auto& v : graph.input()) note(v);
    for (const auto& v : graph.output()) note(v);
    for (const auto& v : graph.value_info()) note(v);
    for (const auto& init : graph.initializer()) types[init.name()] = init.data_type();
}

std::string attributeTypeName(int type) {
    switch (type) {
        case AP::FLOAT:
            return "float";
        case AP::INT:
            return "int";
        case AP::STRING:
            return "string";
        case AP::TENSOR:
            return "tensor";
        case AP::GRAPH:
            return "graph";
        case AP::FLOATS:
            return "floats";
        case AP::INTS:
            return "ints";
        case AP::STRINGS:
            return "strings";
        default:
            return "type " + std::to_string(type);
    }
}

std::string countRange(int lo, int hi) {
    if (hi < 0) return std::to_string(lo) + " or more";
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
}

// The problems of one node against a structural schema.
void checkStructural(const onnx::NodeProto& node, const StructuralSchema& schema,
                     const DeclaredTypes& types, const std::string& label,
                     std::vector<std::string>& problems) {
    const std::string prefix =
        label + " (" + node.op_type() + "-" + std::to_string(schema.since) + "): ";
    auto outside = [](int count, int lo, int hi) { return count < lo || (hi >= 0 && count > hi); };
    if (outside(node.input_size(), schema.minInputs, schema.maxInputs))
        problems.push_back(prefix + "has " + std::to_string(node.input_size()) +
                           " inputs, the operator takes " +
                           countRange(schema.minInputs, schema.maxInputs));
    if (outside(node.output_size(), schema.minOutputs, schema.maxOutputs))
        problems.push_back(prefix + "has " + std::to_string(node.output_size()) +
                           " outputs, the operator produces " +
                           countRange(schema.minOutputs, schema.maxOutputs));
    std::unordered_set<std::string> present;
    for (const auto& attribute : node.attribute()) {
        present.insert(attribute.name());
        auto rule =
            std::find_if(schema.attributes.begin(), schema.attributes.end(),
                         [&](const AttributeRule& r) { return attribute.name() == r.name; });
        if (rule == schema.attributes.end()) {
            problems.push_back(prefix + "has an attribute '" + attribute.name() +
                               "' the operator does not define");
            continue;
        }
        // A reference to a function attribute carries its type too.
        if (attribute.type() != rule->type)
            problems.push_back(prefix + "attribute '" + attribute.name() + "' is " +
                               attributeTypeName(attribute.type()) + ", the operator wants " +
                               attributeTypeName(rule->type));
    }
    for (const auto& rule : schema.attributes)
        if (rule.required && !present.count(rule.name))
            problems.push_back(prefix + "lacks its required attribute '" + rule.name + "'");
    if (node.input_size() > 0 && schema.firstInputTypes != kAnyType) {
        auto it = types.find(node.input(0));
        if (it != types.end() && it->second > 0 && it->second < 64 &&
            !(schema.firstInputTypes & bit(it->second)))
            problems.push_back(prefix + "input '" + node.input(0) + "' is " +
                               elementTypeName(it->second) + ", a type the operator does not take");
    }
}

struct Walker {
    NewerOpsetReport& report;
    int libraryOpset;

    void walkGraph(const onnx::GraphProto& graph, int opset, const std::string& where,
                   DeclaredTypes types) {
        collectDeclaredTypes(graph, types);
        for (int i = 0; i < graph.node_size(); ++i) {
            const auto& node = graph.node(i);
            const std::string label =
                where + " node '" + (node.name().empty() ? "#" + std::to_string(i) : node.name()) +
                "'";
            // ONNX Runtime's own default-domain operators are reported by checkMicrosoftNodes.
            if (isDefaultDomain(node) && opset > libraryOpset &&
                !isOrtOnnxDomainExtension(node, opset))
                walkNode(node, opset, where, label, types);
            for (const auto& attribute : node.attribute()) {
                if (attribute.has_g())
                    walkGraph(attribute.g(), opset, label + "/" + attribute.name(), types);
                for (const auto& g : attribute.graphs())
                    walkGraph(g, opset, label + "/" + attribute.name(), types);
            }
        }
    }

    void walkNode(const onnx::NodeProto& node, int opset, const std::string& where,
                  const std::string& label, const DeclaredTypes& types) {
        const TableVersion newest = tableVersion(node.op_type(), opset);
        const auto* librarySchema =
            onnx::OpSchemaRegistry::Schema(node.op_type(), libraryOpset, "");
        if (newest.version <= libraryOpset) {
            if (!librarySchema)
                report.problems.push_back(label + ": " + node.op_type() +
                                          " is not an ai.onnx operator of opset " +
                                          std::to_string(opset) + " that this build knows");
            return;  // unchanged since the library's opset: the onnx checker checks it
        }
        NewerOpsetNode entry{
            where, node.name(),    node.op_type(),
            opset, newest.version, newest.structural && newest.structural->since > libraryOpset};
        report.nodes.push_back(entry);
        if (entry.structural) {
            checkStructural(node, *newest.structural, types, label, report.problems);
        } else if (librarySchema) {
            // Only the types widened: the structure is the library's newest version's.
            try {
                librarySchema->Verify(node);
            } catch (const std::exception& e) {
                std::string message = e.what();
                while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
                    message.pop_back();
                report.problems.push_back(label + " (" + node.op_type() + "-" +
                                          std::to_string(newest.version) + "): " + message);
            }
        }
    }
};

}  // namespace

int onnxLibraryOpset() {
    registerMicrosoftOpSchemas();  // before anyone reads the registry's domain map
    const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = known.find("");
    return it == known.end() ? 1 : it->second.second;
}

int onnxLibraryIrVersion() { return static_cast<int>(onnx::IR_VERSION); }

int newestOpsetKnownToOnnxlens() { return std::max(kNewestTableOpset, onnxLibraryOpset()); }

NewerOpsetReport checkNewerOpsetNodes(const onnx::ModelProto& model) {
    NewerOpsetReport report;
    const int libraryOpset = onnxLibraryOpset();
    report.modelOpset = importedOpset(model.opset_import(), 0);
    report.modelIrVersion = model.ir_version();
    report.irNewerThanLibrary = model.ir_version() > onnxLibraryIrVersion();
    report.opsetNewerThanLibrary = report.modelOpset > libraryOpset;
    report.opsetNewerThanOnnxlens = report.modelOpset > newestOpsetKnownToOnnxlens();
    for (const auto& function : model.functions())
        if (importedOpset(function.opset_import(), report.modelOpset) > libraryOpset)
            report.opsetNewerThanLibrary = true;
    if (!report.applies()) return report;
    Walker walker{report, libraryOpset};
    const int checkedOpset = std::min(report.modelOpset, newestOpsetKnownToOnnxlens());
    walker.walkGraph(model.graph(), checkedOpset, "main graph", {});
    for (const auto& function : model.functions()) {
        const int opset = std::min(importedOpset(function.opset_import(), report.modelOpset),
                                   newestOpsetKnownToOnnxlens());
        onnx::GraphProto body;
        *body.mutable_node() = function.node();
        walker.walkGraph(body, opset, "function '" + function.name() + "'", {});
    }
    return report;
}

std::string describeNewerOpsetCheck(const NewerOpsetReport& report) {
    if (!report.applies()) return {};
    std::string text;
    if (report.opsetNewerThanLibrary) {
        text = "the onnx checker in this build knows opsets up to " +
               std::to_string(onnxLibraryOpset()) + "; ";
        if (report.nodes.empty())
            text += "every node of this opset-" + std::to_string(report.modelOpset) +
                    " model uses an operator version it knows";
        else
            text += std::to_string(report.nodes.size()) +
                    (report.nodes.size() == 1 ? " node uses a newer version and was"
                                              : " nodes use newer versions and were") +
                    " checked by onnxlens instead";
    }
    if (report.irNewerThanLibrary) {
        if (!text.empty()) text += "; ";
        text += "IR version " + std::to_string(report.modelIrVersion) +
                " is newer than the onnx checker's " + std::to_string(onnxLibraryIrVersion()) +
                " (the model was checked as IR " + std::to_string(onnxLibraryIrVersion()) + ")";
    }
    return text;
}

namespace {

void moveStructuralNodes(onnx::GraphProto& graph, int opset, int libraryOpset) {
    for (auto& node : *graph.mutable_node()) {
        if (isDefaultDomain(node)) {
            const TableVersion newest = tableVersion(node.op_type(), opset);
            const bool structural = newest.version > libraryOpset && newest.structural &&
                                    newest.structural->since > libraryOpset;
            // An operator neither the table nor the library knows is left to the checker,
            // which names it.
            if (structural) node.set_domain(kNewerOpsetPlaceholderDomain);
        }
        for (auto& attribute : *node.mutable_attribute()) {
            if (attribute.has_g()) moveStructuralNodes(*attribute.mutable_g(), opset, libraryOpset);
            for (auto& g : *attribute.mutable_graphs()) moveStructuralNodes(g, opset, libraryOpset);
        }
    }
}

void lowerImports(google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto>& imports,
                  int libraryOpset, int placeholderOpset) {
    bool hasPlaceholder = false;
    for (auto& o : imports) {
        if (isDefaultDomain(o.domain()) && o.version() > libraryOpset) o.set_version(libraryOpset);
        if (o.domain() == kNewerOpsetPlaceholderDomain) hasPlaceholder = true;
    }
    if (!hasPlaceholder) {
        auto* placeholder = imports.Add();
        placeholder->set_domain(kNewerOpsetPlaceholderDomain);
        placeholder->set_version(placeholderOpset);
    }
}

}  // namespace

bool adaptForOnnxLibrary(onnx::ModelProto& copy) {
    const int libraryOpset = onnxLibraryOpset();
    const int modelOpset = importedOpset(copy.opset_import(), 0);
    bool functionNewer = false;
    for (const auto& function : copy.functions())
        functionNewer |= importedOpset(function.opset_import(), modelOpset) > libraryOpset;
    const bool irNewer = copy.ir_version() > onnxLibraryIrVersion();
    if (!irNewer && modelOpset <= libraryOpset && !functionNewer) return false;
    if (irNewer) copy.set_ir_version(onnxLibraryIrVersion());
    const int checkedOpset = std::min(modelOpset, newestOpsetKnownToOnnxlens());
    if (modelOpset > libraryOpset) {
        moveStructuralNodes(*copy.mutable_graph(), checkedOpset, libraryOpset);
        lowerImports(*copy.mutable_opset_import(), libraryOpset, checkedOpset);
    }
    for (auto& function : *copy.mutable_functions()) {
        const int opset = std::min(importedOpset(function.opset_import(), modelOpset),
                                   newestOpsetKnownToOnnxlens());
        if (opset <= libraryOpset) continue;
        onnx::GraphProto body;
        body.mutable_node()->Swap(function.mutable_node());
        moveStructuralNodes(body, opset, libraryOpset);
        body.mutable_node()->Swap(function.mutable_node());
        lowerImports(*function.mutable_opset_import(), libraryOpset, opset);
    }
    return true;
}

}  // namespace onnxlens
