#include "onnxlens/model/ViewGraph.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/StructuralCopy.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

const std::unordered_map<std::string_view, NodeCategory>& categoryTable() {
    static const std::unordered_map<std::string_view, NodeCategory> table = [] {
        std::unordered_map<std::string_view, NodeCategory> t;
        auto add = [&](NodeCategory c, std::initializer_list<std::string_view> ops) {
            for (auto op : ops) t.emplace(op, c);
        };
        add(NodeCategory::Layer,
            {"Conv", "ConvTranspose", "ConvInteger", "Gemm", "MatMul", "MatMulInteger",
             "QLinearConv", "QLinearMatMul", "LSTM", "GRU", "RNN", "Einsum", "Attention",
             "MultiHeadAttention", "FusedConv", "FusedGemm", "FusedMatMul", "DeformConv"});
        // The optimizer's int8 fusions (com.onnxlens).
        add(NodeCategory::Layer,
            {"ConvIntegerToFloat", "MatMulIntegerToFloat", "QLinearConvChannelsLast"});
        // ONNX Runtime's com.microsoft products, attention and recurrent layers (its transformer
        // optimizer, quantizers and LLM builders write them).
        add(NodeCategory::Layer,
            {"GroupQueryAttention", "QAttention", "MatMulNBits", "DynamicQuantizeMatMul", "QGemm",
             "DynamicQuantizeLSTM", "RotaryEmbedding", "QLinearConv"});
        add(NodeCategory::Activation, {"Relu",
                                       "Sigmoid",
                                       "Tanh",
                                       "Softmax",
                                       "LogSoftmax",
                                       "Gelu",
                                       "FastGelu",
                                       "LeakyRelu",
                                       "Elu",
                                       "Selu",
                                       "Celu",
                                       "PRelu",
                                       "HardSigmoid",
                                       "HardSwish",
                                       "Softplus",
                                       "Softsign",
                                       "ThresholdedRelu",
                                       "Mish",
                                       "Hardmax",
                                       "Erf",
                                       "BiasGelu",
                                       "QuickGelu",
                                       "Clip",
                                       "BiasSplitGelu",
                                       "QLinearSigmoid",
                                       "QLinearLeakyRelu",
                                       "QLinearSoftmax"});
        add(NodeCategory::Pool, {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                                 "LpPool", "GlobalLpPool", "MaxRoiPool", "RoiAlign", "MaxUnpool",
                                 "QLinearAveragePool", "QLinearGlobalAveragePool"});
        add(NodeCategory::Normalization,
            {"BatchNormalization", "LayerNormalization", "InstanceNormalization",
             "GroupNormalization", "LpNormalization", "LRN", "MeanVarianceNormalization",
             "SkipLayerNormalization", "SimplifiedLayerNormalization",
             "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization", "GroupNorm",
             "RMSNormalization"});
        add(NodeCategory::Dropout, {"Dropout"});
        add(NodeCategory::Shape,
            {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Shape", "Size", "Expand",
             "Tile", "DepthToSpace", "SpaceToDepth", "ConstantOfShape", "Identity"});
        add(NodeCategory::Tensor, {"Concat",
                                   "Split",
                                   "Gather",
                                   "GatherElements",
                                   "GatherND",
                                   "Scatter",
                                   "ScatterElements",
                                   "ScatterND",
                                   "Slice",
                                   "Pad",
                                   "Resize",
                                   "Upsample",
                                   "Cast",
                                   "CastLike",
                                   "Range",
                                   "OneHot",
                                   "TopK",
                                   "NonZero",
                                   "Compress",
                                   "Trilu",
                                   "Unique",
                                   "ReverseSequence",
                                   "SplitToSequence",
                                   "ConcatFromSequence",
                                   "Constant",
                                   "QLinearConcat",
                                   "GatherBlockQuantized"});
        add(NodeCategory::Arithmetic, {"Add",
                                       "Sub",
                                       "Mul",
                                       "Div",
                                       "Pow",
                                       "Sqrt",
                                       "Exp",
                                       "Log",
                                       "Abs",
                                       "Neg",
                                       "Reciprocal",
                                       "Floor",
                                       "Ceil",
                                       "Round",
                                       "Sum",
                                       "Mean",
                                       "Max",
                                       "Min",
                                       "Mod",
                                       "Sign",
                                       "Sin",
                                       "Cos",
                                       "Tan",
                                       "ReduceMean",
                                       "ReduceSum",
                                       "ReduceMax",
                                       "ReduceMin",
                                       "ReduceProd",
                                       "ReduceL1",
                                       "ReduceL2",
                                       "ReduceLogSum",
                                       "ReduceLogSumExp",
                                       "ReduceSumSquare",
                                       "ArgMax",
                                       "ArgMin",
                                       "CumSum",
                                       "BiasAdd",
                                       "QLinearAdd",
                                       "QLinearMul"});
        add(NodeCategory::Logic,
            {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "And", "Or", "Xor",
             "Where", "IsNaN", "IsInf", "BitShift"});
        add(NodeCategory::Control, {"If", "Loop", "Scan"});
        add(NodeCategory::Quantization,
            {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"});
        return t;
    }();
    return table;
}

std::string joinDims(const std::vector<std::string>& parts, const char* separator) {
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i) out += separator;
        out += parts[i];
    }
    return out;
}

std::string shortened(std::string text, std::size_t maxLength) {
    if (text.size() > maxLength && maxLength > 3) text = text.substr(0, maxLength - 3) + "...";
    return text;
}

std::string formatFloat(double value) {
    std::ostringstream s;
    s << value;
    return s.str();
}

// Small integer tensors (Reshape shapes, axes) are more useful as values than as shapes.
std::string smallTensorValues(const onnx::TensorProto& tensor) {
    auto elements = elementCount(tensor);
    if (!elements || *elements > 8) return {};
    auto count = static_cast<std::int64_t>(*elements);
    std::vector<std::string> values;
    using T = onnx::TensorProto;
    if (tensor.data_type() == T::INT64) {
        if (tensor.int64_data_size() == count)
            for (auto v : tensor.int64_data()) values.push_back(std::to_string(v));
        else if (static_cast<std::int64_t>(tensor.raw_data().size()) == count * 8)
            for (std::int64_t i = 0; i < count; ++i) {
                std::int64_t v;
                std::memcpy(&v, tensor.raw_data().data() + i * 8, 8);
                values.push_back(std::to_string(v));
            }
    } else if (tensor.data_type() == T::INT32) {
        if (tensor.int32_data_size() == count)
            for (auto v : tensor.int32_data()) values.push_back(std::to_string(v));
        else if (static_cast<std::int64_t>(tensor.raw_data().size()) == count * 4)
            for (std::int64_t i = 0; i < count; ++i) {
                std::int32_t v;
                std::memcpy(&v, tensor.raw_data().data() + i * 4, 4);
                values.push_back(std::to_string(v));
            }
    } else if (tensor.data_type() == T::FLOAT && count == 1) {  // weights read better as shapes
        if (tensor.float_data_size() == count)
            for (auto v : tensor.float_data()) values.push_back(formatFloat(v));
        else if (static_cast<std::int64_t>(tensor.raw_data().size()) == count * 4)
            for (std::int64_t i = 0; i < count; ++i) {
                float v;
                std::memcpy(&v, tensor.raw_data().data() + i * 4, 4);
                values.push_back(formatFloat(v));
            }
    }
    if (values.empty()) return {};
    if (tensor.dims_size() == 0) return values[0];
    return "[" + joinDims(values, ", ") + "]";
}

std::string lastComponent(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

class Builder {
  public:
    Builder(ViewGraph& view, const ViewGraphOptions& options) : view_(view), options_(options) {
        for (const auto& f : view.inferred->functions())
            functions_[f.domain() + "::" + f.name()] = &f;
    }

    void build() {
        ViewGroup root;
        root.kind = ViewGroup::Kind::Root;
        root.path = "";
        root.title = view_.inferred->graph().name();
        view_.groups.push_back(root);
        Scope scope;
        addGraph(view_.inferred->graph(), &view_.model->graph(), 0, scope, "", true, 0);
        groupRepeatedBlocks();
        compactScopes();
        homeIoFamilies();
        if (options_.foldRepeats) foldRepeats();
        markStubs();
        splitLargeLevels();
        countNodes();
        buildEdges();
        buildLevels();
    }

  private:
    struct Scope {
        std::unordered_map<std::string, int> tensors;  // name -> tensor index
        const Scope* outer = nullptr;
        int lookup(const std::string& name) const {
            for (const Scope* s = this; s; s = s->outer) {
                auto it = s->tensors.find(name);
                if (it != s->tensors.end()) return it->second;
            }
            return -1;
        }
    };

    int newTensor(const std::string& name, Scope& scope) {
        ViewTensor t;
        t.name = name;
        view_.tensors.push_back(std::move(t));
        int index = static_cast<int>(view_.tensors.size()) - 1;
        scope.tensors[name] = index;
        return index;
    }

    int addGroup(ViewGroup::Kind kind, const std::string& path, const std::string& title,
                 int parent) {
        ViewGroup g;
        g.kind = kind;
        g.path = path;
        g.title = title;
        g.parent = parent;
        view_.groups.push_back(std::move(g));
        int index = static_cast<int>(view_.groups.size()) - 1;
        view_.groups[parent].children.push_back({ViewUnitRef::Kind::Group, index});
        return index;
    }

    // The name-scope group for a node named "/a/b/Op" under `base`, created on demand.
    int scopeGroupFor(const std::string& nodeName, int base) {
        if (nodeName.empty() || nodeName[0] != '/') return base;
        auto last = nodeName.rfind('/');
        if (last == 0) return base;
        int group = base;
        std::size_t start = 1;
        while (start < last) {
            auto end = nodeName.find('/', start);
            if (end == std::string::npos || end > last) end = last;
            std::string component = nodeName.substr(start, end - start);
            start = end + 1;
            if (component.empty()) continue;
            std::string path = view_.groups[group].path + "/" + component;
            auto key = std::make_pair(group, component);
            auto it = scopeGroups_.find(key);
            if (it == scopeGroups_.end()) {
                int created = addGroup(ViewGroup::Kind::Scope, path, component, group);
                it = scopeGroups_.emplace(key, created).first;
            }
            group = it->second;
        }
        return group;
    }

    // Shape-only operators on constants (PyTorch writes one Identity per shared weight and
    // Unsqueeze/Reshape chains on constants) carry no computation worth a box.
    bool foldsIntoReaders(const onnx::NodeProto& proto, const Scope& scope,
                          const std::set<std::string>& graphOutputs) const {
        static const std::set<std::string> kFoldable = {"Identity", "Cast", "Unsqueeze", "Squeeze",
                                                        "Reshape"};
        if (!isDefaultDomain(proto)) return false;
        if (!kFoldable.count(proto.op_type()) || proto.output_size() != 1 ||
            proto.input_size() == 0 || proto.output(0).empty() ||
            graphOutputs.count(proto.output(0)) || proto.input(0).empty())
            return false;
        for (const auto& name : proto.input()) {
            if (name.empty()) continue;
            const int t = scope.lookup(name);
            if (t < 0 || !view_.tensors[t].folded) return false;
        }
        return true;
    }

    int addNode(ViewNode node) {
        int group = node.group;
        view_.nodes.push_back(std::move(node));
        int index = static_cast<int>(view_.nodes.size()) - 1;
        view_.groups[group].children.push_back({ViewUnitRef::Kind::Node, index});
        return index;
    }

    void recordTypes(const onnx::GraphProto& graph) {
        auto record = [&](const onnx::ValueInfoProto& info) {
            if (info.has_type()) types_[&graph][info.name()] = tensorTypeOf(info.type());
        };
        for (const auto& v : graph.input()) record(v);
        for (const auto& v : graph.output()) record(v);
        for (const auto& v : graph.value_info()) record(v);
    }

    void assignType(ViewTensor& tensor, const onnx::GraphProto& graph) {
        auto g = types_.find(&graph);
        if (g == types_.end()) return;
        auto it = g->second.find(tensor.name);
        if (it != g->second.end()) tensor.type = it->second;
    }

    // `original`: the same graph in the un-stripped model, for initializer data. Subgraph
    // initializers come from the stripped copy: large ones there hold no data.
    void addGraph(const onnx::GraphProto& graph, const onnx::GraphProto* original, int group,
                  Scope& scope, const std::string& pathPrefix, bool isMain, int depth) {
        recordTypes(graph);
        std::unordered_map<std::string, const onnx::TensorProto*> originalInitializers;
        if (original)
            for (const auto& init : original->initializer())
                originalInitializers[init.name()] = &init;
        std::unordered_set<std::string> initializerNames;
        for (const auto& init : graph.initializer()) {
            int t = newTensor(init.name(), scope);
            auto it = originalInitializers.find(init.name());
            view_.tensors[t].initializer = it != originalInitializers.end() ? it->second : &init;
            view_.tensors[t].type = tensorTypeOf(init);
            view_.tensors[t].folded = true;
            initializerNames.insert(init.name());
        }
        for (const auto& input : graph.input()) {
            if (initializerNames.count(input.name())) continue;  // IR < 4: initializers listed
            int t = newTensor(input.name(), scope);
            assignType(view_.tensors[t], graph);
            ViewNode node;
            node.kind = ViewNode::Kind::Input;
            node.name = input.name();
            node.opType = "Input";
            node.category = NodeCategory::Input;
            node.group = group;
            node.outputs = {t};
            view_.tensors[t].producer = addNode(std::move(node));
        }
        std::set<std::string> graphOutputs;
        for (const auto& output : graph.output()) graphOutputs.insert(output.name());

        for (const auto& proto : graph.node())
            addOperator(proto, graph, group, scope, graphOutputs, pathPrefix, depth);

        for (const auto& output : graph.output()) {
            ViewNode node;
            node.kind = ViewNode::Kind::Output;
            node.name = output.name();
            node.opType = "Output";
            node.category = NodeCategory::Output;
            node.group = group;
            int t = scope.lookup(output.name());
            if (t < 0) t = newTensor(output.name(), scope);
            if (view_.tensors[t].folded) view_.tensors[t].folded = false;
            if (view_.tensors[t].type.elementType == 0) assignType(view_.tensors[t], graph);
            node.inputs = {t};
            addNode(std::move(node));
        }
        (void)isMain;
    }

    void addOperator(const onnx::NodeProto& proto, const onnx::GraphProto& graph, int graphGroup,
                     Scope& scope, const std::set<std::string>& graphOutputs,
                     const std::string& pathPrefix, int depth) {
        const bool isConstant = isOnnxOp(proto, "Constant");
        if (isConstant && options_.foldConstants && proto.output_size() == 1 &&
            !graphOutputs.count(proto.output(0))) {
            int t = newTensor(proto.output(0), scope);
            assignType(view_.tensors[t], graph);
            for (const auto& a : proto.attribute())
                if (a.name() == "value" && a.has_t()) {
                    view_.tensors[t].initializer = &a.t();
                    view_.tensors[t].type = tensorTypeOf(a.t());
                }
            view_.tensors[t].folded = true;
            constantTensors_.insert(t);
            return;
        }
        if (options_.foldConstants && foldsIntoReaders(proto, scope, graphOutputs)) {
            const int input = scope.lookup(proto.input(0));
            int t = newTensor(proto.output(0), scope);
            assignType(view_.tensors[t], graph);
            // An Identity passes its input's value on; the others change its shape, so only the
            // inferred type is shown.
            if (proto.op_type() == "Identity") {
                view_.tensors[t].initializer = view_.tensors[input].initializer;
                if (view_.tensors[t].type.elementType == 0)
                    view_.tensors[t].type = view_.tensors[input].type;
            }
            view_.tensors[t].folded = true;
            constantTensors_.insert(t);
            return;
        }
        int group = scopeGroupFor(proto.name(), graphGroup);
        (void)pathPrefix;

        auto function = functions_.find(proto.domain() + "::" + proto.op_type());
        if (function != functions_.end() && depth < options_.maxFunctionDepth) {
            addFunctionCall(proto, *function->second, graph, group, scope, depth);
            return;
        }

        ViewNode node;
        node.kind = ViewNode::Kind::Operator;
        node.name = proto.name();
        node.opType = proto.op_type();
        node.domain = proto.domain();
        node.category = categoryOfOperator(proto.op_type(), proto.domain());
        node.group = group;
        node.proto = &proto;
        const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
            proto.op_type(), static_cast<int>(opsetFor(proto.domain())), proto.domain());
        for (int i = 0; i < proto.input_size(); ++i) {
            const std::string& name = proto.input(i);
            int t = name.empty() ? -1 : scope.lookup(name);
            if (!name.empty() && t < 0) t = newTensor(name, scope);  // undefined: still shown
            node.inputs.push_back(t);
            if (t >= 0 && view_.tensors[t].folded) {
                ViewRow row;
                row.kind = constantTensors_.count(t) ? ViewRow::Kind::Constant
                                                     : ViewRow::Kind::Initializer;
                row.label = inputLabel(schema, i);
                row.tensor = t;
                std::string values = view_.tensors[t].initializer
                                         ? smallTensorValues(*view_.tensors[t].initializer)
                                         : std::string();
                row.text =
                    values.empty() ? "<" + view_.tensors[t].type.shapeText() + ">" : "= " + values;
                node.rows.push_back(std::move(row));
            }
        }
        for (const auto& a : proto.attribute()) {
            if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
                continue;
            ViewRow row;
            row.kind = ViewRow::Kind::Attribute;
            row.label = a.name();
            row.text = attributeValueText(a, 24);
            node.rows.push_back(std::move(row));
        }
        int index = addNode(std::move(node));
        for (const auto& output : proto.output()) {
            int t = output.empty() ? -1 : newTensor(output, scope);
            if (t >= 0) {
                assignType(view_.tensors[t], graph);
                view_.tensors[t].producer = index;
            }
            view_.nodes[index].outputs.push_back(t);
        }
        for (int i = 0; i < proto.input_size(); ++i) {
            int t = view_.nodes[index].inputs[i];
            if (t >= 0 && !view_.tensors[t].folded) view_.tensors[t].consumers.push_back(index);
        }

        // Control-flow bodies: groups beside their node, seeing the enclosing scope.
        if (depth >= options_.maxSubgraphDepth) return;
        for (const auto& a : proto.attribute()) {
            std::vector<const onnx::GraphProto*> bodies;
            if (a.type() == onnx::AttributeProto::GRAPH) bodies.push_back(&a.g());
            for (const auto& g : a.graphs()) bodies.push_back(&g);
            for (std::size_t b = 0; b < bodies.size(); ++b) {
                std::string owner = proto.name().empty()
                                        ? proto.op_type() + "_" + std::to_string(index)
                                        : lastComponent(proto.name());
                std::string title = owner + "." + a.name() +
                                    (bodies.size() > 1 ? "[" + std::to_string(b) + "]" : "");
                int sub = addGroup(ViewGroup::Kind::Subgraph,
                                   view_.groups[group].path + "/" + title, title, group);
                view_.groups[sub].owner = &proto;
                Scope inner;
                inner.outer = &scope;
                addGraph(*bodies[b], nullptr, sub, inner, view_.groups[sub].path, false, depth + 1);
            }
        }
    }

    // A call of a model-local function is a group holding the function's body, with the formal
    // inputs/outputs bound to the call's tensors.
    void addFunctionCall(const onnx::NodeProto& call, const onnx::FunctionProto& function,
                         const onnx::GraphProto& graph, int group, Scope& scope, int depth) {
        std::string title = call.name().empty() ? call.op_type() : lastComponent(call.name());
        int sub = addGroup(
            ViewGroup::Kind::Function,
            view_.groups[group].path + "/" + title + "#" + std::to_string(view_.groups.size()),
            title, group);
        view_.groups[sub].owner = &call;
        Scope inner;  // functions see only their formal inputs
        for (int i = 0; i < function.input_size() && i < call.input_size(); ++i) {
            int t = call.input(i).empty() ? -1 : scope.lookup(call.input(i));
            if (t >= 0) inner.tensors[function.input(i)] = t;
        }
        // Bodies have no value_info of their own; node outputs get the call's types at the end.
        onnx::GraphProto empty;
        std::set<std::string> noOutputs;
        for (const auto& node : function.node())
            addOperator(node, empty, sub, inner, noOutputs, view_.groups[sub].path, depth + 1);
        for (int i = 0; i < function.output_size() && i < call.output_size(); ++i) {
            if (call.output(i).empty()) continue;
            int t = inner.lookup(function.output(i));
            if (t < 0) continue;
            view_.tensors[t].name = call.output(i);
            assignType(view_.tensors[t], graph);
            scope.tensors[call.output(i)] = t;
        }
    }

    std::int64_t opsetFor(const std::string& domain) const {
        auto it = view_.opsets.find(canonicalDomain(domain));
        return it == view_.opsets.end() ? 1 : it->second;
    }

    static std::string inputLabel(const onnx::OpSchema* schema, int index) {
        if (schema && !schema->inputs().empty()) {
            const auto& formal = schema->inputs();
            std::size_t i = std::min<std::size_t>(index, formal.size() - 1);
            if (static_cast<std::size_t>(index) < formal.size() ||
                formal.back().GetOption() == onnx::OpSchema::Variadic)
                return formal[i].GetName();
        }
        return "input " + std::to_string(index);
    }

    // A scope group holding a single thing adds a level and no information: hoist its child.
    void compactScopes() {
        auto& groups = view_.groups;
        std::vector<bool> removed(groups.size(), false);
        for (int g = static_cast<int>(groups.size()) - 1; g > 0; --g) {  // children after parents
            if (groups[g].kind != ViewGroup::Kind::Scope || groups[g].children.size() != 1)
                continue;
            ViewUnitRef only = groups[g].children[0];
            int parent = groups[g].parent;
            for (auto& ref : groups[parent].children)
                if (ref.kind == ViewUnitRef::Kind::Group && ref.index == g) ref = only;
            if (only.kind == ViewUnitRef::Kind::Node)
                view_.nodes[only.index].group = parent;
            else
                groups[only.index].parent = parent;
            groups[g].children.clear();
            removed[g] = true;
        }
        std::vector<int> remap(groups.size(), -1);
        std::vector<ViewGroup> kept;
        for (std::size_t g = 0; g < groups.size(); ++g)
            if (!removed[g]) {
                remap[g] = static_cast<int>(kept.size());
                kept.push_back(std::move(groups[g]));
            }
        for (auto& g : kept) {
            if (g.parent >= 0) g.parent = remap[g.parent];
            for (auto& ref : g.children)
                if (ref.kind == ViewUnitRef::Kind::Group) ref.index = remap[ref.index];
        }
        for (auto& n : view_.nodes) n.group = remap[n.group];
        groups = std::move(kept);
        for (auto& g : groups) g.depth = g.parent < 0 ? 0 : groups[g.parent].depth + 1;
    }

    // A decoder's cache inputs (past_key_values.N.key / .value, past_k_N) are read each by one
    // layer, and its present outputs written each by one: in the root level they make one row
    // of inputs across the whole drawing, with edges the height of the graph, and one such row
    // of outputs. A family of graph inputs or outputs (names alike but for their digits, at
    // least homeIoFamilySize of them) is moved into the lowest name-scope group holding its
    // readers (or its producer), when that group is not the root: each layer shows its own.
    void homeIoFamilies() {
        if (options_.homeIoFamilySize <= 0) return;
        auto familyOf = [](const std::string& name) {
            std::string key;
            for (char c : name) {
                const bool digit = c >= '0' && c <= '9';
                if (!digit)
                    key += c;
                else if (key.empty() || key.back() != '#')
                    key += '#';
            }
            return key;
        };
        auto& root = view_.groups[0];
        std::map<std::string, int> members;
        for (const auto& ref : root.children)
            if (ref.kind == ViewUnitRef::Kind::Node &&
                view_.nodes[ref.index].kind != ViewNode::Kind::Operator)
                ++members[familyOf(view_.nodes[ref.index].name)];
        // A group the name scopes made (not a subgraph's or a function's body).
        auto scopeOnly = [this](int group) {
            for (int g : view_.groupChain(group))
                if (view_.groups[g].kind != ViewGroup::Kind::Scope &&
                    view_.groups[g].kind != ViewGroup::Kind::Root)
                    return false;
            return true;
        };
        std::vector<ViewUnitRef> kept;
        std::vector<std::pair<int, int>> moves;  // (node, group)
        for (const auto& ref : root.children) {
            int home = 0;
            if (ref.kind == ViewUnitRef::Kind::Node) {
                const auto& node = view_.nodes[ref.index];
                const std::string family = familyOf(node.name);
                if (node.kind != ViewNode::Kind::Operator &&
                    family.find('#') != std::string::npos &&
                    members[family] >= options_.homeIoFamilySize)
                    home = ioHome(node);
            }
            if (home > 0 && scopeOnly(home))
                moves.emplace_back(ref.index, home);
            else
                kept.push_back(ref);
        }
        if (moves.empty()) return;
        root.children = std::move(kept);
        for (const auto& [node, group] : moves) {
            auto& children = view_.groups[group].children;
            const bool input = view_.nodes[node].kind == ViewNode::Kind::Input;
            // Inputs first, outputs last, each in the file's order.
            auto at =
                input ? std::find_if(children.begin(), children.end(),
                                     [this](const ViewUnitRef& r) {
                                         return r.kind != ViewUnitRef::Kind::Node ||
                                                view_.nodes[r.index].kind != ViewNode::Kind::Input;
                                     })
                      : children.end();
            children.insert(at, {ViewUnitRef::Kind::Node, node});
            view_.nodes[node].group = group;
        }
    }

    // The group an input's readers (or an output's producer) share; 0 when none.
    int ioHome(const ViewNode& node) const {
        if (node.kind == ViewNode::Kind::Input) {
            if (node.outputs.empty() || node.outputs[0] < 0) return 0;
            int home = -1;
            for (int reader : view_.tensors[node.outputs[0]].consumers) {
                if (view_.nodes[reader].kind != ViewNode::Kind::Operator) return 0;
                const int g = view_.nodes[reader].group;
                home = home < 0 ? g : view_.lowestCommonAncestor(home, g);
            }
            return std::max(home, 0);
        }
        if (node.inputs.empty() || node.inputs[0] < 0) return 0;
        const int producer = view_.tensors[node.inputs[0]].producer;
        if (producer < 0 || view_.nodes[producer].kind != ViewNode::Kind::Operator) return 0;
        return view_.nodes[producer].group;
    }

    // Children of one level beyond maxLevelUnits go into Range groups of rangeSize consecutive
    // children (graph inputs and outputs stay where they are).
    void splitLargeLevels() {
        const std::size_t groupCount = view_.groups.size();
        for (std::size_t g = 0; g < groupCount; ++g) {
            if (static_cast<int>(view_.groups[g].children.size()) <= options_.maxLevelUnits)
                continue;
            std::vector<ViewUnitRef> old = std::move(view_.groups[g].children);
            std::vector<ViewUnitRef> kept;
            std::vector<ViewUnitRef> run;
            auto isGraphIo = [&](const ViewUnitRef& ref) {
                return ref.kind == ViewUnitRef::Kind::Node &&
                       view_.nodes[ref.index].kind != ViewNode::Kind::Operator;
            };
            auto flush = [&] {
                if (run.empty()) return;
                ViewGroup range;
                range.kind = ViewGroup::Kind::Range;
                range.parent = static_cast<int>(g);
                auto name = [&](const ViewUnitRef& ref) {
                    return ref.kind == ViewUnitRef::Kind::Node
                               ? view_.nodes[ref.index].name.empty()
                                     ? view_.nodes[ref.index].opType
                                     : lastComponent(view_.nodes[ref.index].name)
                               : view_.groups[ref.index].title;
                };
                range.title = name(run.front()) + " … " + name(run.back());
                range.path =
                    view_.groups[g].path + "/[" + std::to_string(view_.groups.size()) + "]";
                const int index = static_cast<int>(view_.groups.size());
                for (const auto& ref : run) {
                    if (ref.kind == ViewUnitRef::Kind::Node)
                        view_.nodes[ref.index].group = index;
                    else
                        view_.groups[ref.index].parent = index;
                }
                range.children = std::move(run);
                run.clear();
                view_.groups.push_back(std::move(range));
                kept.push_back({ViewUnitRef::Kind::Group, index});
            };
            for (const auto& ref : old) {
                if (isGraphIo(ref)) {
                    flush();
                    kept.push_back(ref);
                    continue;
                }
                run.push_back(ref);
                if (static_cast<int>(run.size()) >= options_.rangeSize) flush();
            }
            flush();
            view_.groups[g].children = std::move(kept);
        }
        updateDepths();  // ranges come after the groups they hold
    }

    // Depths from the root down: groups added to wrap others come after them in `groups`.
    void updateDepths() {
        std::vector<int> order = {0};
        for (std::size_t i = 0; i < order.size(); ++i) {
            auto& group = view_.groups[order[i]];
            group.depth = group.parent < 0 ? 0 : view_.groups[group.parent].depth + 1;
            for (const auto& ref : group.children)
                if (ref.kind == ViewUnitRef::Kind::Group) order.push_back(ref.index);
        }
    }

    // A file without name scopes (older exporters, renamed nodes) gets its hierarchy from its
    // structure: the longest run of operators that repeats with a fixed period (the layers of
    // a stack, written one after another) becomes groups block.0, block.1, ... of one period
    // each. Operators are compared by op type and arity, in file order.
    void groupRepeatedBlocks() {
        auto& root = view_.groups[0];
        std::vector<int> ops;
        for (const auto& ref : root.children) {
            if (ref.kind == ViewUnitRef::Kind::Group) return;  // scopes or subgraphs: use those
            if (view_.nodes[ref.index].kind == ViewNode::Kind::Operator) ops.push_back(ref.index);
        }
        const int n = static_cast<int>(ops.size());
        if (n <= options_.maxLevelUnits) return;
        std::vector<std::size_t> signature(n);
        for (int i = 0; i < n; ++i) {
            const auto& node = view_.nodes[ops[i]];
            signature[i] = std::hash<std::string>{}(node.domain + "::" + node.opType) ^
                           (node.inputs.size() * 0x9e3779b97f4a7c15ULL) ^
                           (node.outputs.size() << 7);
        }
        // For each period, the longest run of positions equal to the one a period later: the
        // repeated stretch covers that run plus one period. The widest cover wins (a multiple
        // of the true period covers less, a sub-period matches only short runs).
        int bestPeriod = 0, bestStart = 0, bestCount = 0;
        const int maxPeriod = std::min(n / 3, 4000);
        for (int period = std::max(2, options_.minBlockOperators); period <= maxPeriod; ++period) {
            int run = 0;
            for (int i = 0; i + period < n; ++i) {
                run = signature[i] == signature[i + period] ? run + 1 : 0;
                const int count = (run + period) / period;
                if (count >= 3 && count * period > bestCount * bestPeriod) {
                    bestPeriod = period;
                    bestCount = count;
                    bestStart = i - run + 1;
                }
            }
        }
        if (bestCount < 3) return;
        // A stretch that repeats with a shorter period (a chain of Add/Mul/Relu motifs) is that
        // motif: blocks smaller than minBlockOperators are no structure worth a box.
        const int stretch = bestCount * bestPeriod;
        for (int d = 1; d < bestPeriod; ++d) {
            if (bestPeriod % d) continue;
            bool periodic = true;
            for (int i = bestStart; periodic && i + d < bestStart + stretch; ++i)
                periodic = signature[i] == signature[i + d];
            if (!periodic) continue;
            if (d < options_.minBlockOperators) return;
            bestCount = stretch / d;
            bestPeriod = d;
            break;
        }
        std::vector<int> blockOf(view_.nodes.size(), -1);
        for (int k = 0; k < bestCount; ++k) {
            ViewGroup block;
            block.kind = ViewGroup::Kind::Scope;
            block.title = "block." + std::to_string(k);
            block.path = "/" + block.title;
            block.parent = 0;
            const int index = static_cast<int>(view_.groups.size());
            for (int i = bestStart + k * bestPeriod; i < bestStart + (k + 1) * bestPeriod; ++i) {
                block.children.push_back({ViewUnitRef::Kind::Node, ops[i]});
                view_.nodes[ops[i]].group = index;
                blockOf[ops[i]] = index;
            }
            view_.groups.push_back(std::move(block));
        }
        auto& top = view_.groups[0];
        std::vector<ViewUnitRef> kept;
        std::set<int> placed;
        for (const auto& ref : top.children) {
            const int block = ref.kind == ViewUnitRef::Kind::Node ? blockOf[ref.index] : -1;
            if (block < 0)
                kept.push_back(ref);
            else if (placed.insert(block).second)
                kept.push_back({ViewUnitRef::Kind::Group, block});
        }
        top.children = std::move(kept);
        for (auto& g : view_.groups) g.depth = g.parent < 0 ? 0 : view_.groups[g.parent].depth + 1;
    }

    // What a group is built of, independent of names: its children's op types and arities and
    // its child groups' structures, in order.
    std::size_t structureOf(int group, std::vector<std::size_t>& memo) const {
        if (memo[group]) return memo[group];
        std::size_t h = 0xcbf29ce484222325ULL;
        auto mix = [&](std::size_t v) { h = (h ^ v) * 0x100000001b3ULL; };
        for (const auto& ref : view_.groups[group].children) {
            if (ref.kind == ViewUnitRef::Kind::Group) {
                mix(structureOf(ref.index, memo) + 0x51);
            } else {
                const auto& node = view_.nodes[ref.index];
                mix(std::hash<std::string>{}(node.opType));
                mix(node.inputs.size() * 31 + node.outputs.size());
            }
        }
        return memo[group] = h | 1;
    }

    // Consecutive sibling groups built alike (a layer stack) go into one Repeat group.
    void foldRepeats() {
        std::vector<std::size_t> memo(view_.groups.size(), 0);
        const std::size_t existing = view_.groups.size();
        for (std::size_t g = 0; g < existing; ++g) {
            std::vector<ViewUnitRef> old = view_.groups[g].children;
            std::vector<ViewUnitRef> kept;
            bool changed = false;
            for (std::size_t i = 0; i < old.size();) {
                std::size_t j = i;
                if (old[i].kind == ViewUnitRef::Kind::Group &&
                    view_.groups[old[i].index].kind == ViewGroup::Kind::Scope) {
                    const std::size_t shape = structureOf(old[i].index, memo);
                    while (j + 1 < old.size() && old[j + 1].kind == ViewUnitRef::Kind::Group &&
                           view_.groups[old[j + 1].index].kind == ViewGroup::Kind::Scope &&
                           structureOf(old[j + 1].index, memo) == shape)
                        ++j;
                }
                if (j - i + 1 < 3) {
                    kept.push_back(old[i]);
                    ++i;
                    continue;
                }
                ViewGroup repeat;
                repeat.kind = ViewGroup::Kind::Repeat;
                repeat.parent = static_cast<int>(g);
                repeat.repeats = static_cast<int>(j - i + 1);
                repeat.title = view_.groups[old[i].index].title + " \xe2\x80\xa6 " +
                               view_.groups[old[j].index].title;
                repeat.path = view_.groups[g].path + "/[" + view_.groups[old[i].index].title + "*" +
                              std::to_string(repeat.repeats) + "]";
                const int index = static_cast<int>(view_.groups.size());
                for (std::size_t k = i; k <= j; ++k) {
                    repeat.children.push_back(old[k]);
                    view_.groups[old[k].index].parent = index;
                }
                view_.groups.push_back(std::move(repeat));
                memo.push_back(0);
                kept.push_back({ViewUnitRef::Kind::Group, index});
                changed = true;
                i = j + 1;
            }
            if (changed) view_.groups[g].children = std::move(kept);
        }
        updateDepths();  // repeats come after the groups they hold
    }

    // The child group of `ancestor` holding `group`; -1 when `group` is `ancestor` itself.
    int childUnder(int group, int ancestor) const {
        if (group == ancestor) return -1;
        while (view_.groups[group].parent != ancestor) group = view_.groups[group].parent;
        return group;
    }

    // A tensor whose readers sit in many different blocks (children of the lowest group holding
    // the producer and every reader), other than the producer's own block, is read "far away":
    // an attention mask read by every layer. The hidden state read by the query, key and value
    // projections of the next layer is not (one block). Readers outside the producer's block get
    // a row naming the producer; buildEdges draws no edge to them.
    void markStubs() {
        if (options_.stubReaderGroups <= 0) return;
        for (int t = 0; t < static_cast<int>(view_.tensors.size()); ++t) {
            auto& tensor = view_.tensors[t];
            if (tensor.folded || tensor.producer < 0) continue;
            std::vector<int> readers;
            for (int reader : tensor.consumers)
                if (view_.nodes[reader].kind == ViewNode::Kind::Operator) readers.push_back(reader);
            if (static_cast<int>(readers.size()) < options_.stubReaderGroups) continue;
            const int home = view_.nodes[tensor.producer].group;
            int lca = home;
            for (int reader : readers)
                lca = view_.lowestCommonAncestor(lca, view_.nodes[reader].group);
            const int homeBlock = childUnder(home, lca);
            std::set<int> blocks;
            std::vector<int> far;
            for (int reader : readers) {
                const int block = childUnder(view_.nodes[reader].group, lca);
                if (block < 0 || block == homeBlock) continue;  // beside the producer
                blocks.insert(block);
                far.push_back(reader);
            }
            if (static_cast<int>(blocks.size()) < options_.stubReaderGroups) continue;
            tensor.stub = true;
            const auto& producer = view_.nodes[tensor.producer];
            const std::string source = producer.kind != ViewNode::Kind::Operator ? producer.name
                                       : producer.name.empty()                   ? producer.opType
                                                               : lastComponent(producer.name);
            for (int reader : far) {
                if (!stubReads_.insert({t, reader}).second) continue;
                auto& node = view_.nodes[reader];
                const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
                    node.opType, static_cast<int>(opsetFor(node.domain)), node.domain);
                for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
                    if (node.inputs[i] != t) continue;
                    ViewRow row;
                    row.kind = ViewRow::Kind::Stub;
                    row.label = inputLabel(schema, i);
                    row.tensor = t;
                    row.text = "\xe2\x86\x90 " + shortened(source, 28);  // a left arrow
                    // Among the input rows, before the attributes.
                    auto at = std::find_if(
                        node.rows.begin(), node.rows.end(),
                        [](const ViewRow& r) { return r.kind == ViewRow::Kind::Attribute; });
                    node.rows.insert(at, std::move(row));
                }
            }
        }
    }

    bool drawnAsStub(int tensor, int reader) const {
        return stubReads_.count({tensor, reader}) > 0;
    }

    void countNodes() {
        for (const auto& n : view_.nodes) {
            if (n.kind != ViewNode::Kind::Operator) continue;
            ++view_.operatorCount;
            for (int g = n.group; g >= 0; g = view_.groups[g].parent) ++view_.groups[g].nodeCount;
        }
    }

    void buildEdges() {
        for (int n = 0; n < static_cast<int>(view_.nodes.size()); ++n) {
            const auto& node = view_.nodes[n];
            std::set<int> seen;
            for (int t : node.inputs) {
                if (t < 0 || view_.tensors[t].folded || view_.tensors[t].producer < 0) continue;
                if (drawnAsStub(t, n) || !seen.insert(t).second) continue;
                view_.edges.push_back({t, view_.tensors[t].producer, n});
            }
            if (node.kind == ViewNode::Kind::Output)
                for (int t : node.inputs)
                    if (t >= 0 && view_.tensors[t].producer >= 0)
                        view_.tensors[t].consumers.push_back(n);
        }
    }

    // The child of `ancestor` that contains `node` (or the node itself).
    ViewUnitRef unitOf(int node, int ancestor) const {
        int g = view_.nodes[node].group;
        if (g == ancestor) return {ViewUnitRef::Kind::Node, node};
        while (view_.groups[g].parent != ancestor) g = view_.groups[g].parent;
        return {ViewUnitRef::Kind::Group, g};
    }

    void buildLevels() {
        auto& levels = view_.levels;
        levels.assign(view_.groups.size(), {});
        std::vector<std::map<ViewUnitRef, int>> unitIndex(view_.groups.size());
        std::vector<std::set<std::tuple<int, int, int>>> seen(view_.groups.size());
        for (std::size_t g = 0; g < view_.groups.size(); ++g)
            for (const auto& child : view_.groups[g].children) {
                unitIndex[g][child] = static_cast<int>(levels[g].units.size());
                levels[g].units.push_back(child);
            }
        auto unit = [&](int g, ViewUnitRef ref) {
            auto [it, inserted] =
                unitIndex[g].emplace(ref, static_cast<int>(levels[g].units.size()));
            if (inserted) levels[g].units.push_back(ref);
            return it->second;
        };
        auto addEdge = [&](int g, int tail, int head, int tensor, bool labelled) {
            if (tail == head || !seen[g].insert({tail, head, tensor}).second) return;
            levels[g].edges.push_back({tail, head, tensor, labelled});
        };
        for (const auto& e : view_.edges) {
            int from = view_.nodes[e.from].group, to = view_.nodes[e.to].group;
            int lca = view_.lowestCommonAncestor(from, to);
            addEdge(lca, unit(lca, unitOf(e.from, lca)), unit(lca, unitOf(e.to, lca)), e.tensor,
                    true);
            for (int g = from; g != lca; g = view_.groups[g].parent)
                addEdge(g, unit(g, unitOf(e.from, g)),
                        unit(g, {ViewUnitRef::Kind::OutPort, e.tensor}), e.tensor, false);
            for (int g = to; g != lca; g = view_.groups[g].parent)
                addEdge(g, unit(g, {ViewUnitRef::Kind::InPort, e.tensor}), unit(g, unitOf(e.to, g)),
                        e.tensor, false);
        }
    }

    ViewGraph& view_;
    const ViewGraphOptions& options_;
    std::unordered_map<std::string, const onnx::FunctionProto*> functions_;
    std::map<std::pair<int, std::string>, int> scopeGroups_;
    std::unordered_map<const onnx::GraphProto*, std::unordered_map<std::string, ViewTensorType>>
        types_;
    std::unordered_set<int> constantTensors_;
    std::set<std::pair<int, int>> stubReads_;  // (tensor, reader) drawn as a stub row
};

}  // namespace

NodeCategory categoryOfOperator(std::string_view opType, std::string_view domain) {
    if (domain == "ai.onnx.ml") return NodeCategory::ClassicalMl;
    const auto& table = categoryTable();
    auto it = table.find(opType);
    return it == table.end() ? NodeCategory::Other : it->second;
}

const char* categoryName(NodeCategory category) {
    switch (category) {
        case NodeCategory::Layer:
            return "layer";
        case NodeCategory::Activation:
            return "activation";
        case NodeCategory::Pool:
            return "pool";
        case NodeCategory::Normalization:
            return "normalization";
        case NodeCategory::Dropout:
            return "dropout";
        case NodeCategory::Shape:
            return "shape";
        case NodeCategory::Tensor:
            return "tensor";
        case NodeCategory::Arithmetic:
            return "arithmetic";
        case NodeCategory::Logic:
            return "logic";
        case NodeCategory::Control:
            return "control";
        case NodeCategory::Quantization:
            return "quantization";
        case NodeCategory::ClassicalMl:
            return "classical ml";
        case NodeCategory::Input:
            return "input";
        case NodeCategory::Output:
            return "output";
        default:
            return "other";
    }
}

std::string ViewDim::text() const {
    if (isSymbolic()) return symbol;
    if (isKnown()) return std::to_string(value);
    return "?";
}

bool ViewTensorType::hasSymbolicDim() const {
    return std::any_of(dims.begin(), dims.end(), [](const ViewDim& d) { return d.isSymbolic(); });
}

std::string ViewTensorType::shapeText() const {
    if (!hasShape) return "?";
    if (dims.empty()) return "scalar";
    std::vector<std::string> parts;
    for (const auto& d : dims) parts.push_back(d.text());
    return joinDims(parts, "x");
}

std::string ViewTensorType::text() const {
    return elementTypeName(elementType) + "[" + shapeText() + "]";
}

ViewTensorType tensorTypeOf(const onnx::TypeProto& type) {
    ViewTensorType out;
    const onnx::TypeProto_Tensor* tensor = nullptr;
    if (type.has_tensor_type())
        tensor = &type.tensor_type();
    else if (type.has_sparse_tensor_type()) {
        out.elementType = type.sparse_tensor_type().elem_type();
        return out;
    }
    if (!tensor) return out;
    out.elementType = tensor->elem_type();
    if (tensor->has_shape()) {
        out.hasShape = true;
        for (const auto& d : tensor->shape().dim()) {
            ViewDim dim;
            if (d.has_dim_value()) dim.value = d.dim_value();
            // onnx shape inference names the dims it cannot compute unk__N: unknown, not a symbol.
            else if (d.has_dim_param() && d.dim_param().rfind("unk__", 0) != 0)
                dim.symbol = d.dim_param();
            out.dims.push_back(dim);
        }
    }
    return out;
}

ViewTensorType tensorTypeOf(const onnx::TensorProto& tensor) {
    ViewTensorType out;
    out.elementType = tensor.data_type();
    out.hasShape = true;
    for (auto d : tensor.dims()) out.dims.push_back(ViewDim{d, {}});
    return out;
}

std::string attributeValueText(const onnx::AttributeProto& a, std::size_t maxLength) {
    using A = onnx::AttributeProto;
    std::string text;
    auto list = [&](const auto& values, auto format) {
        std::vector<std::string> parts;
        for (const auto& v : values) parts.push_back(format(v));
        return parts;
    };
    switch (a.type()) {
        case A::INT:
            // Cast's `to` (and friends) name an element type.
            text = (a.name() == "to" || a.name() == "dtype" || a.name() == "output_dtype")
                       ? elementTypeName(static_cast<std::int32_t>(a.i()))
                       : std::to_string(a.i());
            break;
        case A::FLOAT:
            text = formatFloat(a.f());
            break;
        case A::STRING:
            text = "\"" + a.s() + "\"";
            break;
        case A::TENSOR: {
            std::string values = smallTensorValues(a.t());
            text = values.empty() ? "<tensor " + tensorTypeOf(a.t()).text() + ">" : values;
            break;
        }
        case A::GRAPH:
            text = "<graph>";
            break;
        case A::INTS: {
            auto parts = list(a.ints(), [](std::int64_t v) { return std::to_string(v); });
            // Kernel sizes and strides read better as 3x3 than [3, 3].
            bool spatial =
                a.name() == "kernel_shape" || a.name() == "strides" || a.name() == "dilations";
            text = spatial ? joinDims(parts, "x") : "[" + joinDims(parts, ", ") + "]";
            break;
        }
        case A::FLOATS:
            text = "[" + joinDims(list(a.floats(), [](float v) { return formatFloat(v); }), ", ") +
                   "]";
            break;
        case A::STRINGS:
            text = "[" +
                   joinDims(list(a.strings(), [](const std::string& v) { return "\"" + v + "\""; }),
                            ", ") +
                   "]";
            break;
        case A::GRAPHS:
            text = "<" + std::to_string(a.graphs_size()) + " graphs>";
            break;
        case A::TENSORS:
            text = "<" + std::to_string(a.tensors_size()) + " tensors>";
            break;
        default:
            text = "<?>";
            break;
    }
    return shortened(text, maxLength);
}

std::string ViewUnitRef::id() const {
    static const char prefixes[] = {'n', 'g', 'i', 'o'};
    return prefixes[static_cast<int>(kind)] + std::to_string(index);
}

std::string ViewNode::title() const {
    if (kind != Kind::Operator) return name;
    return opType;
}

int ViewGraph::opsetOf(const std::string& domain) const {
    auto it = opsets.find(canonicalDomain(domain));
    return it == opsets.end() ? 0 : static_cast<int>(it->second);
}

bool ViewGraph::isAncestor(int group, int descendant) const {
    for (int g = descendant; g >= 0; g = groups[g].parent)
        if (g == group) return true;
    return false;
}

int ViewGraph::lowestCommonAncestor(int a, int b) const {
    while (groups[a].depth > groups[b].depth) a = groups[a].parent;
    while (groups[b].depth > groups[a].depth) b = groups[b].parent;
    while (a != b) {
        a = groups[a].parent;
        b = groups[b].parent;
    }
    return a;
}

std::vector<int> ViewGraph::groupChain(int group) const {
    std::vector<int> chain;
    for (int g = group; g >= 0; g = groups[g].parent) chain.push_back(g);
    return chain;
}

int ViewGraph::findNodeByName(const std::string& name) const {
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n)
        if (nodes[n].name == name) return n;
    return -1;
}

Result<ViewGraph> buildViewGraph(std::shared_ptr<const onnx::ModelProto> model,
                                 const ViewGraphOptions& options) {
    if (!model) return makeError("view graph", "no model");
    try {
        ViewGraph view;
        view.model = model;
        for (const auto& o : model->opset_import())
            view.opsets[canonicalDomain(o.domain())] = o.version();
        if (options.inferShapes) {
            auto shapes = options.shapes ? options.shapes : inferShapes(*model);
            if (!shapes->ok()) view.shapeInferenceError = shapes->message();
            view.inferred = shapes->modelPointer();
        } else {
            view.inferred = std::make_shared<const onnx::ModelProto>(copyWithoutBulkData(*model));
        }
        Builder(view, options).build();
        return view;
    } catch (const std::exception& e) {
        return makeError("view graph", e.what());
    }
}

}  // namespace onnxlens
