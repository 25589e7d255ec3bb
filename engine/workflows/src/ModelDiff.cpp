#include "onnxlens/workflows/ModelDiff.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ReportText.h"
#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/TensorProto.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/OnnxDomains.h"
#include "onnxlens/model/TensorTypes.h"
#include "onnxlens/model/ViewGraph.h"
#include "onnxlens/workflows/ReferenceComparison.h"

namespace onnxlens::engine {

namespace {

using Json = nlohmann::json;

std::string typeText(const onnx::TypeProto& type) {
    if (type.has_tensor_type()) return tensorTypeOf(type).text();
    return typeName(type);
}

// Every name a graph defines: inputs, initializers and node outputs.
std::unordered_set<std::string> valueNames(const onnx::GraphProto& g) {
    std::unordered_set<std::string> names;
    for (const auto& i : g.input()) names.insert(i.name());
    for (const auto& i : g.initializer()) names.insert(i.name());
    for (const auto& n : g.node())
        for (const auto& o : n.output())
            if (!o.empty()) names.insert(o);
    return names;
}

// The largest |a - b| of two tensors of one dtype and shape, 0 when their bytes are equal; -1
// when they cannot be compared (an error converting either, strings that differ).
double maxAbsDifference(const onnx::TensorProto& a, const std::filesystem::path& dirA,
                        const onnx::TensorProto& b, const std::filesystem::path& dirB) {
    try {
        const Tensor ta = tensorFromProto(a, dirA);
        const Tensor tb = tensorFromProto(b, dirB);
        if (ta.dtype() != tb.dtype() || ta.shape() != tb.shape()) return -1;
        if (ta.dtype() == DataType::String) {
            const auto sa = ta.span<std::string>();
            const auto sb = tb.span<std::string>();
            return std::equal(sa.begin(), sa.end(), sb.begin()) ? 0.0 : -1.0;
        }
        if (ta.byteSize() == 0 || std::memcmp(ta.raw(), tb.raw(), ta.byteSize()) == 0) return 0;
        return compareTensors(tb, ta, Tolerance{0, 0}).maxAbsError;
    } catch (const std::exception&) {
        return -1;
    }
}

class NodeMatcher {
  public:
    NodeMatcher(const onnx::GraphProto& a, const onnx::GraphProto& b)
        : ga_(a),
          gb_(b),
          ia_(a),
          ib_(b),
          matchA_(a.node_size(), -1),
          matchB_(b.node_size(), -1),
          how_(a.node_size()) {}

    void run() {
        seedGraphInputs();
        matchByName();
        matchByOutputs();
        for (int round = 0; round < 8; ++round) {
            const int before = matchedCount_;
            matchForward();
            matchBackward();
            if (matchedCount_ == before) break;
        }
        matchByOrder();
    }

    int matchOfA(int a) const { return matchA_[a]; }
    int matchOfB(int b) const { return matchB_[b]; }
    const std::string& how(int a) const { return how_[a]; }
    // The B value corresponding to A's value (by name or structure), or "".
    std::string correspondent(const std::string& valueA) const {
        auto it = corr_.find(valueA);
        return it == corr_.end() ? std::string() : it->second;
    }

  private:
    void correspond(const std::string& a, const std::string& b) {
        if (a.empty() || b.empty() || corr_.count(a) || corrBack_.count(b)) return;
        corr_[a] = b;
        corrBack_[b] = a;
    }

    void link(int a, int b, const char* how) {
        matchA_[a] = b;
        matchB_[b] = a;
        how_[a] = how;
        ++matchedCount_;
        const auto& na = ga_.node(a);
        const auto& nb = gb_.node(b);
        for (int i = 0; i < std::min(na.output_size(), nb.output_size()); ++i)
            correspond(na.output(i), nb.output(i));
        // Weights and constants read at the same place are the same weights, renamed or not.
        for (int i = 0; i < std::min(na.input_size(), nb.input_size()); ++i)
            if (ia_.producer(na.input(i)) < 0 && ib_.producer(nb.input(i)) < 0)
                correspond(na.input(i), nb.input(i));
    }

    bool compatible(int a, int b) const {
        const auto& na = ga_.node(a);
        const auto& nb = gb_.node(b);
        return matchB_[b] < 0 && na.op_type() == nb.op_type() &&
               canonicalDomain(na.domain()) == canonicalDomain(nb.domain());
    }

    // How far apart two nodes sit in their graphs' orders (0 .. 1).
    double placeDistance(int a, int b) const {
        return std::abs(static_cast<double>(a) / std::max(1, ga_.node_size()) -
                        static_cast<double>(b) / std::max(1, gb_.node_size()));
    }

    void seedGraphInputs() {
        std::unordered_set<std::string> inB;
        for (const auto& i : gb_.input()) inB.insert(i.name());
        for (const auto& i : gb_.initializer()) inB.insert(i.name());
        for (const auto& i : ga_.input())
            if (inB.count(i.name())) correspond(i.name(), i.name());
        for (const auto& i : ga_.initializer())
            if (inB.count(i.name())) correspond(i.name(), i.name());
        // Renamed inputs pair by position among the graph inputs that feed data.
        std::vector<std::string> restA, restB;
        for (const auto& n : feedable(ga_))
            if (!corr_.count(n)) restA.push_back(n);
        for (const auto& n : feedable(gb_))
            if (!corrBack_.count(n)) restB.push_back(n);
        for (std::size_t i = 0; i < std::min(restA.size(), restB.size()); ++i)
            correspond(restA[i], restB[i]);
    }

    static std::vector<std::string> feedable(const onnx::GraphProto& g) {
        std::unordered_set<std::string> inits;
        for (const auto& i : g.initializer()) inits.insert(i.name());
        std::vector<std::string> names;
        for (const auto& i : g.input())
            if (!inits.count(i.name())) names.push_back(i.name());
        return names;
    }

    void matchByName() {
        std::unordered_map<std::string, int> byName;
        std::unordered_set<std::string> duplicate;
        for (int b = 0; b < gb_.node_size(); ++b) {
            const auto& name = gb_.node(b).name();
            if (name.empty()) continue;
            if (!byName.emplace(name, b).second) duplicate.insert(name);
        }
        std::unordered_map<std::string, int> countA;
        for (const auto& n : ga_.node()) ++countA[n.name()];
        for (int a = 0; a < ga_.node_size(); ++a) {
            const auto& name = ga_.node(a).name();
            if (name.empty() || countA[name] > 1 || duplicate.count(name)) continue;
            auto it = byName.find(name);
            if (it != byName.end() && matchB_[it->second] < 0) link(a, it->second, "name");
        }
    }

    // Unnamed nodes (and nodes whose names changed but whose first output kept its name, as
    // quantizers and optimizers keep the output a replaced node wrote).
    void matchByOutputs() {
        for (int a = 0; a < ga_.node_size(); ++a) {
            if (matchA_[a] >= 0 || ga_.node(a).output_size() == 0) continue;
            const int b = ib_.producer(ga_.node(a).output(0));
            if (b >= 0 && matchB_[b] < 0 && gb_.node(b).output(0) == ga_.node(a).output(0))
                link(a, b, "outputs");
        }
    }

    // A node whose inputs come from matched nodes matches the reader of those values in B with
    // the same op type that agrees on most input positions (the nearest in order on a tie).
    void matchForward() {
        for (int a = 0; a < ga_.node_size(); ++a) {
            if (matchA_[a] >= 0) continue;
            const auto& na = ga_.node(a);
            int best = -1, bestScore = 0;
            double bestDistance = 2;
            for (const auto& input : na.input()) {
                auto it = corr_.find(input);
                if (input.empty() || it == corr_.end()) continue;
                for (int b : ib_.consumers(it->second)) {
                    if (!compatible(a, b)) continue;
                    const auto& nb = gb_.node(b);
                    int score = 0;
                    for (int i = 0; i < std::min(na.input_size(), nb.input_size()); ++i) {
                        auto c = corr_.find(na.input(i));
                        if (c != corr_.end() && c->second == nb.input(i)) ++score;
                    }
                    const double distance = placeDistance(a, b);
                    if (score > bestScore || (score == bestScore && distance < bestDistance)) {
                        best = b;
                        bestScore = score;
                        bestDistance = distance;
                    }
                }
            }
            if (best >= 0) link(a, best, "inputs");
        }
    }

    // A node whose output a matched node reads matches the producer of what that node reads at
    // the same input position in B.
    void matchBackward() {
        for (int a = ga_.node_size() - 1; a >= 0; --a) {
            if (matchA_[a] >= 0) continue;
            const auto& na = ga_.node(a);
            int found = -1;
            for (const auto& output : na.output()) {
                if (output.empty()) continue;
                for (int c : ia_.consumers(output)) {
                    const int cb = matchA_[c];
                    if (cb < 0) continue;
                    const auto& nc = ga_.node(c);
                    const auto& ncb = gb_.node(cb);
                    for (int k = 0; k < std::min(nc.input_size(), ncb.input_size()); ++k) {
                        if (nc.input(k) != output) continue;
                        const int b = ib_.producer(ncb.input(k));
                        if (b >= 0 && compatible(a, b)) found = b;
                    }
                    if (found >= 0) break;
                }
                if (found >= 0) break;
            }
            if (found >= 0) link(a, found, "consumers");
        }
    }

    // What is left pairs in order within each op type, when both graphs have as many of it left.
    void matchByOrder() {
        std::map<std::string, std::vector<int>> leftA, leftB;
        auto key = [](const onnx::NodeProto& n) {
            return canonicalDomain(n.domain()) + "::" + n.op_type();
        };
        for (int a = 0; a < ga_.node_size(); ++a)
            if (matchA_[a] < 0) leftA[key(ga_.node(a))].push_back(a);
        for (int b = 0; b < gb_.node_size(); ++b)
            if (matchB_[b] < 0) leftB[key(gb_.node(b))].push_back(b);
        for (const auto& [op, as] : leftA) {
            auto it = leftB.find(op);
            if (it == leftB.end() || it->second.size() != as.size()) continue;
            for (std::size_t i = 0; i < as.size(); ++i) link(as[i], it->second[i], "order");
        }
    }

    const onnx::GraphProto& ga_;
    const onnx::GraphProto& gb_;
    GraphIndex ia_, ib_;
    std::vector<int> matchA_, matchB_;
    std::vector<std::string> how_;
    std::unordered_map<std::string, std::string> corr_, corrBack_;
    int matchedCount_ = 0;
};

std::string attributeText(const onnx::AttributeProto& attribute) {
    return attributeValueText(attribute, 60);
}

void compareAttributes(const onnx::NodeProto& na, const onnx::NodeProto& nb,
                       const ModelDiffOptions& options, std::vector<std::string>& changes) {
    std::map<std::string, const onnx::AttributeProto*> inA, inB;
    for (const auto& at : na.attribute()) inA[at.name()] = &at;
    for (const auto& at : nb.attribute()) inB[at.name()] = &at;
    for (const auto& [name, at] : inA) {
        auto it = inB.find(name);
        if (it == inB.end()) {
            changes.push_back("attribute " + name + " removed (" + attributeText(*at) + ")");
            continue;
        }
        if (at->SerializeAsString() == it->second->SerializeAsString()) continue;
        std::string change =
            "attribute " + name + ": " + attributeText(*at) + " -> " + attributeText(*it->second);
        if (at->has_t() && it->second->has_t()) {
            const double d =
                maxAbsDifference(at->t(), options.directoryA, it->second->t(), options.directoryB);
            if (d >= 0) change += " (max abs difference " + formatNumbers("%.3g", d) + ")";
        }
        changes.push_back(std::move(change));
    }
    for (const auto& [name, at] : inB)
        if (!inA.count(name))
            changes.push_back("attribute " + name + " added (" + attributeText(*at) + ")");
}

void compareHeader(const onnx::ModelProto& a, const onnx::ModelProto& b, ModelDiff& diff) {
    if (a.ir_version() != b.ir_version())
        diff.headerChanges.push_back("IR version " + std::to_string(a.ir_version()) + " -> " +
                                     std::to_string(b.ir_version()));
    const std::string producerA = a.producer_name() + " " + a.producer_version();
    const std::string producerB = b.producer_name() + " " + b.producer_version();
    if (producerA != producerB)
        diff.headerChanges.push_back("producer '" + producerA + "' -> '" + producerB + "'");
    const auto opsetsA = opsetImports(a);
    const auto opsetsB = opsetImports(b);
    for (const auto& [domain, version] : opsetsA) {
        auto it = opsetsB.find(domain);
        if (it == opsetsB.end())
            diff.headerChanges.push_back("opset " + displayDomain(domain) + " " +
                                         std::to_string(version) + " removed");
        else if (it->second != version)
            diff.headerChanges.push_back("opset " + displayDomain(domain) + " " +
                                         std::to_string(version) + " -> " +
                                         std::to_string(it->second));
    }
    for (const auto& [domain, version] : opsetsB)
        if (!opsetsA.count(domain))
            diff.headerChanges.push_back("opset " + displayDomain(domain) + " " +
                                         std::to_string(version) + " added");
    std::map<std::string, std::string> metaA, metaB;
    for (const auto& p : a.metadata_props()) metaA[p.key()] = p.value();
    for (const auto& p : b.metadata_props()) metaB[p.key()] = p.value();
    for (const auto& [key, value] : metaA) {
        auto it = metaB.find(key);
        if (it == metaB.end())
            diff.metadataChanges.push_back(key + " removed ('" + value + "')");
        else if (it->second != value)
            diff.metadataChanges.push_back(key + ": '" + value + "' -> '" + it->second + "'");
    }
    for (const auto& [key, value] : metaB)
        if (!metaA.count(key)) diff.metadataChanges.push_back(key + " added ('" + value + "')");
}

// Graph inputs or outputs: by name, then the unpaired ones by position (renamed).
void compareInterface(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& a,
                      const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& b,
                      const std::unordered_set<std::string>& skipA,
                      const std::unordered_set<std::string>& skipB, const std::string& what,
                      std::vector<std::string>& changes) {
    std::vector<const onnx::ValueInfoProto*> va, vb;
    for (const auto& v : a)
        if (!skipA.count(v.name())) va.push_back(&v);
    for (const auto& v : b)
        if (!skipB.count(v.name())) vb.push_back(&v);
    std::vector<const onnx::ValueInfoProto*> restA, restB;
    for (const auto* x : va) {
        auto it =
            std::find_if(vb.begin(), vb.end(), [&](auto* y) { return y->name() == x->name(); });
        if (it == vb.end()) {
            restA.push_back(x);
            continue;
        }
        const std::string ta = typeText(x->type()), tb = typeText((*it)->type());
        if (ta != tb) changes.push_back(what + " " + x->name() + ": " + ta + " -> " + tb);
    }
    for (const auto* y : vb)
        if (std::none_of(va.begin(), va.end(), [&](auto* x) { return x->name() == y->name(); }))
            restB.push_back(y);
    const std::size_t paired = std::min(restA.size(), restB.size());
    for (std::size_t i = 0; i < paired; ++i) {
        const std::string ta = typeText(restA[i]->type()), tb = typeText(restB[i]->type());
        changes.push_back(what + " renamed " + restA[i]->name() + " -> " + restB[i]->name() +
                          (ta == tb ? " (" + ta + ")" : ": " + ta + " -> " + tb));
    }
    for (std::size_t i = paired; i < restA.size(); ++i)
        changes.push_back(what + " " + restA[i]->name() + " removed (" +
                          typeText(restA[i]->type()) + ")");
    for (std::size_t i = paired; i < restB.size(); ++i)
        changes.push_back(what + " " + restB[i]->name() + " added (" + typeText(restB[i]->type()) +
                          ")");
}

void compareInitializers(const onnx::GraphProto& ga, const onnx::GraphProto& gb,
                         const NodeMatcher& matcher, const ModelDiffOptions& options,
                         ModelDiff& diff) {
    std::unordered_map<std::string, const onnx::TensorProto*> inB;
    for (const auto& t : gb.initializer()) inB[t.name()] = &t;
    std::unordered_set<std::string> pairedB;
    for (const auto& ta : ga.initializer()) {
        auto it = inB.find(ta.name());
        if (it == inB.end()) it = inB.find(matcher.correspondent(ta.name()));
        InitializerDiff d;
        d.nameA = ta.name();
        d.typeA = tensorTypeOf(ta).text();
        if (it == inB.end() || pairedB.count(it->first)) {
            d.kind = InitializerDiff::Kind::Removed;
            d.change = "removed";
            diff.initializers.push_back(std::move(d));
            continue;
        }
        const onnx::TensorProto& tb = *it->second;
        pairedB.insert(tb.name());
        d.nameB = tb.name();
        d.typeB = tensorTypeOf(tb).text();
        if (d.typeA != d.typeB) {
            d.kind = InitializerDiff::Kind::Changed;
            d.change = d.typeA + " -> " + d.typeB;
        } else if (options.compareValues) {
            d.maxAbsDifference = maxAbsDifference(ta, options.directoryA, tb, options.directoryB);
            if (d.maxAbsDifference != 0) {
                d.kind = InitializerDiff::Kind::Changed;
                d.change = d.maxAbsDifference > 0
                               ? "values differ (max abs difference " +
                                     formatNumbers("%.3g", d.maxAbsDifference) + ")"
                               : "values differ";
            }
        }
        if (d.kind != InitializerDiff::Kind::Same || d.nameA != d.nameB) {
            if (d.kind == InitializerDiff::Kind::Same) d.change = "renamed";
            diff.initializers.push_back(std::move(d));
        }
    }
    for (const auto& tb : gb.initializer()) {
        if (pairedB.count(tb.name())) continue;
        InitializerDiff d;
        d.kind = InitializerDiff::Kind::Added;
        d.nameB = tb.name();
        d.typeB = tensorTypeOf(tb).text();
        d.change = "added";
        diff.initializers.push_back(std::move(d));
    }
}

void buildValueMap(const onnx::GraphProto& ga, const onnx::GraphProto& gb, ModelDiff& diff) {
    const auto namesA = valueNames(ga);
    const auto namesB = valueNames(gb);
    GraphIndex ib(gb);
    std::unordered_set<std::string> usedB;
    auto add = [&](const std::string& a, const std::string& b) {
        if (a.empty() || b.empty() || diff.valueMap.count(a) || usedB.count(b)) return;
        diff.valueMap[a] = b;
        usedB.insert(b);
    };
    for (const auto& n : ga.node())
        for (const auto& o : n.output())
            if (!o.empty() && ib.producer(o) >= 0) add(o, o);
    for (int i = 0; i < std::min(ga.output_size(), gb.output_size()); ++i)
        if (!namesB.count(ga.output(i).name()) && !namesA.count(gb.output(i).name()))
            add(ga.output(i).name(), gb.output(i).name());
    for (const auto& nd : diff.nodes) {
        if (nd.a < 0 || nd.b < 0) continue;
        const auto& na = ga.node(nd.a);
        const auto& nb = gb.node(nd.b);
        if (na.op_type() != nb.op_type() ||
            canonicalDomain(na.domain()) != canonicalDomain(nb.domain()))
            continue;
        for (int i = 0; i < std::min(na.output_size(), nb.output_size()); ++i)
            if (!namesB.count(na.output(i)) && !namesA.count(nb.output(i)))
                add(na.output(i), nb.output(i));
    }
}

}  // namespace

const char* nodeDiffKindName(NodeDiff::Kind kind) {
    switch (kind) {
        case NodeDiff::Kind::Same:
            return "same";
        case NodeDiff::Kind::Renamed:
            return "renamed";
        case NodeDiff::Kind::Changed:
            return "changed";
        case NodeDiff::Kind::Added:
            return "added";
        case NodeDiff::Kind::Removed:
            return "removed";
    }
    return "?";
}

bool ModelDiff::identical() const {
    return headerChanges.empty() && inputChanges.empty() && outputChanges.empty() &&
           metadataChanges.empty() && initializers.empty() && renamed == 0 && changed == 0 &&
           added == 0 && removed == 0;
}

const NodeDiff* ModelDiff::matchOfA(int a) const {
    for (const auto& n : nodes)
        if (n.a == a) return &n;
    return nullptr;
}

const NodeDiff* ModelDiff::matchOfB(int b) const {
    for (const auto& n : nodes)
        if (n.b == b) return &n;
    return nullptr;
}

ModelDiff diffModels(const onnx::ModelProto& a, const onnx::ModelProto& b,
                     const ModelDiffOptions& options) {
    ModelDiff diff;
    const auto& ga = a.graph();
    const auto& gb = b.graph();
    diff.nodesA = ga.node_size();
    diff.nodesB = gb.node_size();
    compareHeader(a, b, diff);

    NodeMatcher matcher(ga, gb);
    matcher.run();
    for (int ai = 0; ai < ga.node_size(); ++ai) {
        const auto& na = ga.node(ai);
        NodeDiff d;
        d.a = ai;
        d.nameA = na.name();
        d.opTypeA = na.op_type();
        d.b = matcher.matchOfA(ai);
        if (d.b < 0) {
            d.kind = NodeDiff::Kind::Removed;
            ++diff.removed;
            diff.nodes.push_back(std::move(d));
            continue;
        }
        const auto& nb = gb.node(d.b);
        d.nameB = nb.name();
        d.opTypeB = nb.op_type();
        d.matchedBy = matcher.how(ai);
        if (na.op_type() != nb.op_type())
            d.changes.push_back("op type " + na.op_type() + " -> " + nb.op_type());
        if (canonicalDomain(na.domain()) != canonicalDomain(nb.domain()))
            d.changes.push_back("domain " + displayDomain(na.domain()) + " -> " +
                                displayDomain(nb.domain()));
        compareAttributes(na, nb, options, d.changes);
        if (na.input_size() != nb.input_size())
            d.changes.push_back("inputs " + std::to_string(na.input_size()) + " -> " +
                                std::to_string(nb.input_size()));
        for (int i = 0; i < std::min(na.input_size(), nb.input_size()); ++i) {
            const std::string expected = na.input(i).empty() ? std::string()
                                         : matcher.correspondent(na.input(i)).empty()
                                             ? na.input(i)
                                             : matcher.correspondent(na.input(i));
            if (expected != nb.input(i))
                d.changes.push_back("input " + std::to_string(i) + ": " + na.input(i) + " -> " +
                                    nb.input(i));
        }
        bool renamed = na.name() != nb.name();
        for (int i = 0; i < std::min(na.output_size(), nb.output_size()); ++i)
            renamed = renamed || na.output(i) != nb.output(i);
        if (na.output_size() != nb.output_size())
            d.changes.push_back("outputs " + std::to_string(na.output_size()) + " -> " +
                                std::to_string(nb.output_size()));
        if (!d.changes.empty()) {
            d.kind = NodeDiff::Kind::Changed;
            ++diff.changed;
        } else if (renamed) {
            d.kind = NodeDiff::Kind::Renamed;
            ++diff.renamed;
        } else {
            ++diff.same;
        }
        diff.nodes.push_back(std::move(d));
    }
    for (int bi = 0; bi < gb.node_size(); ++bi) {
        if (matcher.matchOfB(bi) >= 0) continue;
        NodeDiff d;
        d.kind = NodeDiff::Kind::Added;
        d.b = bi;
        d.nameB = gb.node(bi).name();
        d.opTypeB = gb.node(bi).op_type();
        ++diff.added;
        diff.nodes.push_back(std::move(d));
    }

    std::unordered_set<std::string> initsA, initsB;
    for (const auto& t : ga.initializer()) initsA.insert(t.name());
    for (const auto& t : gb.initializer()) initsB.insert(t.name());
    compareInterface(ga.input(), gb.input(), initsA, initsB, "input", diff.inputChanges);
    compareInterface(ga.output(), gb.output(), {}, {}, "output", diff.outputChanges);
    compareInitializers(ga, gb, matcher, options, diff);
    buildValueMap(ga, gb, diff);
    return diff;
}

onnx::ModelProto modelSkeleton(const onnx::ModelProto& model) {
    onnx::ModelProto s;
    s.set_ir_version(model.ir_version());
    s.set_producer_name(model.producer_name());
    s.set_producer_version(model.producer_version());
    *s.mutable_opset_import() = model.opset_import();
    *s.mutable_metadata_props() = model.metadata_props();
    const auto& g = model.graph();
    auto* sg = s.mutable_graph();
    sg->set_name(g.name());
    *sg->mutable_node() = g.node();
    *sg->mutable_input() = g.input();
    *sg->mutable_output() = g.output();
    for (const auto& t : g.initializer()) {
        auto* st = sg->add_initializer();
        st->set_name(t.name());
        st->set_data_type(t.data_type());
        *st->mutable_dims() = t.dims();
    }
    return s;
}

namespace {

std::string nodeLabel(const std::string& name, const std::string& opType) {
    return name.empty() ? "(unnamed " + opType + ")" : name + " (" + opType + ")";
}

}  // namespace

Json modelDiffJson(const ModelDiff& diff) {
    Json nodes = Json::array();
    for (const auto& n : diff.nodes) {
        if (n.kind == NodeDiff::Kind::Same) continue;
        Json j{{"kind", nodeDiffKindName(n.kind)}};
        if (n.a >= 0) j["a"] = {{"index", n.a}, {"name", n.nameA}, {"op_type", n.opTypeA}};
        if (n.b >= 0) j["b"] = {{"index", n.b}, {"name", n.nameB}, {"op_type", n.opTypeB}};
        if (!n.matchedBy.empty()) j["matched_by"] = n.matchedBy;
        if (!n.changes.empty()) j["changes"] = n.changes;
        nodes.push_back(std::move(j));
    }
    Json inits = Json::array();
    for (const auto& d : diff.initializers) {
        static const char* kinds[] = {"same", "changed", "added", "removed"};
        Json j{{"kind", kinds[static_cast<int>(d.kind)]}, {"change", d.change}};
        if (!d.nameA.empty()) j["a"] = {{"name", d.nameA}, {"type", d.typeA}};
        if (!d.nameB.empty()) j["b"] = {{"name", d.nameB}, {"type", d.typeB}};
        if (d.maxAbsDifference >= 0) j["max_abs_difference"] = d.maxAbsDifference;
        inits.push_back(std::move(j));
    }
    return Json{{"a", diff.nameA},
                {"b", diff.nameB},
                {"identical", diff.identical()},
                {"summary",
                 {{"nodes_a", diff.nodesA},
                  {"nodes_b", diff.nodesB},
                  {"same", diff.same},
                  {"renamed", diff.renamed},
                  {"changed", diff.changed},
                  {"added", diff.added},
                  {"removed", diff.removed},
                  {"initializers_differing", diff.initializers.size()}}},
                {"header", diff.headerChanges},
                {"metadata", diff.metadataChanges},
                {"inputs", diff.inputChanges},
                {"outputs", diff.outputChanges},
                {"nodes", nodes},
                {"initializers", inits}};
}

std::string modelDiffText(const ModelDiff& diff, std::size_t maxLines) {
    std::ostringstream out;
    out << diff.nameA << " vs " << diff.nameB << ": ";
    if (diff.identical()) {
        out << "identical (" << diff.nodesA << " nodes)\n";
        return out.str();
    }
    out << diff.nodesA << " vs " << diff.nodesB << " nodes: " << diff.same << " same, "
        << diff.renamed << " renamed, " << diff.changed << " changed, " << diff.removed
        << " removed, " << diff.added << " added; " << diff.initializers.size()
        << " initializers differ\n";
    auto section = [&](const char* title, const std::vector<std::string>& lines) {
        if (lines.empty()) return;
        out << "\n" << title << ":\n";
        for (std::size_t i = 0; i < lines.size() && i < maxLines; ++i)
            out << "  " << lines[i] << "\n";
        if (lines.size() > maxLines)
            out << "  ... " << lines.size() - maxLines << " more (--json lists all)\n";
    };
    section("model", diff.headerChanges);
    section("metadata", diff.metadataChanges);
    section("inputs", diff.inputChanges);
    section("outputs", diff.outputChanges);
    std::vector<std::string> changed, removed, added, renamed;
    for (const auto& n : diff.nodes) {
        switch (n.kind) {
            case NodeDiff::Kind::Same:
                break;
            case NodeDiff::Kind::Renamed:
                renamed.push_back(nodeLabel(n.nameA, n.opTypeA) + " -> " + n.nameB);
                break;
            case NodeDiff::Kind::Changed: {
                std::string line = nodeLabel(n.nameA, n.opTypeA);
                if (n.nameB != n.nameA) line += " -> " + nodeLabel(n.nameB, n.opTypeB);
                for (const auto& c : n.changes) line += "\n      " + c;
                changed.push_back(std::move(line));
                break;
            }
            case NodeDiff::Kind::Removed:
                removed.push_back(nodeLabel(n.nameA, n.opTypeA));
                break;
            case NodeDiff::Kind::Added:
                added.push_back(nodeLabel(n.nameB, n.opTypeB));
                break;
        }
    }
    section("changed nodes", changed);
    section("removed nodes", removed);
    section("added nodes", added);
    section("renamed nodes", renamed);
    std::vector<std::string> inits;
    for (const auto& d : diff.initializers) {
        const std::string name =
            d.nameA.empty()
                ? d.nameB
                : (d.nameB.empty() || d.nameB == d.nameA ? d.nameA : d.nameA + " -> " + d.nameB);
        inits.push_back(name + ": " + d.change);
    }
    section("initializers", inits);
    return out.str();
}

}  // namespace onnxlens::engine
