#include "onnxlens/engine/GraphOptimizer.h"

#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/ModelSummary.h"
#include "onnxlens/model/ShapeInferenceGuard.h"

namespace onnxlens::engine {

namespace {

bool isDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

int defaultOpset(const onnx::ModelProto& model) {
    for (const auto& imp : model.opset_import())
        if (isDefaultDomain(imp.domain())) return static_cast<int>(imp.version());
    return 1;
}

std::unordered_set<std::string> graphOutputNames(const onnx::GraphProto& graph) {
    std::unordered_set<std::string> names;
    for (const auto& o : graph.output()) names.insert(o.name());
    return names;
}

// Every read of `from` (node inputs, also inside subgraphs that see it as an outer name) now
// reads `to`.
void renameUses(onnx::GraphProto& graph, const std::string& from, const std::string& to) {
    for (auto& node : *graph.mutable_node()) {
        for (auto& in : *node.mutable_input())
            if (in == from) in = to;
        for (auto& attr : *node.mutable_attribute()) {
            if (attr.has_g()) renameUses(*attr.mutable_g(), from, to);
            for (auto& g : *attr.mutable_graphs()) renameUses(g, from, to);
        }
    }
}

void removeNodes(onnx::GraphProto& graph, const std::vector<bool>& remove) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph.node_size(); ++i)
        if (!remove[static_cast<std::size_t>(i)]) kept.Add(std::move(*graph.mutable_node(i)));
    graph.mutable_node()->Swap(&kept);
}

bool hasSubgraph(const onnx::NodeProto& node) {
    for (const auto& a : node.attribute())
        if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

// Ops whose outputs change from run to run (or are meant to), never folded.
bool isNondeterministic(const std::string& op) {
    static const std::set<std::string> ops = {
        "RandomUniform", "RandomUniformLike", "RandomNormal", "RandomNormalLike",
        "Bernoulli",     "Multinomial",       "Dropout"};
    return ops.count(op) > 0;
}

int eliminatePassThrough(onnx::GraphProto& graph,
                         const std::function<bool(const onnx::NodeProto&)>& isPassThrough) {
    const auto outputs = graphOutputNames(graph);
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int i = 0; i < graph.node_size(); ++i) {
        const auto& node = graph.node(i);
        if (!isPassThrough(node) || node.input_size() < 1 || node.input(0).empty()) continue;
        const std::string out = node.output(0);
        if (outputs.count(out)) continue;  // keep graph output names intact
        const std::string in = node.input(0);
        remove[static_cast<std::size_t>(i)] = true;
        renameUses(graph, out, in);
        ++rewrites;
    }
    if (rewrites) removeNodes(graph, remove);
    return rewrites;
}

// Value shapes from onnx shape inference, run on a copy without weight data (dims unknown to
// inference are left out of the map; symbolic dims keep their names).
struct InferredDim {
    std::int64_t value = -1;  // -1: symbolic
    std::string symbol;
    bool operator==(const InferredDim&) const = default;
};
using InferredShapes = std::unordered_map<std::string, std::vector<InferredDim>>;

InferredShapes inferValueShapes(const onnx::ModelProto& model) {
    const onnx::GraphProto& graph = model.graph();
    onnx::ModelProto copy;
    *copy.mutable_opset_import() = model.opset_import();
    copy.set_ir_version(model.ir_version());
    *copy.mutable_functions() = model.functions();
    auto* g = copy.mutable_graph();
    *g->mutable_input() = graph.input();
    *g->mutable_output() = graph.output();
    *g->mutable_node() = graph.node();
    *g->mutable_value_info() = graph.value_info();
    for (const auto& init : graph.initializer()) {
        auto* t = g->add_initializer();
        t->set_name(init.name());
        t->set_data_type(init.data_type());
        *t->mutable_dims() = init.dims();
        // Small initializers keep their values: shape inference propagates them into Reshape etc.
        if (init.raw_data().size() <= 1024 && init.data_location() != onnx::TensorProto::EXTERNAL)
            *t = init;
    }
    InferredShapes shapes;
    // onnx's inference functions crash on nodes that break their schema (ModelSummary.h).
    if (checkNodesAgainstSchemas(copy)) {
        try {
            guardShapeInference();
            onnx::shape_inference::InferShapes(copy);
        } catch (const std::exception&) {
        }
    }
    auto record = [&](const onnx::ValueInfoProto& v) {
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
        std::vector<InferredDim> dims;
        for (const auto& d : v.type().tensor_type().shape().dim()) {
            if (d.has_dim_value())
                dims.push_back({d.dim_value(), {}});
            else if (d.has_dim_param() && !d.dim_param().empty())
                dims.push_back({-1, d.dim_param()});
            else
                return;
        }
        shapes[v.name()] = std::move(dims);
    };
    for (const auto& v : copy.graph().value_info()) record(v);
    for (const auto& v : copy.graph().input()) record(v);
    for (const auto& v : copy.graph().output()) record(v);
    for (const auto& init : graph.initializer()) {
        std::vector<InferredDim> dims;
        for (auto d : init.dims()) dims.push_back({d, {}});
        shapes[init.name()] = std::move(dims);
    }
    return shapes;
}

}  // namespace

int eliminateIdentityNodes(onnx::GraphProto& graph) {
    return eliminatePassThrough(graph, [](const onnx::NodeProto& n) {
        return isDefaultDomain(n.domain()) && n.op_type() == "Identity" && n.output_size() == 1;
    });
}

int eliminateInferenceDropout(onnx::GraphProto& graph, int opsetVersion) {
    return eliminatePassThrough(graph, [opsetVersion](const onnx::NodeProto& n) {
        if (!isDefaultDomain(n.domain()) || n.op_type() != "Dropout") return false;
        if (n.output_size() > 1 && !n.output(1).empty()) return false;  // mask is used
        if (opsetVersion >= 12 && n.input_size() >= 3 && !n.input(2).empty())
            return false;  // training_mode given
        for (const auto& a : n.attribute())
            if (a.name() == "is_test" && a.i() == 0 && opsetVersion < 7) return false;
        return true;
    });
}

int foldConstants(onnx::ModelProto& model, const std::filesystem::path& modelDirectory) {
    onnx::GraphProto& graph = *model.mutable_graph();
    std::unordered_set<std::string> graphInputs;
    for (const auto& in : graph.input()) graphInputs.insert(in.name());
    // Initializers that are also graph inputs can be overridden at run time: not constants.
    std::unordered_map<std::string, int> constants;
    for (int i = 0; i < graph.initializer_size(); ++i)
        if (!graphInputs.count(graph.initializer(i).name()))
            constants[graph.initializer(i).name()] = i;

    // Static shapes from onnx shape inference.
    std::unordered_map<std::string, std::vector<std::int64_t>> staticShapes;
    for (const auto& [name, dims] : inferValueShapes(model)) {
        std::vector<std::int64_t> values;
        for (const auto& d : dims) {
            if (d.value < 0) break;
            values.push_back(d.value);
        }
        if (values.size() == dims.size()) staticShapes[name] = std::move(values);
    }

    const auto outputs = graphOutputNames(graph);
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    std::vector<onnx::TensorProto> newInitializers;
    std::unordered_map<std::string, std::size_t> newIndex;
    int rewrites = 0;

    auto constantProto = [&](const std::string& name) -> const onnx::TensorProto* {
        auto it = constants.find(name);
        if (it != constants.end()) return &graph.initializer(it->second);
        auto jt = newIndex.find(name);
        if (jt != newIndex.end()) return &newInitializers[jt->second];
        return nullptr;
    };

    for (int i = 0; i < graph.node_size(); ++i) {
        const onnx::NodeProto& node = graph.node(i);
        if (!isDefaultDomain(node.domain()) || isNondeterministic(node.op_type()) ||
            hasSubgraph(node))
            continue;
        bool producesGraphOutput = false;
        for (const auto& o : node.output())
            producesGraphOutput = producesGraphOutput || outputs.count(o);
        if (producesGraphOutput) continue;

        // Shape/Size of a statically shaped value.
        if ((node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size() == 1) {
            auto it = staticShapes.find(node.input(0));
            if (it != staticShapes.end() && !constantProto(node.input(0))) {
                std::vector<std::int64_t> dims = it->second;
                Tensor result;
                if (node.op_type() == "Shape") {
                    std::int64_t rank = static_cast<std::int64_t>(dims.size());
                    std::int64_t start = 0, end = rank;
                    for (const auto& a : node.attribute()) {
                        if (a.name() == "start") start = a.i();
                        if (a.name() == "end") end = a.i();
                    }
                    if (start < 0) start += rank;
                    if (end < 0) end += rank;
                    start = std::clamp<std::int64_t>(start, 0, rank);
                    end = std::clamp<std::int64_t>(end, start, rank);
                    result = Tensor::fromVector<std::int64_t>(
                        {end - start},
                        std::vector<std::int64_t>(dims.begin() + start, dims.begin() + end));
                } else {
                    std::int64_t n = 1;
                    for (auto d : dims) n *= d;
                    result = Tensor::scalar<std::int64_t>(n);
                }
                newIndex[node.output(0)] = newInitializers.size();
                newInitializers.push_back(tensorToProto(result, node.output(0)));
                remove[static_cast<std::size_t>(i)] = true;
                ++rewrites;
                continue;
            }
        }

        bool allConstant = true;
        for (const auto& in : node.input())
            if (!in.empty() && !constantProto(in)) allConstant = false;
        if (!allConstant) continue;
        if (node.input_size() == 0 && node.op_type() != "Constant" &&
            node.op_type() != "ConstantOfShape")
            continue;

        // Run the node once on the engine.
        LoadedModel mini;
        mini.path = "constant-folding";
        mini.directory = modelDirectory;
        mini.proto = std::make_shared<onnx::ModelProto>();
        mini.proto->set_ir_version(model.ir_version());
        *mini.proto->mutable_opset_import() = model.opset_import();
        auto* g = mini.proto->mutable_graph();
        *g->add_node() = node;
        std::set<std::string> added;
        for (const auto& in : node.input())
            if (!in.empty() && added.insert(in).second) *g->add_initializer() = *constantProto(in);
        for (const auto& o : node.output())
            if (!o.empty()) g->add_output()->set_name(o);
        SessionOptions options;
        options.threads = 1;
        options.optimize = false;
        auto session = Session::create(mini, options);
        if (!session) continue;
        auto result = (*session)->run({});
        if (!result) continue;
        bool ok = true;
        std::vector<onnx::TensorProto> produced;
        std::size_t k = 0;
        for (const auto& o : node.output()) {
            if (o.empty()) continue;
            const Value& v = (*result)[k++];
            if (!v.isTensor() || v.tensor().byteSize() > (std::size_t{64} << 20)) {
                ok = false;
                break;
            }
            produced.push_back(tensorToProto(v.tensor(), o));
        }
        if (!ok) continue;
        for (auto& p : produced) {
            newIndex[p.name()] = newInitializers.size();
            newInitializers.push_back(std::move(p));
        }
        remove[static_cast<std::size_t>(i)] = true;
        ++rewrites;
    }
    if (rewrites) {
        removeNodes(graph, remove);
        for (auto& t : newInitializers) *graph.add_initializer() = std::move(t);
        // Initializers nobody reads any more (inputs of folded nodes) are dropped.
        std::unordered_set<std::string> used;
        std::function<void(const onnx::GraphProto&)> collect = [&](const onnx::GraphProto& gr) {
            for (const auto& n : gr.node()) {
                for (const auto& in : n.input()) used.insert(in);
                for (const auto& a : n.attribute()) {
                    if (a.has_g()) collect(a.g());
                    for (const auto& sg : a.graphs()) collect(sg);
                }
            }
            for (const auto& o : gr.output()) used.insert(o.name());
        };
        collect(graph);
        google::protobuf::RepeatedPtrField<onnx::TensorProto> kept;
        for (auto& init : *graph.mutable_initializer())
            if (used.count(init.name()) || graphInputs.count(init.name()))
                kept.Add(std::move(init));
        graph.mutable_initializer()->Swap(&kept);
    }
    return rewrites;
}

int foldBatchNormIntoConv(onnx::GraphProto& graph, const std::filesystem::path& modelDirectory) {
    std::unordered_set<std::string> graphInputs;
    for (const auto& in : graph.input()) graphInputs.insert(in.name());
    std::unordered_map<std::string, int> initIndex;
    for (int i = 0; i < graph.initializer_size(); ++i)
        if (!graphInputs.count(graph.initializer(i).name()))
            initIndex[graph.initializer(i).name()] = i;
    std::unordered_map<std::string, int> producer, readers;
    for (int i = 0; i < graph.node_size(); ++i) {
        for (const auto& o : graph.node(i).output()) producer[o] = i;
        for (const auto& in : graph.node(i).input()) readers[in]++;
    }
    const auto outputs = graphOutputNames(graph);
    auto constantFloat = [&](const std::string& name) -> std::optional<Tensor> {
        auto it = initIndex.find(name);
        if (it == initIndex.end()) return std::nullopt;
        try {
            Tensor t = tensorFromProto(graph.initializer(it->second), modelDirectory);
            if (t.dtype() != DataType::Float) return std::nullopt;
            return t;
        } catch (const EngineError&) {
            return std::nullopt;
        }
    };

    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int b = 0; b < graph.node_size(); ++b) {
        const auto& bn = graph.node(b);
        if (!isDefaultDomain(bn.domain()) || bn.op_type() != "BatchNormalization" ||
            bn.input_size() != 5)
            continue;
        if (bn.output_size() > 1) {
            bool extra = false;
            for (int o = 1; o < bn.output_size(); ++o) extra = extra || !bn.output(o).empty();
            if (extra) continue;
        }
        bool training = false;
        for (const auto& a : bn.attribute())
            training = training || (a.name() == "training_mode" && a.i() != 0);
        if (training) continue;
        auto p = producer.find(bn.input(0));
        if (p == producer.end() || remove[static_cast<std::size_t>(p->second)]) continue;
        onnx::NodeProto& conv = *graph.mutable_node(p->second);
        if (!isDefaultDomain(conv.domain()) || conv.op_type() != "Conv" || conv.input_size() < 2)
            continue;
        if (readers[bn.input(0)] != 1 || outputs.count(bn.input(0))) continue;
        auto w = constantFloat(conv.input(1));
        auto scale = constantFloat(bn.input(1)), bias = constantFloat(bn.input(2)),
             mean = constantFloat(bn.input(3)), var = constantFloat(bn.input(4));
        if (!w || !scale || !bias || !mean || !var || w->rank() < 3) continue;
        const std::int64_t channels = w->dim(0);
        if (scale->numel() != channels || bias->numel() != channels || mean->numel() != channels ||
            var->numel() != channels)
            continue;
        std::optional<Tensor> convBias;
        if (conv.input_size() >= 3 && !conv.input(2).empty()) {
            convBias = constantFloat(conv.input(2));
            if (!convBias || convBias->numel() != channels) continue;
        }
        float epsilon = 1e-5f;
        for (const auto& a : bn.attribute())
            if (a.name() == "epsilon") epsilon = a.f();

        Tensor newW = w->clone();
        Tensor newB(DataType::Float, {channels});
        const std::int64_t perChannel = w->numel() / std::max<std::int64_t>(channels, 1);
        float* wd = newW.data<float>();
        for (std::int64_t c = 0; c < channels; ++c) {
            const float factor =
                scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + epsilon);
            for (std::int64_t k = 0; k < perChannel; ++k) wd[c * perChannel + k] *= factor;
            const float b0 = convBias ? convBias->data<float>()[c] : 0.0f;
            newB.data<float>()[c] = (b0 - mean->data<float>()[c]) * factor + bias->data<float>()[c];
        }
        const std::string wName = conv.name() + "/" + conv.input(1) + "_bn_folded";
        const std::string bName = conv.name() + "/bias_bn_folded";
        *graph.add_initializer() = tensorToProto(newW, wName);
        *graph.add_initializer() = tensorToProto(newB, bName);
        conv.set_input(1, wName);
        if (conv.input_size() >= 3)
            conv.set_input(2, bName);
        else
            conv.add_input(bName);
        conv.set_output(0, bn.output(0));
        remove[static_cast<std::size_t>(b)] = true;
        ++rewrites;
    }
    if (rewrites) removeNodes(graph, remove);
    return rewrites;
}

void importOnnxlensDomain(onnx::ModelProto& model) {
    for (const auto& imp : model.opset_import())
        if (imp.domain() == kOnnxlensDomain) return;
    auto* imp = model.add_opset_import();
    imp->set_domain(kOnnxlensDomain);
    imp->set_version(1);
}

namespace {

// Producers and reader counts of every value of a graph (subgraph reads count as reads).
struct ValueUses {
    std::unordered_map<std::string, int> producer, readers;
    explicit ValueUses(const onnx::GraphProto& graph) {
        for (int i = 0; i < graph.node_size(); ++i) {
            for (const auto& o : graph.node(i).output()) producer[o] = i;
            for (const auto& in : graph.node(i).input()) readers[in]++;
            if (hasSubgraph(graph.node(i)))
                for (const auto& a : graph.node(i).attribute()) {
                    std::function<void(const onnx::GraphProto&)> count =
                        [&](const onnx::GraphProto& g) {
                            for (const auto& n : g.node()) {
                                for (const auto& in : n.input()) readers[in]++;
                                for (const auto& sa : n.attribute()) {
                                    if (sa.has_g()) count(sa.g());
                                    for (const auto& sg : sa.graphs()) count(sg);
                                }
                            }
                            for (const auto& o : g.output()) readers[o.name()]++;
                        };
                    if (a.has_g()) count(a.g());
                    for (const auto& g : a.graphs()) count(g);
                }
        }
        for (const auto& o : graph.output()) readers[o.name()]++;
    }
    // The node producing `value` when `value` is read exactly once (by the candidate consumer).
    int soleProducer(const std::string& value) const {
        auto p = producer.find(value);
        auto r = readers.find(value);
        if (p == producer.end() || r == readers.end() || r->second != 1) return -1;
        return p->second;
    }
};

bool isConvToFuse(const onnx::NodeProto& node) {
    if (isDefaultDomain(node.domain()) && node.op_type() == "Conv") return node.output_size() == 1;
    return node.domain() == kOnnxlensDomain && node.op_type() == "FusedConv";
}

bool hasAttribute(const onnx::NodeProto& node, const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return true;
    return false;
}

// The node as a FusedConv (a Conv's attributes carry over unchanged), with B and Z slots.
onnx::NodeProto asFusedConv(const onnx::NodeProto& conv) {
    onnx::NodeProto fused = conv;
    fused.set_domain(kOnnxlensDomain);
    fused.set_op_type("FusedConv");
    while (fused.input_size() < 3) fused.add_input("");
    return fused;
}

// Reads a scalar float initializer (Clip's min/max inputs).
std::optional<float> scalarInitializer(const onnx::GraphProto& graph, const std::string& name) {
    for (const auto& in : graph.input())
        if (in.name() == name) return std::nullopt;  // overridable at run time
    for (const auto& init : graph.initializer()) {
        if (init.name() != name) continue;
        try {
            Tensor t = tensorFromProto(init, {});
            if (t.numel() != 1) return std::nullopt;
            return static_cast<float>(t.valueAsDouble(0));
        } catch (const EngineError&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

// The activation attributes for a FusedConv replacing `act`, or nothing when `act` is not an
// activation the fused kernels apply.
std::optional<std::pair<std::string, std::vector<float>>> fusableActivation(
    const onnx::GraphProto& graph, const onnx::NodeProto& act, int opsetVersion) {
    if (!isDefaultDomain(act.domain()) || act.output_size() != 1 || act.input_size() < 1)
        return std::nullopt;
    const std::string& op = act.op_type();
    if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish")
        return std::make_pair(op, std::vector<float>{});
    if (op == "HardSigmoid") {
        float alpha = 0.2f, beta = 0.5f;
        for (const auto& a : act.attribute()) {
            if (a.name() == "alpha") alpha = a.f();
            if (a.name() == "beta") beta = a.f();
        }
        return std::make_pair(op, std::vector<float>{alpha, beta});
    }
    if (op == "LeakyRelu") {
        float alpha = 0.01f;
        for (const auto& a : act.attribute())
            if (a.name() == "alpha") alpha = a.f();
        return std::make_pair(op, std::vector<float>{alpha});
    }
    if (op == "Clip") {
        float lo = -std::numeric_limits<float>::infinity(),
              hi = std::numeric_limits<float>::infinity();
        if (opsetVersion < 11) {
            for (const auto& a : act.attribute()) {
                if (a.name() == "min") lo = a.f();
                if (a.name() == "max") hi = a.f();
            }
        } else {
            for (int i = 1; i <= 2 && i < act.input_size(); ++i) {
                if (act.input(i).empty()) continue;
                auto v = scalarInitializer(graph, act.input(i));
                if (!v) return std::nullopt;
                (i == 1 ? lo : hi) = *v;
            }
        }
        return std::make_pair(op, std::vector<float>{lo, hi});
    }
    return std::nullopt;
}

}  // namespace

int fuseConvAdd(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const ValueUses uses(graph);
    InferredShapes shapes;
    bool shapesInferred = false;
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int a = 0; a < graph.node_size(); ++a) {
        const onnx::NodeProto& add = graph.node(a);
        if (!isDefaultDomain(add.domain()) || add.op_type() != "Add" || add.input_size() != 2)
            continue;
        for (int side = 0; side < 2; ++side) {
            const std::string& convOut = add.input(side);
            const std::string& z = add.input(1 - side);
            const int c = uses.soleProducer(convOut);
            if (c < 0 || convOut == z || remove[static_cast<std::size_t>(c)]) continue;
            const onnx::NodeProto& conv = graph.node(c);
            if (!isConvToFuse(conv) || hasAttribute(conv, "activation")) continue;
            if (conv.input_size() > 3 && !conv.input(3).empty()) continue;
            // Z must not need broadcasting: Z, the Conv output and the sum have one shape.
            if (!shapesInferred) {
                shapes = inferValueShapes(model);
                shapesInferred = true;
            }
            auto zs = shapes.find(z), cs = shapes.find(convOut), ys = shapes.find(add.output(0));
            if (zs == shapes.end() || cs == shapes.end() || ys == shapes.end() ||
                zs->second != cs->second || cs->second != ys->second)
                continue;
            onnx::NodeProto fused = asFusedConv(conv);
            while (fused.input_size() < 4) fused.add_input("");
            fused.set_input(3, z);
            fused.set_output(0, add.output(0));
            fused.set_name(conv.name().empty() ? add.name() : conv.name());
            // The fused node takes the Add's place: everything it reads is computed by then.
            *graph.mutable_node(a) = std::move(fused);
            remove[static_cast<std::size_t>(c)] = true;
            ++rewrites;
            break;
        }
    }
    if (rewrites) {
        removeNodes(graph, remove);
        importOnnxlensDomain(model);
    }
    return rewrites;
}

int fuseConvActivation(onnx::ModelProto& model) {
    onnx::GraphProto& graph = *model.mutable_graph();
    const int opset = defaultOpset(model);
    const ValueUses uses(graph);
    std::vector<bool> remove(static_cast<std::size_t>(graph.node_size()), false);
    int rewrites = 0;
    for (int a = 0; a < graph.node_size(); ++a) {
        const onnx::NodeProto& act = graph.node(a);
        if (act.input_size() < 1) continue;
        const int c = uses.soleProducer(act.input(0));
        if (c < 0 || remove[static_cast<std::size_t>(c)]) continue;
        const onnx::NodeProto& conv = graph.node(c);
        if (!isConvToFuse(conv) || hasAttribute(conv, "activation")) continue;
        auto activation = fusableActivation(graph, act, opset);
        if (!activation) continue;
        onnx::NodeProto fused = asFusedConv(conv);
        fused.set_output(0, act.output(0));
        auto* name = fused.add_attribute();
        name->set_name("activation");
        name->set_type(onnx::AttributeProto::STRING);
        name->set_s(activation->first);
        if (!activation->second.empty()) {
            auto* params = fused.add_attribute();
            params->set_name("activation_params");
            params->set_type(onnx::AttributeProto::FLOATS);
            for (float v : activation->second) params->add_floats(v);
        }
        *graph.mutable_node(a) = std::move(fused);
        remove[static_cast<std::size_t>(c)] = true;
        ++rewrites;
    }
    if (rewrites) {
        removeNodes(graph, remove);
        importOnnxlensDomain(model);
    }
    return rewrites;
}

OptimizationReport optimizeModel(onnx::ModelProto& model,
                                 const std::filesystem::path& modelDirectory) {
    OptimizationReport report;
    report.nodesBefore = model.graph().node_size();
    const int opset = defaultOpset(model);
    std::map<std::string, int> totals;
    totals["compute-float16-in-float"] = computeFloat16InFloat(model, modelDirectory);
    for (int round = 0; round < 4; ++round) {
        int changed = 0;
        auto run = [&](const char* name, int rewrites) {
            totals[name] += rewrites;
            changed += rewrites;
        };
        run("eliminate-identity", eliminateIdentityNodes(*model.mutable_graph()));
        run("eliminate-inference-dropout",
            eliminateInferenceDropout(*model.mutable_graph(), opset));
        run("fold-constants", foldConstants(model, modelDirectory));
        run("fold-batchnorm-into-conv",
            foldBatchNormIntoConv(*model.mutable_graph(), modelDirectory));
        if (changed == 0) break;
    }
    // Fusions write com.onnxlens nodes, which onnx shape inference does not know: they run last.
    totals["fuse-conv-add"] = fuseConvAdd(model);
    totals["fuse-conv-activation"] = fuseConvActivation(model);
    // Layout last: it rewrites the fused convolutions into their blocked forms.
    totals["channel-blocked-layout"] =
        convertToChannelBlockedLayout(model, preferredChannelBlock());
    for (const char* name : {"compute-float16-in-float", "eliminate-identity", "eliminate-inference-dropout", "fold-constants",
                             "fold-batchnorm-into-conv", "fuse-conv-add", "fuse-conv-activation",
                             "channel-blocked-layout"})
        report.passes.push_back({name, totals[name]});
    // Transformer fusions (TransformerFusions.cpp): GELU and LayerNorm first, so that the
    // MatMul + bias they follow fuses with the Gelu.
    for (const auto& [name, pass] :
         {std::pair<const char*, int (*)(onnx::ModelProto&)>{"fuse-gelu", fuseGelu},
          {"fuse-layer-normalization", fuseLayerNormalization},
          {"fuse-matmul-bias", fuseMatMulBias},
          {"fuse-matmul-gelu", fuseMatMulGelu},
          {"fuse-matmul-integer-to-float", fuseMatMulIntegerToFloat}})
        report.passes.push_back({name, pass(model)});
    report.nodesAfter = model.graph().node_size();
    return report;
}

}  // namespace onnxlens::engine
