// The edits that restructure the graph: rename, prune, extract, delete-node, make-batch-dynamic.
// Each runs on the working copy of applyModelEdit (ModelEdits.cpp), so an error midway leaves the
// model untouched.
#include <algorithm>
#include <map>

#include "ModelEditSupport.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/NodeAttributes.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace detail {

namespace {

// Renames every occurrence of the value `from` in `graph` and its subgraphs; a subgraph that
// defines `from` itself (shadowing) keeps its own.
void renameInGraph(onnx::GraphProto& graph, const std::string& from, const std::string& to,
                   bool isRoot) {
    if (!isRoot && definedValues(graph).count(from)) return;
    auto renameInfos = [&](auto* infos) {
        for (auto& v : *infos)
            if (v.name() == from) v.set_name(to);
    };
    renameInfos(graph.mutable_input());
    renameInfos(graph.mutable_output());
    renameInfos(graph.mutable_value_info());
    for (auto& t : *graph.mutable_initializer())
        if (t.name() == from) t.set_name(to);
    for (auto& s : *graph.mutable_sparse_initializer())
        if (s.values().name() == from) s.mutable_values()->set_name(to);
    for (auto& a : *graph.mutable_quantization_annotation())
        if (a.tensor_name() == from) a.set_tensor_name(to);
    for (auto& node : *graph.mutable_node()) {
        for (auto& in : *node.mutable_input())
            if (in == from) in = to;
        for (auto& out : *node.mutable_output())
            if (out == from) out = to;
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g()) renameInGraph(*a.mutable_g(), from, to, false);
            for (auto& g : *a.mutable_graphs()) renameInGraph(g, from, to, false);
        }
    }
}

int renameNodesInGraph(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
    int count = 0;
    for (auto& node : *graph.mutable_node()) {
        if (node.name() == from) {
            node.set_name(to);
            ++count;
        }
        for (auto& a : *node.mutable_attribute()) {
            if (a.has_g()) count += renameNodesInGraph(*a.mutable_g(), from, to);
            for (auto& g : *a.mutable_graphs()) count += renameNodesInGraph(g, from, to);
        }
    }
    return count;
}

// Every value of the main graph some node (or subgraph, or graph output) reads.
std::set<std::string> readValues(const onnx::GraphProto& graph) {
    std::set<std::string> reads;
    for (const auto& node : graph.node()) {
        for (const auto& in : node.input())
            if (!in.empty()) reads.insert(in);
        for (const auto& n : outerScopeReads(node)) reads.insert(n);
    }
    for (const auto& o : graph.output()) reads.insert(o.name());
    return reads;
}

bool isInitializer(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& t : graph.initializer())
        if (t.name() == name) return true;
    return false;
}

bool isGraphInput(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& v : graph.input())
        if (v.name() == name) return true;
    return false;
}

bool isGraphOutput(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& v : graph.output())
        if (v.name() == name) return true;
    return false;
}

// Removes initializers (and their graph-input entries, IR < 4) in `names`.
int removeInitializers(onnx::GraphProto& graph, const std::set<std::string>& names) {
    auto* inits = graph.mutable_initializer();
    const int before = inits->size();
    inits->erase(std::remove_if(inits->begin(), inits->end(),
                                [&](const onnx::TensorProto& t) { return names.count(t.name()); }),
                 inits->end());
    auto* sparse = graph.mutable_sparse_initializer();
    sparse->erase(std::remove_if(sparse->begin(), sparse->end(),
                                 [&](const onnx::SparseTensorProto& s) {
                                     return names.count(s.values().name()) > 0;
                                 }),
                  sparse->end());
    auto* inputs = graph.mutable_input();
    inputs->erase(
        std::remove_if(inputs->begin(), inputs->end(),
                       [&](const onnx::ValueInfoProto& v) { return names.count(v.name()) > 0; }),
        inputs->end());
    return before - inits->size();
}

void removeNodes(onnx::GraphProto& graph, const std::vector<bool>& remove) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph.node_size(); ++i)
        if (!remove[static_cast<std::size_t>(i)]) kept.Add()->Swap(graph.mutable_node(i));
    graph.mutable_node()->Swap(&kept);
}

bool sameTensorType(const onnx::TypeProto& a, const onnx::TypeProto& b) {
    if (!a.has_tensor_type() || !b.has_tensor_type()) return false;
    const auto& ta = a.tensor_type();
    const auto& tb = b.tensor_type();
    if (ta.elem_type() != tb.elem_type() || !ta.has_shape() || !tb.has_shape()) return false;
    if (ta.shape().dim_size() != tb.shape().dim_size()) return false;
    for (int i = 0; i < ta.shape().dim_size(); ++i) {
        const auto& da = ta.shape().dim(i);
        const auto& db = tb.shape().dim(i);
        if (da.has_dim_value() && db.has_dim_value() && da.dim_value() == db.dim_value()) continue;
        if (da.has_dim_param() && db.has_dim_param() && !da.dim_param().empty() &&
            da.dim_param() == db.dim_param())
            continue;
        return false;
    }
    return true;
}

void addInitializer(onnx::ModelProto& model, const onnx::TensorProto& tensor) {
    *model.mutable_graph()->add_initializer() = tensor;
    if (model.ir_version() < 4) {  // initializers were graph inputs then
        auto* input = model.mutable_graph()->add_input();
        input->set_name(tensor.name());
        auto* t = input->mutable_type()->mutable_tensor_type();
        t->set_elem_type(tensor.data_type());
        for (auto d : tensor.dims()) t->mutable_shape()->add_dim()->set_dim_value(d);
    }
}

}  // namespace

Status renameValue(onnx::ModelProto& model, const std::string& from, const std::string& to,
                   ModelEditReport& report) {
    std::set<std::string> values;
    collectValueNames(model.graph(), values);
    if (!values.count(from)) return makeError("", "no tensor " + quoteName(from));
    if (values.count(to))
        return makeError("", "the name " + quoteName(to) + " is already used by a tensor");
    renameInGraph(*model.mutable_graph(), from, to, true);
    report.changes.push_back("tensor " + quoteName(from) + " is now " + quoteName(to));
    return Ok{};
}

Status renameNode(onnx::ModelProto& model, const std::string& from, const std::string& to,
                  ModelEditReport& report) {
    std::set<std::string> names;
    collectNodeNames(model.graph(), names);
    if (names.count(to))
        return makeError("", "the name " + quoteName(to) + " is already used by a node");
    int count = 0;
    if (names.count(from)) {
        count = renameNodesInGraph(*model.mutable_graph(), from, to);
    } else if (int index = findNode(model.graph(), from); index >= 0) {
        model.mutable_graph()->mutable_node(index)->set_name(to);
        count = 1;
    }
    if (count == 0) return makeError("", "no node or tensor " + quoteName(from));
    report.changes.push_back("node " + quoteName(from) + " is now " + quoteName(to));
    return Ok{};
}

Status pruneGraph(onnx::ModelProto& model, ModelEditReport& report) {
    auto& graph = *model.mutable_graph();
    std::set<std::string> live;
    for (const auto& o : graph.output()) live.insert(o.name());
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    for (int i = graph.node_size() - 1; i >= 0; --i) {
        const auto& node = graph.node(i);
        bool used = false;
        for (const auto& out : node.output()) used = used || (!out.empty() && live.count(out));
        if (!used) {
            remove[static_cast<std::size_t>(i)] = true;
            continue;
        }
        for (const auto& in : node.input())
            if (!in.empty()) live.insert(in);
        for (const auto& n : outerScopeReads(node)) live.insert(n);
    }
    const int removedNodes = static_cast<int>(std::count(remove.begin(), remove.end(), true));
    removeNodes(graph, remove);
    std::set<std::string> unused;
    for (const auto& t : graph.initializer())
        if (!live.count(t.name())) unused.insert(t.name());
    for (const auto& s : graph.sparse_initializer())
        if (!live.count(s.values().name())) unused.insert(s.values().name());
    const int removedInitializers = removeInitializers(graph, unused);
    const auto defined = definedValues(graph);
    std::set<std::string> gone;
    for (const auto& v : graph.value_info())
        if (!defined.count(v.name())) gone.insert(v.name());
    dropValueInfo(graph, gone);
    report.nodesRemoved += removedNodes;
    report.initializersRemoved += removedInitializers;
    report.changes.push_back(std::to_string(removedNodes) + " dead nodes and " +
                             std::to_string(removedInitializers) + " unused initializers removed");
    return Ok{};
}

Status extractSubgraph(onnx::ModelProto& model, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, ModelEditReport& report) {
    auto& graph = *model.mutable_graph();
    if (outputs.empty()) return makeError("", "no output given to extract");
    const auto defined = definedValues(graph);
    for (const auto& name : inputs)
        if (!defined.count(name)) return makeError("", "no tensor " + quoteName(name) + " (input)");
    for (const auto& name : outputs)
        if (!defined.count(name))
            return makeError("", "no tensor " + quoteName(name) + " (output)");
    const std::set<std::string> boundary(inputs.begin(), inputs.end());
    const GraphIndex index(graph);
    std::set<std::string> initializers;
    for (const auto& t : graph.initializer()) initializers.insert(t.name());
    for (const auto& s : graph.sparse_initializer()) initializers.insert(s.values().name());

    std::vector<bool> keep(static_cast<std::size_t>(graph.node_size()), false);
    std::set<std::string> seen, keptInitializers;
    std::vector<std::string> stack(outputs.begin(), outputs.end());
    while (!stack.empty()) {
        const std::string value = stack.back();
        stack.pop_back();
        if (!seen.insert(value).second) continue;
        if (boundary.count(value)) continue;
        const int producer = index.producer(value);
        if (producer >= 0) {
            if (keep[static_cast<std::size_t>(producer)]) continue;
            keep[static_cast<std::size_t>(producer)] = true;
            const auto& node = graph.node(producer);
            for (const auto& in : node.input())
                if (!in.empty()) stack.push_back(in);
            for (const auto& n : outerScopeReads(node)) stack.push_back(n);
        } else if (initializers.count(value)) {
            keptInitializers.insert(value);
        } else {
            return makeError("", "the cut leaves " + quoteName(value) + " undefined: " +
                                     (isGraphInput(graph, value)
                                          ? "it is a model input not among the extract inputs"
                                          : "nothing produces it") +
                                     "; add it to the inputs");
        }
    }
    auto shapes = inferShapes(model);
    onnx::GraphProto result;
    result.set_name(graph.name());
    result.set_doc_string(graph.doc_string());
    for (const auto& name : inputs) {
        auto type = valueType(graph, name, shapes.get());
        if (!type) return makeError("", "the type of the input " + quoteName(name) + " is unknown");
        auto* v = result.add_input();
        v->set_name(name);
        *v->mutable_type() = *type;
    }
    for (const auto& name : outputs) {
        auto type = valueType(graph, name, shapes.get());
        if (!type)
            return makeError("", "the type of the output " + quoteName(name) + " is unknown");
        auto* v = result.add_output();
        v->set_name(name);
        *v->mutable_type() = *type;
    }
    for (auto& t : *graph.mutable_initializer())
        if (keptInitializers.count(t.name()) && !boundary.count(t.name()))
            result.add_initializer()->Swap(&t);
    for (auto& s : *graph.mutable_sparse_initializer())
        if (keptInitializers.count(s.values().name()) && !boundary.count(s.values().name()))
            result.add_sparse_initializer()->Swap(&s);
    int kept = 0;
    for (int i = 0; i < graph.node_size(); ++i)
        if (keep[static_cast<std::size_t>(i)]) {
            result.add_node()->Swap(graph.mutable_node(i));
            ++kept;
        }
    std::set<std::string> keptValues = definedValues(result);
    for (const auto& v : graph.value_info())
        if (keptValues.count(v.name()) && !isGraphOutput(result, v.name()) &&
            !isGraphInput(result, v.name()))
            *result.add_value_info() = v;
    report.nodesRemoved += graph.node_size() - kept;
    report.initializersRemoved += graph.initializer_size() - result.initializer_size();
    report.changes.push_back(std::to_string(kept) + " nodes and " +
                             std::to_string(result.initializer_size()) + " initializers kept of " +
                             std::to_string(graph.node_size()) + " and " +
                             std::to_string(graph.initializer_size()));
    graph.Swap(&result);
    return Ok{};
}

Status deleteNode(onnx::ModelProto& model, const std::string& name, ModelEditReport& report) {
    auto& graph = *model.mutable_graph();
    const int index = findNode(graph, name);
    if (index < 0) return makeError("", "no node " + quoteName(name) + " in the main graph");
    const onnx::NodeProto node = graph.node(index);
    const std::set<std::string> reads = [&] {
        std::set<std::string> all;
        for (int i = 0; i < graph.node_size(); ++i) {
            if (i == index) continue;
            for (const auto& in : graph.node(i).input()) all.insert(in);
            for (const auto& n : outerScopeReads(graph.node(i))) all.insert(n);
        }
        for (const auto& o : graph.output()) all.insert(o.name());
        return all;
    }();
    std::vector<std::string> readOutputs;
    for (const auto& out : node.output())
        if (!out.empty() && reads.count(out)) readOutputs.push_back(out);
    const std::string label = profileNameOf(node);
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    remove[static_cast<std::size_t>(index)] = true;
    if (readOutputs.empty()) {
        removeNodes(graph, remove);
        report.nodesRemoved += 1;
        report.changes.push_back(node.op_type() + " " + quoteName(label) +
                                 " removed (nothing read its outputs)");
        return Ok{};
    }
    // Bypass: one data input with the type and shape of the one output read.
    if (readOutputs.size() == 1) {
        const std::string& out = readOutputs.front();
        auto shapes = inferShapes(model);
        auto outType = valueType(graph, out, shapes.get());
        const GraphIndex index0(graph);
        std::string bypass;
        for (const auto& in : node.input()) {
            if (in.empty() || index0.constant(in)) continue;
            auto inType = valueType(graph, in, shapes.get());
            if (outType && inType && sameTensorType(*inType, *outType)) {
                bypass = in;
                break;
            }
        }
        if (!bypass.empty()) {
            removeNodes(graph, remove);
            std::set<std::string> outSet = {out};
            dropValueInfo(graph, outSet);
            const bool producedByNode = index0.producer(bypass) >= 0;
            if (isGraphOutput(graph, out) && producedByNode && !isGraphOutput(graph, bypass) &&
                !isGraphInput(graph, bypass)) {
                // The output keeps its name: the input's producer now writes it.
                dropValueInfo(graph, {bypass});
                renameInGraph(graph, bypass, out, true);
                report.changes.push_back(node.op_type() + " " + quoteName(label) + " bypassed: " +
                                         quoteName(bypass) + " is now " + quoteName(out));
            } else {
                renameInGraph(graph, out, bypass, true);
                // Two outputs of the same name when the input was already one: keep the first.
                auto* outputs = graph.mutable_output();
                std::set<std::string> seenOutputs;
                outputs->erase(std::remove_if(outputs->begin(), outputs->end(),
                                              [&](const onnx::ValueInfoProto& v) {
                                                  return !seenOutputs.insert(v.name()).second;
                                              }),
                               outputs->end());
                report.changes.push_back(node.op_type() + " " + quoteName(label) +
                                         " bypassed: its readers read " + quoteName(bypass));
            }
            report.nodesRemoved += 1;
            return Ok{};
        }
    }
    // Cut: the node and everything computed from its outputs go, then what fed only them.
    std::set<std::string> seeds;
    for (const auto& out : node.output())
        if (!out.empty()) seeds.insert(out);
    const auto cut = downstreamValues(graph, seeds);
    int outputsLeft = 0;
    std::vector<std::string> outputsCut;
    for (const auto& o : graph.output())
        (cut.count(o.name()) ? outputsCut.push_back(o.name()) : (void)++outputsLeft);
    if (outputsLeft == 0)
        return makeError("", "deleting " + quoteName(label) +
                                 " cuts every output of the model, and it cannot be bypassed "
                                 "(no data input has its output's type and shape)");
    for (int i = 0; i < graph.node_size(); ++i) {
        for (const auto& out : graph.node(i).output())
            if (!out.empty() && cut.count(out)) remove[static_cast<std::size_t>(i)] = true;
    }
    const int cutNodes = static_cast<int>(std::count(remove.begin(), remove.end(), true));
    removeNodes(graph, remove);
    auto* outputs = graph.mutable_output();
    outputs->erase(
        std::remove_if(outputs->begin(), outputs->end(),
                       [&](const onnx::ValueInfoProto& v) { return cut.count(v.name()) > 0; }),
        outputs->end());
    dropValueInfo(graph, cut);
    report.nodesRemoved += cutNodes;
    std::string cutText;
    for (const auto& o : outputsCut) cutText += (cutText.empty() ? "" : ", ") + quoteName(o);
    report.changes.push_back(node.op_type() + " " + quoteName(label) + " cut with " +
                             std::to_string(cutNodes - 1) + " nodes after it" +
                             (cutText.empty() ? std::string() : "; outputs removed: " + cutText));
    return pruneGraph(model, report);
}

// ---- make-batch-dynamic

namespace {

enum class BatchRepair { ZeroCopy, One, FromInput };

struct BakedConstant {
    BakedBatchConstant info;
    int node = -1;
    int shapeInput = 1;
    BatchRepair repair = BatchRepair::FromInput;
};

std::vector<std::string> batchedInputs(const onnx::GraphProto& graph, std::int64_t batch) {
    std::vector<std::string> names;
    for (const auto& v : graph.input()) {
        if (isInitializer(graph, v.name())) continue;
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
        const auto& shape = v.type().tensor_type().shape();
        if (shape.dim_size() > 0 &&
            ((shape.dim(0).has_dim_value() && shape.dim(0).dim_value() == batch) ||
             (shape.dim(0).has_dim_param() && !shape.dim(0).dim_param().empty())))
            names.push_back(v.name());
    }
    return names;
}

bool anySymbolicBatch(const onnx::GraphProto& graph) {
    for (const auto& v : graph.input()) {
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
        const auto& shape = v.type().tensor_type().shape();
        if (shape.dim_size() > 0 && !shape.dim(0).dim_param().empty()) return true;
    }
    return false;
}

std::vector<BakedConstant> findBaked(const onnx::ModelProto& model, std::int64_t batch) {
    std::vector<BakedConstant> found;
    const auto& graph = model.graph();
    const auto inputs = batchedInputs(graph, batch);
    if (inputs.empty()) return found;
    const auto dependent =
        downstreamValues(graph, std::set<std::string>(inputs.begin(), inputs.end()));
    const GraphIndex index(graph);
    std::shared_ptr<const InferredShapes> shapes;
    auto mixesWithBatch = [&](const std::string& value) {
        for (int c : index.consumers(value))
            for (const auto& in : graph.node(c).input())
                if (in != value && dependent.count(in)) return true;
        return false;
    };
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        if (!isDefaultDomain(node) || node.output_size() < 1) continue;
        const std::string& op = node.op_type();
        int shapeInput = -1;
        if (op == "Reshape" || op == "Expand" || op == "Tile") shapeInput = 1;
        if (op == "ConstantOfShape") shapeInput = 0;
        if (shapeInput < 0 || node.input_size() <= shapeInput) continue;
        const auto* tensor = index.constant(node.input(shapeInput));
        if (!tensor) continue;
        auto values = intConstant(*tensor);
        if (!values || values->empty() || (*values)[0] != batch) continue;
        const bool dataDependent = shapeInput == 1 && dependent.count(node.input(0)) > 0;
        BakedConstant baked;
        baked.node = i;
        baked.shapeInput = shapeInput;
        if (op == "Reshape") {
            if (!dataDependent) continue;
            if (!shapes) shapes = inferShapes(model);
            auto dims = shapes->dimsOf(node.input(0));
            const bool dim0IsBatch = dims && !dims->empty() && (*dims)[0].value == batch;
            baked.repair = intAttribute(node, "allowzero", 0) == 0 && dim0IsBatch
                               ? BatchRepair::ZeroCopy
                               : BatchRepair::FromInput;
        } else if (op == "Expand" && dataDependent) {
            if (batch == 1) continue;  // broadcasting 1 already follows the batch
            baked.repair = BatchRepair::One;
        } else if (dataDependent) {
            continue;  // Tile of batched data: its repeats do not bake the batch
        } else {
            if (!mixesWithBatch(node.output(0))) continue;
            baked.repair = BatchRepair::FromInput;
        }
        baked.info.node = profileNameOf(node);
        baked.info.opType = op;
        baked.info.constant = node.input(shapeInput);
        baked.info.values = *values;
        found.push_back(std::move(baked));
    }
    return found;
}

}  // namespace

Status makeBatchDynamic(onnx::ModelProto& model, const std::string& symbol,
                        ModelEditReport& report) {
    if (symbol.empty() || symbol.find_first_not_of("0123456789-+") == std::string::npos ||
        symbol.find_first_of(" \t\n[]") != std::string::npos)
        return makeError("", "the batch symbol must be a name, not '" + symbol + "'");
    std::int64_t batch = exportedBatch(model);
    // Inputs already symbolic (torch.onnx.export with dynamic_axes) may still carry constants
    // traced with the export's batch: PyTorch's usual trace batch, 1, is taken as that batch.
    const bool alreadySymbolic = batch <= 0 && anySymbolicBatch(model.graph());
    if (alreadySymbolic) batch = 1;
    if (batch <= 0)
        return makeError("",
                         "no input has a fixed dim 0 shared by every fixed input (nothing to "
                         "make dynamic)");
    const auto baked = findBaked(model, batch);
    if (alreadySymbolic && baked.empty())
        return makeError("",
                         "dim 0 of the inputs is already symbolic and no Reshape, Expand, "
                         "ConstantOfShape or Tile constant bakes batch 1 (nothing to make "
                         "dynamic)");
    auto& graph = *model.mutable_graph();
    const auto inputs = batchedInputs(graph, batch);
    const auto dependent =
        downstreamValues(graph, std::set<std::string>(inputs.begin(), inputs.end()));
    for (auto& v : *graph.mutable_input())
        if (std::find(inputs.begin(), inputs.end(), v.name()) != inputs.end() &&
            v.type().tensor_type().shape().dim(0).has_dim_value())
            v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
                symbol);
    int outputsChanged = 0;
    for (auto& v : *graph.mutable_output()) {
        if (!dependent.count(v.name()) || !v.type().has_tensor_type() ||
            !v.type().tensor_type().has_shape())
            continue;
        auto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() > 0 && shape->dim(0).has_dim_value() &&
            shape->dim(0).dim_value() == batch) {
            shape->mutable_dim(0)->set_dim_param(symbol);
            ++outputsChanged;
        }
    }
    if (alreadySymbolic) {
        report.changes.push_back(
            "dim 0 of the inputs is already symbolic; constants baking batch 1 repaired");
    } else {
        std::string inputText;
        for (const auto& n : inputs) inputText += (inputText.empty() ? "" : ", ") + quoteName(n);
        report.changes.push_back("dim 0 of " + inputText + " and of " +
                                 std::to_string(outputsChanged) +
                                 " outputs: " + std::to_string(batch) + " -> " + symbol);
    }

    std::set<std::string> used;
    collectValueNames(graph, used);
    std::vector<onnx::NodeProto> front;
    std::string batchValue;  // [batch] as a 1-D int64, computed once
    auto batchFromInput = [&] {
        if (!batchValue.empty()) return batchValue;
        const std::string shapeName = freshName(inputs.front() + "_shape", used);
        const std::string indexName = freshName("batch_index", used);
        batchValue = freshName(symbol + "_value", used);
        onnx::NodeProto shapeNode;
        shapeNode.set_op_type("Shape");
        shapeNode.set_name(freshName("/make_batch_dynamic/Shape", used));
        shapeNode.add_input(inputs.front());
        shapeNode.add_output(shapeName);
        addInitializer(model, int64Tensor(indexName, {0}));
        onnx::NodeProto gather;
        gather.set_op_type("Gather");
        gather.set_name(freshName("/make_batch_dynamic/Gather", used));
        gather.add_input(shapeName);
        gather.add_input(indexName);
        gather.add_output(batchValue);
        auto* axis = gather.add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
        front.push_back(shapeNode);
        front.push_back(gather);
        report.nodesAdded += 2;
        return batchValue;
    };
    std::set<std::string> replaced;
    for (const auto& b : baked) {
        auto& node = *graph.mutable_node(b.node);
        std::vector<std::int64_t> values = b.info.values;
        std::string newInput;
        if (b.repair == BatchRepair::FromInput) {
            const std::string first = batchFromInput();
            if (values.size() == 1) {
                newInput = first;
            } else {
                const std::string rest = freshName(b.info.constant + "_rest", used);
                addInitializer(model, int64Tensor(rest, std::vector<std::int64_t>(
                                                            values.begin() + 1, values.end())));
                newInput = freshName(b.info.constant + "_dynamic", used);
                onnx::NodeProto concat;
                concat.set_op_type("Concat");
                concat.set_name(freshName("/make_batch_dynamic/Concat", used));
                concat.add_input(first);
                concat.add_input(rest);
                concat.add_output(newInput);
                auto* axis = concat.add_attribute();
                axis->set_name("axis");
                axis->set_type(onnx::AttributeProto::INT);
                axis->set_i(0);
                front.push_back(concat);
                report.nodesAdded += 1;
            }
        } else {
            values[0] = b.repair == BatchRepair::ZeroCopy ? 0 : 1;
            newInput = freshName(b.info.constant + "_dynamic", used);
            addInitializer(model, int64Tensor(newInput, values));
        }
        replaced.insert(node.input(b.shapeInput));
        node.set_input(b.shapeInput, newInput);
        report.changes.push_back(
            b.info.describe() + ": " +
            (b.repair == BatchRepair::ZeroCopy ? "element 0 set to 0 (copy "
                                                 "the input's dim)"
             : b.repair == BatchRepair::One
                 ? "element 0 set to 1 (broadcast)"
                 : "element 0 taken from the shape of " + quoteName(inputs.front())));
    }
    if (!front.empty()) {
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        for (auto& n : front) nodes.Add()->Swap(&n);
        for (auto& n : *graph.mutable_node()) nodes.Add()->Swap(&n);
        graph.mutable_node()->Swap(&nodes);
    }
    // Shape constants no node reads any more.
    const auto reads = readValues(graph);
    std::set<std::string> unused;
    for (const auto& name : replaced)
        if (!reads.count(name) && isInitializer(graph, name)) unused.insert(name);
    report.initializersRemoved += removeInitializers(graph, unused);
    // Constant nodes whose value no node reads any more.
    std::vector<bool> deadConstants(static_cast<std::size_t>(graph.node_size()), false);
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& n = graph.node(i);
        if (isOnnxOp(n, "Constant") && n.output_size() == 1 && replaced.count(n.output(0)) &&
            !reads.count(n.output(0))) {
            deadConstants[static_cast<std::size_t>(i)] = true;
            report.nodesRemoved += 1;
        }
    }
    removeNodes(graph, deadConstants);
    const int dropped = dropValueInfo(graph, dependent);
    if (dropped > 0)
        report.changes.push_back(std::to_string(dropped) +
                                 " value_info entries of batched values dropped (inferred again)");
    return Ok{};
}

}  // namespace detail

std::int64_t exportedBatch(const onnx::ModelProto& model) {
    std::int64_t batch = 0;
    const auto& graph = model.graph();
    for (const auto& v : graph.input()) {
        if (detail::isInitializer(graph, v.name())) continue;
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
        const auto& shape = v.type().tensor_type().shape();
        if (shape.dim_size() == 0 || !shape.dim(0).has_dim_value()) continue;
        const std::int64_t d = shape.dim(0).dim_value();
        if (d <= 0) continue;
        if (batch != 0 && batch != d) return 0;
        batch = d;
    }
    return batch;
}

std::vector<BakedBatchConstant> findBakedBatchConstants(const onnx::ModelProto& model,
                                                        std::int64_t batch) {
    std::vector<BakedBatchConstant> result;
    for (auto& b : detail::findBaked(model, batch)) result.push_back(std::move(b.info));
    return result;
}

}  // namespace onnxlens
