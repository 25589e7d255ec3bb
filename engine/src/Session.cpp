#include "onnxlens/engine/Session.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "CompiledGraph.h"
#include "GradientExpansion.h"
#include "OpenMpThreads.h"
#include "PhysicalMemory.h"
#include "ThreadGovernor.h"
#include "onnxlens/engine/GraphOptimizer.h"
#include "onnxlens/engine/KernelRegistry.h"
#include "onnxlens/engine/TensorByteLimit.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/MicrosoftOpSchemas.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/ShapeInference.h"
#include "onnxlens/model/ShapeInferenceGuard.h"

namespace onnxlens::engine {

struct CompiledGraph::Step {
    std::unique_ptr<Kernel> kernel;
    const onnx::NodeProto* node = nullptr;
    std::vector<int> inputSlots;    // -1: absent optional input
    std::vector<int> outputSlots;   // -1: unused output
    std::vector<int> releaseAfter;  // slots whose last reader is this step
    // Per input: released after this step and read by it once
    // (KernelContext::inputReleasedAfterRun).
    std::vector<char> releasedInputs;
    std::string label;  // "node 'name' (OpType)" for error messages
};

namespace {

using OpsetMap = std::map<std::string, int>;

std::string nodeLabel(const onnx::NodeProto& node) {
    std::string op =
        isDefaultDomain(node.domain()) ? node.op_type() : node.domain() + "::" + node.op_type();
    return node.name().empty() ? op + " node" : "node '" + node.name() + "' (" + op + ")";
}

// Everything shared while compiling one model (the main graph, its subgraphs, functions).
struct CompileShared {
    std::filesystem::path modelDirectory;
    const KernelRegistry* registry = nullptr;
    std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> localFunctions;
    bool checkOnly = false;  // only decide supportedness: no kernels, no weights
    std::vector<UnsupportedNode> unsupported;
    std::deque<onnx::NodeProto> ownedNodes;  // nodes of expanded function bodies
    std::deque<onnx::GraphProto> ownedGraphs;
    int functionCounter = 0;
    // Initializers' bytes mapped and copied, and the mappings the session holds.
    WeightMemory weights;
    std::vector<std::shared_ptr<const MappedFile>> mappings;
    // Each initializer a tensor views in a mapping: where its bytes lie (main graph and subgraphs).
    struct MappedInitializer {
        std::string name;
        const MappedFile* mapping;
        std::uint64_t offset, bytes;
    };
    std::vector<MappedInitializer> mappedInitializers;
    // The session's own main graph, whose initializers' bytes are released once their tensors
    // exist (null: keep them).
    onnx::GraphProto* releasableGraph = nullptr;
    // Value types from onnx shape inference, on first need (context-dependent functions): the
    // optimizer's when still valid, else the cache's of the model as loaded, else inferred here.
    const onnx::ModelProto* model = nullptr;
    std::shared_ptr<const InferredShapes> shapes;
    std::shared_ptr<ShapeInferenceCache> modelShapes;  // valid while the model is as loaded

    void countInitializer(const Tensor& tensor, const TensorSource& source) {
        (source.inPlace ? weights.mappedBytes : weights.copiedBytes) += tensor.byteSize();
        if (source.mapping &&
            std::find(mappings.begin(), mappings.end(), source.mapping) == mappings.end())
            mappings.push_back(source.mapping);
    }

    const onnx::TypeProto* typeOf(const std::string& name) {
        if (!shapes && model) shapes = modelShapes ? modelShapes->get(*model) : inferShapes(*model);
        return shapes ? shapes->typeOf(name) : nullptr;
    }
};

}  // namespace

// Drops an initializer's data, keeping its name, type, dims and external-data reference (what the
// session still reads). Swapping with a fresh message frees the bytes; clearing would keep the
// string's capacity.
static void releaseTensorBytes(onnx::TensorProto& t) {
    onnx::TensorProto kept;
    kept.set_name(t.name());
    kept.set_data_type(t.data_type());
    *kept.mutable_dims() = t.dims();
    if (t.has_data_location()) kept.set_data_location(t.data_location());
    *kept.mutable_external_data() = t.external_data();
    t.Swap(&kept);
}

// Compiles one graph (main graph or subgraph) into a CompiledGraph.
class GraphCompiler {
  public:
    GraphCompiler(CompileShared& shared, OpsetMap opsets)
        : shared_(shared), opsets_(std::move(opsets)) {}

    std::shared_ptr<CompiledGraph> compile(const onnx::GraphProto& original) {
        const onnx::GraphProto* source = &original;
        if (hasGradientNodes(original))
            source = &shared_.ownedGraphs.emplace_back(expandGradientNodes(original));
        const onnx::GraphProto& graph = *source;
        auto compiled = std::shared_ptr<CompiledGraph>(new CompiledGraph());
        graph_ = compiled.get();

        for (const auto& input : graph.input()) {
            graph_->inputNames_.push_back(input.name());
            graph_->inputSlots_.push_back(define(input.name()));
        }
        onnx::GraphProto* releasable = shared_.releasableGraph == &original && source == &original
                                           ? shared_.releasableGraph
                                           : nullptr;
        for (int i = 0; i < graph.initializer_size(); ++i) {
            const auto& init = graph.initializer(i);
            int slot = define(init.name());
            if (!shared_.checkOnly) {
                TensorSource source;
                Tensor tensor = tensorFromProto(init, shared_.modelDirectory, &source);
                shared_.countInitializer(tensor, source);
                if (source.mapping && source.inPlace && tensor.byteSize() > 0)
                    shared_.mappedInitializers.push_back(
                        {init.name(), source.mapping.get(),
                         static_cast<std::uint64_t>(static_cast<const char*>(tensor.raw()) -
                                                    source.mapping->data()),
                         tensor.byteSize()});
                graph_->constants_.emplace_back(slot, Value(std::move(tensor)));
                if (releasable) releaseTensorBytes(*releasable->mutable_initializer(i));
            }
        }
        if (graph.sparse_initializer_size() > 0)
            throw EngineError("sparse initializers are not supported (" +
                              graph.sparse_initializer(0).values().name() + ")");

        // Nodes may be listed out of order; run them in dependency order.
        std::vector<const onnx::NodeProto*> order = topologicalOrder(graph);
        for (const auto* node : order) addNode(*node);

        for (const auto& output : graph.output()) {
            if (output.name().empty())
                throw EngineError("graph '" + graph.name() + "' has an output without a name");
            int slot = use(output.name());
            graph_->outputNames_.push_back(output.name());
            graph_->outputSlots_.push_back(slot);
        }
        computeReleases();
        graph_->constantAt_.assign(graph_->slotNames_.size(), nullptr);
        for (const auto& [slot, value] : graph_->constants_)
            graph_->constantAt_[static_cast<std::size_t>(slot)] = &value;
        return compiled;
    }

    const std::vector<std::string>& freeNames() const { return freeNames_; }

  private:
    int slotFor(const std::string& name) {
        auto it = graph_->slotIndex_.find(name);
        if (it != graph_->slotIndex_.end()) return it->second;
        int slot = static_cast<int>(graph_->slotNames_.size());
        graph_->slotNames_.push_back(name);
        graph_->slotIndex_[name] = slot;
        return slot;
    }

    int define(const std::string& name) {
        defined_.insert(name);
        return slotFor(name);
    }

    // A name read by a node or output: local when defined here, otherwise free (outer scope).
    int use(const std::string& name) {
        if (name.empty()) return -1;
        int slot = slotFor(name);
        if (!defined_.count(name) && !freeSet_.count(name)) {
            freeSet_.insert(name);
            freeNames_.push_back(name);
            graph_->freeSlots_.push_back(slot);
        }
        return slot;
    }

    std::vector<const onnx::NodeProto*> topologicalOrder(const onnx::GraphProto& graph) {
        std::unordered_map<std::string, int> producer;
        for (int i = 0; i < graph.node_size(); ++i)
            for (const auto& out : graph.node(i).output())
                if (!out.empty()) producer[out] = i;
        const int n = graph.node_size();
        std::vector<std::vector<int>> consumers(n);
        std::vector<int> pending(n, 0);
        for (int i = 0; i < n; ++i) {
            std::set<int> deps;
            for (const auto& in : graph.node(i).input()) {
                auto it = producer.find(in);
                if (it != producer.end() && it->second != i) deps.insert(it->second);
                if (it != producer.end() && it->second == i)
                    throw EngineError(nodeLabel(graph.node(i)) + " reads its own output '" + in +
                                      "'");
            }
            // Subgraphs read outer names implicitly.
            for (const auto& name : subgraphOuterReads(graph.node(i))) {
                auto it = producer.find(name);
                if (it != producer.end() && it->second != i) deps.insert(it->second);
            }
            pending[i] = static_cast<int>(deps.size());
            for (int d : deps) consumers[d].push_back(i);
        }
        std::vector<const onnx::NodeProto*> order;
        std::deque<int> ready;
        for (int i = 0; i < n; ++i)
            if (pending[i] == 0) ready.push_back(i);
        while (!ready.empty()) {
            int i = ready.front();
            ready.pop_front();
            order.push_back(&graph.node(i));
            for (int c : consumers[i])
                if (--pending[c] == 0) ready.push_back(c);
        }
        if (static_cast<int>(order.size()) != n) {
            for (int i = 0; i < n; ++i)
                if (pending[i] > 0)
                    throw EngineError("the graph has a cycle through " + nodeLabel(graph.node(i)));
        }
        return order;
    }

    // Names a node's subgraphs read from outside themselves (approximation for ordering:
    // every name used in the body that the body does not define).
    static std::vector<std::string> subgraphOuterReads(const onnx::NodeProto& node) {
        std::vector<std::string> names;
        std::function<void(const onnx::GraphProto&, std::unordered_set<std::string>)> walk =
            [&](const onnx::GraphProto& g, std::unordered_set<std::string> defined) {
                for (const auto& i : g.input()) defined.insert(i.name());
                for (const auto& i : g.initializer()) defined.insert(i.name());
                for (const auto& n : g.node())
                    for (const auto& o : n.output()) defined.insert(o);
                for (const auto& n : g.node()) {
                    for (const auto& i : n.input())
                        if (!i.empty() && !defined.count(i)) names.push_back(i);
                    for (const auto& a : n.attribute()) {
                        if (a.has_g()) walk(a.g(), defined);
                        for (const auto& sg : a.graphs()) walk(sg, defined);
                    }
                }
                for (const auto& o : g.output())
                    if (!defined.count(o.name())) names.push_back(o.name());
            };
        for (const auto& a : node.attribute()) {
            if (a.has_g()) walk(a.g(), {});
            for (const auto& sg : a.graphs()) walk(sg, {});
        }
        return names;
    }

    int opsetFor(const std::string& domain) const {
        auto it = opsets_.find(canonicalDomain(domain));
        if (it != opsets_.end()) return it->second;
        // ai.onnx.ml and friends imported under another spelling are rare; a missing import means
        // the node cannot be resolved against a version.
        return -1;
    }

    void addNode(const onnx::NodeProto& node) {
        const std::string domain = canonicalDomain(node.domain());
        const int version = opsetFor(domain);
        const KernelFactory* factory =
            version >= 0 ? shared_.registry->find(domain, node.op_type(), version) : nullptr;

        if (factory == nullptr) {
            if (expandFunction(node, domain, version)) return;
            shared_.unsupported.push_back(
                {node.name(), node.op_type(), displayDomain(domain), version});
            // Keep compiling so that every unsupported node is reported together.
            for (const auto& out : node.output())
                if (!out.empty()) define(out);
            return;
        }

        auto step = std::make_unique<CompiledGraph::Step>();
        step->node = &node;
        step->label = nodeLabel(node);
        checkArity(node, domain, version, step->label);
        std::vector<std::string> implicitReads;
        auto compileSub = [&](const onnx::GraphProto& body) -> std::shared_ptr<CompiledGraph> {
            GraphCompiler sub(shared_, opsets_);
            auto compiled = sub.compile(body);
            for (const auto& name : sub.freeNames()) implicitReads.push_back(name);
            return compiled;
        };
        if (shared_.checkOnly) {
            // Still look into subgraphs so that their unsupported nodes are reported.
            for (const auto& a : node.attribute()) {
                if (a.has_g()) compileSub(a.g());
                for (const auto& g : a.graphs()) compileSub(g);
            }
        } else {
            NodeInfo info(node, version, compileSub);
            try {
                step->kernel = (*factory)(info);
            } catch (const EngineError& e) {
                throw EngineError(step->label + ": " + e.what());
            }
        }
        for (const auto& in : node.input()) step->inputSlots.push_back(use(in));
        for (const auto& name : implicitReads)
            implicitUses_.push_back({graph_->steps_.size(), use(name)});
        for (const auto& out : node.output()) {
            if (out.empty()) {
                step->outputSlots.push_back(-1);
                continue;
            }
            if (defined_.count(out) && !isGraphInputName(out))
                throw EngineError(step->label + ": output '" + out + "' is produced twice");
            step->outputSlots.push_back(define(out));
        }
        graph_->steps_.push_back(std::move(step));
    }

    // Kernels index their inputs and outputs by position: a node with fewer (or more) than its
    // schema allows is refused here rather than trusted at run time.
    static void checkArity(const onnx::NodeProto& node, const std::string& domain, int version,
                           const std::string& label) {
        // A model may import an opset newer than the onnx library knows; the newest schema it
        // has then says nothing about that opset's arity (e.g. Reduce* took axes as an input
        // from opset 18). ONNX Runtime's com.microsoft schemas are registered first, so their
        // nodes are checked whatever this process read before.
        registerMicrosoftOpSchemas();
        const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
        auto range = known.find(domain);
        if (range == known.end() || version > range->second.second) return;
        const onnx::OpSchema* schema =
            onnx::OpSchemaRegistry::Schema(node.op_type(), version, domain);
        if (!schema) return;
        auto outside = [](int count, int lo, int hi) { return count < lo || count > hi; };
        if (outside(node.input_size(), schema->min_input(), schema->max_input()))
            throw EngineError(label + ": has " + std::to_string(node.input_size()) +
                              " inputs, the operator takes " + std::to_string(schema->min_input()) +
                              " to " + std::to_string(schema->max_input()));
        if (outside(node.output_size(), schema->min_output(), schema->max_output()))
            throw EngineError(label + ": has " + std::to_string(node.output_size()) +
                              " outputs, the operator produces " +
                              std::to_string(schema->min_output()) + " to " +
                              std::to_string(schema->max_output()));
    }

    bool isGraphInputName(const std::string& name) const {
        for (const auto& n : graph_->inputNames_)
            if (n == name) return true;
        return false;
    }

    // Replaces a node by the body of its function (model-local function or onnx schema body).
    bool expandFunction(const onnx::NodeProto& node, const std::string& domain, int version) {
        const onnx::FunctionProto* function = nullptr;
        onnx::FunctionProto built;
        const onnx::OpSchema* schema = nullptr;
        auto local = shared_.localFunctions.find({domain, node.op_type()});
        if (local != shared_.localFunctions.end()) {
            function = local->second;
        } else if (version >= 0) {
            schema = onnx::OpSchemaRegistry::Schema(node.op_type(), version, domain);
            if (!schema) return false;
            if (schema->HasFunction()) {
                function = schema->GetFunction();
            } else if (schema->HasContextDependentFunction()) {
                std::vector<onnx::TypeProto> inputTypes;
                for (const auto& in : node.input()) {
                    const onnx::TypeProto* t = in.empty() ? nullptr : shared_.typeOf(in);
                    inputTypes.push_back(t ? *t : onnx::TypeProto());
                }
                onnx::FunctionBodyBuildContextImpl ctx(node, inputTypes);
                try {
                    if (!schema->BuildContextDependentFunction(ctx, built)) return false;
                } catch (const std::exception&) {
                    return false;
                }
                function = &built;
            }
        }
        if (!function) return false;

        const std::string prefix = "__fn" + std::to_string(shared_.functionCounter++) + "/";
        std::unordered_map<std::string, std::string> rename;
        for (int i = 0; i < function->input_size(); ++i)
            rename[function->input(i)] = i < node.input_size() ? node.input(i) : std::string();
        for (int i = 0; i < function->output_size(); ++i)
            rename[function->output(i)] = i < node.output_size() ? node.output(i) : std::string();
        auto mapName = [&](const std::string& name) -> std::string {
            if (name.empty()) return name;
            auto it = rename.find(name);
            if (it != rename.end()) return it->second;
            return prefix + name;
        };
        // Attribute values the caller passes (with schema defaults for those it leaves out).
        std::unordered_map<std::string, const onnx::AttributeProto*> callerAttributes;
        for (const auto& a : node.attribute()) callerAttributes[a.name()] = &a;
        if (schema) {
            for (const auto& [name, attr] : schema->attributes())
                if (!callerAttributes.count(name) && attr.default_value.has_type())
                    callerAttributes[name] = &attr.default_value;
        }

        OpsetMap innerOpsets = opsets_;
        for (const auto& imp : function->opset_import())
            innerOpsets[canonicalDomain(imp.domain())] = static_cast<int>(imp.version());

        std::vector<const onnx::NodeProto*> bodyNodes;
        for (const auto& inner : function->node()) {
            onnx::NodeProto& copy = shared_.ownedNodes.emplace_back(inner);
            if (copy.name().empty())
                copy.set_name(node.name() + "/" + inner.op_type());
            else
                copy.set_name(node.name() + "/" + inner.name());
            for (auto& in : *copy.mutable_input()) in = mapName(in);
            for (auto& out : *copy.mutable_output()) out = mapName(out);
            auto* attrs = copy.mutable_attribute();
            for (int a = attrs->size() - 1; a >= 0; --a) {
                onnx::AttributeProto& attr = attrs->at(a);
                if (attr.ref_attr_name().empty()) continue;
                auto it = callerAttributes.find(attr.ref_attr_name());
                if (it == callerAttributes.end()) {
                    attrs->DeleteSubrange(a, 1);
                } else {
                    std::string name = attr.name();
                    attr = *it->second;
                    attr.set_name(name);
                }
            }
            bodyNodes.push_back(&copy);
        }
        OpsetMap saved = opsets_;
        opsets_ = innerOpsets;
        for (const auto* inner : bodyNodes) addNode(*inner);
        opsets_ = saved;
        return true;
    }

    void computeReleases() {
        // Last reader of every slot; graph outputs and constants are never released.
        std::vector<long> lastUse(graph_->slotNames_.size(), -1);
        for (std::size_t s = 0; s < graph_->steps_.size(); ++s)
            for (int slot : graph_->steps_[s]->inputSlots)
                if (slot >= 0) lastUse[slot] = static_cast<long>(s);
        for (const auto& [step, slot] : implicitUses_)
            if (slot >= 0) lastUse[slot] = std::max(lastUse[slot], static_cast<long>(step));
        std::vector<bool> keep(graph_->slotNames_.size(), false);
        for (int slot : graph_->outputSlots_) keep[slot] = true;
        for (const auto& [slot, value] : graph_->constants_) keep[slot] = true;
        for (std::size_t slot = 0; slot < lastUse.size(); ++slot)
            if (lastUse[slot] >= 0 && !keep[slot])
                graph_->steps_[lastUse[slot]]->releaseAfter.push_back(static_cast<int>(slot));
        // An input a step may overwrite: released after it, read by it once, and not also read
        // by the step's subgraphs.
        const std::set<std::pair<std::size_t, int>> implicit(implicitUses_.begin(),
                                                             implicitUses_.end());
        for (std::size_t s = 0; s < graph_->steps_.size(); ++s) {
            auto& step = *graph_->steps_[s];
            step.releasedInputs.assign(step.inputSlots.size(), 0);
            for (std::size_t i = 0; i < step.inputSlots.size(); ++i) {
                const int slot = step.inputSlots[i];
                step.releasedInputs[i] =
                    slot >= 0 && lastUse[slot] == static_cast<long>(s) && !keep[slot] &&
                    !implicit.count({s, slot}) &&
                    std::count(step.inputSlots.begin(), step.inputSlots.end(), slot) == 1;
            }
        }
    }

    CompileShared& shared_;
    OpsetMap opsets_;
    CompiledGraph* graph_ = nullptr;
    std::unordered_set<std::string> defined_;
    std::unordered_set<std::string> freeSet_;
    std::vector<std::string> freeNames_;
    std::vector<std::pair<std::size_t, int>> implicitUses_;
};

CompiledGraph::~CompiledGraph() = default;

int CompiledGraph::slotOf(const std::string& name) const {
    auto it = slotIndex_.find(name);
    return it == slotIndex_.end() ? -1 : it->second;
}

// The nearest enclosing frame whose graph knows the name holds its value. That value may be
// None (an empty optional) and is still the value: names are unique across scopes, so there is
// nothing further up to fall back to.
const Value* Frame::lookup(const std::string& name) const {
    for (const Frame* f = this; f; f = f->parent) {
        int slot = f->graph->slotOf(name);
        if (slot >= 0) return &f->at(slot);
    }
    return nullptr;
}

const Value& Frame::at(int slot) const {
    const Value& own = values[static_cast<std::size_t>(slot)];
    if (!own.isNone()) return own;
    const Value* constant = graph->constantAt(slot);
    return constant ? *constant : own;
}

std::vector<Value> CompiledGraph::run(ThreadPool& pool, std::vector<Value> inputs,
                                      const Frame* parent, const std::atomic<bool>* cancel,
                                      std::vector<NodeProfile>* profile,
                                      const ValueObserver* observe) const {
    Frame frame;
    frame.graph = this;
    frame.parent = parent;
    frame.values.resize(slotNames_.size());
    if (inputs.size() > inputSlots_.size())
        throw EngineError("graph takes " + std::to_string(inputSlots_.size()) + " inputs, got " +
                          std::to_string(inputs.size()));
    // A None input leaves an initializer of the same name its default (Frame::at).
    for (std::size_t i = 0; i < inputs.size(); ++i)
        if (!inputs[i].isNone()) frame.values[inputSlots_[i]] = std::move(inputs[i]);
    // Free names no enclosing frame defines; reading one is an error (an empty optional that an
    // enclosing frame does define is a legitimate None).
    std::vector<bool> unresolved(slotNames_.size(), false);
    for (int slot : freeSlots_) {
        const Value* v = parent ? parent->lookup(slotNames_[slot]) : nullptr;
        if (v)
            frame.values[slot] = *v;
        else
            unresolved[slot] = true;
    }

    KernelContext ctx(pool, &frame, cancel);
    std::vector<const Value*> stepInputs;
    std::vector<Value> stepOutputs;
    // The clock is read only for a profile (two reads a node were 4% of a run of small nodes).
    const auto runStart =
        profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    // A profile's node names are strings kept after the run. Made between the run's tensors,
    // they kept its freed blocks from joining, and each run's large tensors took fresh pages:
    // the detector's 26 MB activations page-faulted 3x as often profiled as not, and a 1.6 ms
    // convolution was timed at 10 ms. So the entries are made before the first tensor, and the
    // run only writes its times into them (a failed run's unrun entries are dropped).
    struct StepTime {
        std::int64_t startNs, durationNs;
    };
    std::vector<StepTime> times;
    std::size_t firstEntry = 0;
    if (profile) {
        times.reserve(steps_.size());
        firstEntry = profile->size();
        profile->reserve(firstEntry + steps_.size());
        for (const auto& step : steps_)
            profile->push_back({profileNameOf(*step->node), step->node->op_type(), 0, 0});
    }
    struct ProfileEntries {
        std::vector<NodeProfile>* profile;
        const std::vector<StepTime>& times;
        std::size_t first;
        ~ProfileEntries() {
            if (!profile) return;
            profile->resize(first + times.size());
            for (std::size_t i = 0; i < times.size(); ++i) {
                (*profile)[first + i].startNs = times[i].startNs;
                (*profile)[first + i].durationNs = times[i].durationNs;
            }
        }
    } const entries{profile, times, firstEntry};
    for (const auto& step : steps_) {
        if (cancel && cancel->load(std::memory_order_relaxed)) throw RunCancelled();
        stepInputs.clear();
        for (int slot : step->inputSlots) {
            if (slot < 0) {
                stepInputs.push_back(nullptr);
                continue;
            }
            const Value& v = frame.at(slot);
            if (v.isNone() && unresolved[slot])
                throw EngineError(step->label + ": input '" + slotNames_[slot] +
                                  "' is not defined");
            stepInputs.push_back(&v);
        }
        stepOutputs.assign(step->outputSlots.size(), Value());
        const auto start =
            profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        ctx.setReleasedInputs(&step->releasedInputs);
        try {
            step->kernel->run(ctx, stepInputs, stepOutputs);
        } catch (const RunCancelled&) {
            throw;
        } catch (const EngineError& e) {
            throw EngineError(step->label + ": " + e.what());
        } catch (const std::bad_alloc&) {
            throw EngineError(step->label + ": out of memory");
        } catch (const std::exception& e) {
            throw EngineError(step->label + ": " + e.what());
        }
        if (profile) {
            const auto end = std::chrono::steady_clock::now();
            times.push_back(
                {std::chrono::duration_cast<std::chrono::nanoseconds>(start - runStart).count(),
                 std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()});
        }
        for (std::size_t o = 0; o < step->outputSlots.size(); ++o)
            if (step->outputSlots[o] >= 0)
                frame.values[step->outputSlots[o]] = std::move(stepOutputs[o]);
        if (observe)
            for (int slot : step->outputSlots)
                if (slot >= 0) (*observe)(slotNames_[slot], frame.values[slot]);
        for (int slot : step->releaseAfter) frame.values[slot] = Value();
    }
    std::vector<Value> outputs;
    outputs.reserve(outputSlots_.size());
    for (int slot : outputSlots_) outputs.push_back(frame.at(slot));
    return outputs;
}

// ---------------------------------------------------------------------------------------------

struct Session::State {
    onnx::ModelProto model;            // optimized copy (weights stay external where they were)
    std::uint64_t maxTensorBytes = 0;  // SessionOptions::maxTensorBytes
    std::unique_ptr<ThreadPool> pool;
    std::unique_ptr<ThreadGovernor> governor;  // the pool's threads each run uses
    std::mutex governorMutex;
    std::shared_ptr<CompiledGraph> graph;
    std::unique_ptr<CompileShared> shared;
    OptimizationReport report;
    std::atomic<std::uint64_t> reorderedWeightBytes{0};  // kernels' weight reorders
};

Session::~Session() = default;

namespace {

void fillLocalFunctions(CompileShared& shared, const onnx::ModelProto& model) {
    for (const auto& f : model.functions())
        shared.localFunctions[{canonicalDomain(f.domain()), f.name()}] = &f;
}

std::string describeUnsupported(const std::vector<UnsupportedNode>& nodes) {
    std::map<std::string, int> byOp;
    for (const auto& n : nodes)
        byOp[n.domain + "::" + n.opType + " (opset " + std::to_string(n.opsetVersion) + ")"]++;
    std::string text = std::to_string(nodes.size()) + " node(s) cannot run on the engine: ";
    bool first = true;
    for (const auto& [op, count] : byOp) {
        if (!first) text += ", ";
        first = false;
        text += op + (count > 1 ? " x" + std::to_string(count) : "");
    }
    return text;
}

}  // namespace

std::vector<UnsupportedNode> Session::findUnsupportedNodes(const onnx::ModelProto& model) {
    CompileShared shared;
    shared.registry = &KernelRegistry::global();
    shared.checkOnly = true;
    shared.model = &model;
    fillLocalFunctions(shared, model);
    GraphCompiler compiler(shared, opsetImports(model));
    try {
        compiler.compile(model.graph());
    } catch (const std::exception&) {
        // Structural problems are the checker's to report.
    }
    return shared.unsupported;
}

Result<std::unique_ptr<Session>> Session::create(const LoadedModel& loaded,
                                                 const SessionOptions& options) {
    return createFrom(loaded, nullptr, options);
}

Result<std::unique_ptr<Session>> Session::create(LoadedModel&& loaded,
                                                 const SessionOptions& options) {
    std::shared_ptr<onnx::ModelProto> taken = std::move(loaded.proto);
    if (taken && taken.use_count() == 1) return createFrom(loaded, taken.get(), options);
    loaded.proto = std::move(taken);
    return createFrom(loaded, nullptr, options);
}

namespace {

// The rules of hostileNodeProblem (model/ShapeInferenceGuard.h) on every node, subgraphs included.
void checkAttributeValues(const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
        if (const std::string problem = hostileNodeProblem(node, {}); !problem.empty())
            throw EngineError(nodeLabel(node) + ": " + problem);
        for (const auto& a : node.attribute()) {
            if (a.has_g()) checkAttributeValues(a.g());
            for (const auto& g : a.graphs()) checkAttributeValues(g);
        }
    }
}

}  // namespace

namespace {

// The session's memory-mapped weights read in now, at load, when they fit in half the memory: a
// first run otherwise stops at every page of them (the 0.5 GB int4 decoder's 128-token prefill,
// generate's first run, took ~0.2 s longer than the runs after it, at 1 and 2 threads; ONNX
// Runtime reads its weights at load too). Larger files keep coming in as kernels touch them.
// Tables that are only looked up by rows (a Gather's data, embeddings) are left out: a run reads
// the rows of its tokens, and reading the whole table in would only add it to the process's
// memory (the genai decoder's 262 MB embedding table: peak RSS 557 MB decoding 3 tokens, above
// ONNX Runtime's 487).
void collectTableLookups(const onnx::GraphProto& graph, std::set<std::string>& lookups,
                         std::set<std::string>& otherReads) {
    auto lookupInputs = [](const onnx::NodeProto& node) -> std::vector<int> {
        if (isOnnxOp(node, "Gather")) return {0};
        if (node.domain() == kMicrosoftDomain && node.op_type() == "GatherBlockQuantized")
            return {0};
        if (node.domain() == kMicrosoftDomain && node.op_type() == "EmbedLayerNormalization")
            return {2, 3, 4};  // word, position and segment embeddings
        return {};
    };
    for (const auto& output : graph.output()) otherReads.insert(output.name());
    for (const auto& node : graph.node()) {
        const std::vector<int> rows = lookupInputs(node);
        for (int i = 0; i < node.input_size(); ++i)
            (std::find(rows.begin(), rows.end(), i) != rows.end() ? lookups : otherReads)
                .insert(node.input(i));
        for (const auto& a : node.attribute()) {
            if (a.has_g()) collectTableLookups(a.g(), lookups, otherReads);
            for (const auto& g : a.graphs()) collectTableLookups(g, lookups, otherReads);
        }
    }
}

void populateMappedWeights(const CompileShared& shared, const onnx::GraphProto& graph) {
    const auto memory = physicalMemoryBytes();
    if (!memory) return;
    std::uint64_t budget = *memory / 2;
    std::set<std::string> lookups, otherReads;
    collectTableLookups(graph, lookups, otherReads);
    auto onlyLookedUp = [&](const std::string& name) {
        return lookups.count(name) > 0 && otherReads.count(name) == 0;
    };
    for (const auto& mapping : shared.mappings) {
        bool whole = true;
        std::uint64_t needed = 0;
        for (const auto& init : shared.mappedInitializers)
            if (init.mapping == mapping.get()) {
                if (onlyLookedUp(init.name))
                    whole = false;
                else
                    needed += init.bytes;
            }
        if (whole) {
            if (mapping->populate(budget)) budget -= mapping->size();  // false above the budget
            continue;
        }
        if (needed > budget) continue;
        for (const auto& init : shared.mappedInitializers)
            if (init.mapping == mapping.get() && !onlyLookedUp(init.name))
                mapping->populate(init.offset, init.bytes);
        budget -= needed;
    }
}

}  // namespace

Result<std::unique_ptr<Session>> Session::createFrom(const LoadedModel& loaded,
                                                     onnx::ModelProto* owned,
                                                     const SessionOptions& options) {
    const std::string where = loaded.path.string();
    if (!owned && !loaded.proto) return makeError(where, "no model loaded");
    const ScopedTensorByteLimit limit(options.maxTensorBytes);
    std::unique_ptr<Session> session(new Session());
    auto state = std::make_unique<State>();
    try {
        if (owned)
            state->model.Swap(owned);
        else
            state->model = *loaded.proto;
        // Attribute values every kernel's arithmetic assumes (positive strides, block sizes...),
        // checked on the model as written, before the optimizer folds or rewrites any node.
        checkAttributeValues(state->model.graph());
        state->shared = std::make_unique<CompileShared>();
        auto& shared = *state->shared;
        if (options.optimize) {
            OptimizerOptions optimizer;
            optimizer.shapes = loaded.shapes;
            state->report = optimizeModel(state->model, loaded.directory, optimizer);
            shared.shapes = state->report.shapes;
        } else {
            shared.modelShapes = loaded.shapes;
        }
        shared.registry = &KernelRegistry::global();
        shared.modelDirectory = loaded.directory;
        shared.model = &state->model;
        if (!options.keepOptimizedModelWeights)
            shared.releasableGraph = state->model.mutable_graph();
        fillLocalFunctions(shared, state->model);
        GraphCompiler compiler(shared, opsetImports(state->model));
        state->graph = compiler.compile(state->model.graph());
        if (!shared.unsupported.empty())
            return makeError(where, describeUnsupported(shared.unsupported));
        if (!compiler.freeNames().empty())
            return makeError(where, "the graph reads '" + compiler.freeNames().front() +
                                        "', which no input, initializer or node defines");
        populateMappedWeights(shared, state->model.graph());
    } catch (const EngineError& e) {
        return makeError(where, e.what());
    } catch (const std::bad_alloc&) {
        return makeError(where, "out of memory while compiling the model");
    } catch (const std::exception& e) {
        // A library's own exception (onnx shape inference, protobuf, the standard library) on a
        // model the checks above let through: still an error on this model, never a crash.
        return makeError(where, std::string("cannot compile the model: ") + e.what());
    }

    std::set<std::string> initializerNames;
    for (const auto& init : state->model.graph().initializer())
        initializerNames.insert(init.name());
    for (const auto& input : state->model.graph().input()) {
        if (initializerNames.count(input.name())) continue;
        session->inputs_.push_back({input.name(), input.type()});
    }
    for (const auto& output : state->model.graph().output())
        session->outputs_.push_back({output.name(), output.type()});
    state->pool = std::make_unique<ThreadPool>(options.threads);
    state->governor = std::make_unique<ThreadGovernor>(
        state->pool->requestedThreads(), options.adaptThreadsToLoad && !adaptiveThreadsTurnedOff(),
        options.threadWaitReader ? options.threadWaitReader : readThreadWaitTimes);
    state->maxTensorBytes = options.maxTensorBytes;
    session->state_ = std::move(state);
    return session;
}

Result<std::vector<Value>> Session::run(const std::map<std::string, Value>& feeds,
                                        RunControl* control) {
    const auto& graph = *state_->graph;
    std::vector<Value> inputs(graph.inputNames().size());
    std::set<std::string> known;
    for (std::size_t i = 0; i < graph.inputNames().size(); ++i) {
        const std::string& name = graph.inputNames()[i];
        known.insert(name);
        auto it = feeds.find(name);
        if (it != feeds.end()) {
            inputs[i] = it->second;
            continue;
        }
        bool hasDefault = false;
        for (const auto& init : state_->model.graph().initializer())
            if (init.name() == name) hasDefault = true;
        if (!hasDefault) return makeError("input '" + name + "'", "no value given");
    }
    for (const auto& [name, value] : feeds)
        if (!known.count(name))
            return makeError("input '" + name + "'", "the model has no such input");
    try {
        std::vector<NodeProfile>* profile = nullptr;
        if (control && control->profile) {
            control->nodeProfiles.clear();
            profile = &control->nodeProfiles;
        }
        // Mapped weights whose file changed would be read as whatever the file holds now, or
        // fault past its new end: checked before the run, and after it for changes meanwhile
        // (the SIGBUS guard of MappedFile.h turns a fault into zeros and faulted()).
        for (const auto& mapping : state_->shared->mappings)
            if (auto st = mapping->checkUnchanged(); !st) return st.error();
        int threads = 1;
        {
            const std::lock_guard lock(state_->governorMutex);
            threads = state_->governor->beginRun();
        }
        // Ends the governor's run however the run ends (an error, a cancel).
        struct RunEnd {
            State& state;
            ~RunEnd() {
                const std::lock_guard lock(state.governorMutex);
                state.governor->endRun();
            }
        } runEnd{*state_};
        state_->pool->setActiveThreads(threads);
        applyThreadCountToCallingThread(threads);
        const ScopedTensorByteLimit limit(state_->maxTensorBytes);
        const ScopedWeightReorderCounter reorders(&state_->reorderedWeightBytes);
        const CompiledGraph::ValueObserver* observe =
            control && control->onValue ? &control->onValue : nullptr;
        auto outputs = graph.run(*state_->pool, std::move(inputs), nullptr,
                                 control ? &control->cancel : nullptr, profile, observe);
        for (const auto& mapping : state_->shared->mappings)
            if (auto st = mapping->checkUnchanged(); !st) return st.error();
        return outputs;
    } catch (const EngineError& e) {
        return Error{e.what()};
    } catch (const std::bad_alloc&) {
        return Error{"out of memory while running the model"};
    } catch (const std::exception& e) {
        return Error{e.what()};
    }
}

int Session::threads() const { return state_->pool->requestedThreads(); }

ThreadUse Session::threadUse() const {
    const std::lock_guard lock(state_->governorMutex);
    return state_->governor->use();
}

const onnx::ModelProto& Session::optimizedModel() const { return state_->model; }

const OptimizationReport& Session::optimizationReport() const { return state_->report; }

WeightMemory Session::weightMemory() const {
    WeightMemory memory = state_->shared->weights;
    memory.reorderedBytes = state_->reorderedWeightBytes.load();
    return memory;
}

}  // namespace onnxlens::engine
