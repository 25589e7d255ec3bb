#include "onnxlens/layout/GraphLayout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace onnxlens {
namespace {

using Json = nlohmann::json;

constexpr double kPointsPerInch = 72.0;

std::string formatNumber(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4f", value);
    return buffer;
}

// dot interprets backslash escapes (\N, \G, \l) in labels; our labels are literal text.
std::string escapeLabel(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '\\') out += '\\';
        out += c;
    }
    return out;
}

struct GraphDeleter {
    GVC_t* context;
    void operator()(Agraph_t* graph) const {
        gvFreeLayout(context, graph);
        agclose(graph);
    }
};

// One Graphviz context for the life of the process, never freed. Graphviz's pango text plugin
// remembers the last font it measured as a pointer to the name kept in the context's font
// cache: after gvFreeContext the next context's first label compared against freed memory
// (ASan: heap-use-after-free in strcmp under textspan_size, on the second in-process layout).
// Callers hold graphvizMutex.
GVC_t* processGraphvizContext() {
    static GVC_t* const context = gvContext();
    return context;
}

// dot's costs grow with crossings minimisation (mclimit), network simplex (nslimit) and spline
// routing: small graphs get the full treatment, large ones bounded passes, so that the time
// limit is never what ends a normal layout.
struct DotOptions {
    const char* ranksep = "0.3";
    const char* splines = "spline";
    const char* mclimit = nullptr;  // nullptr: dot's default
    const char* nslimit = nullptr;
    const char* searchsize = nullptr;
};

DotOptions dotOptionsFor(const LayoutGraphSpec& spec, const LayoutRequest& request) {
    const std::size_t size = spec.nodes.size() + spec.edges.size();
    DotOptions options;
    if (static_cast<int>(spec.nodes.size()) > request.fastModeNodeCount) {
        options.ranksep = "0.4";  // no label room of their own: a little more between ranks
        options.mclimit = "0.2";
        options.nslimit = "2";
        options.searchsize = "10";
        options.splines = size > 4000 ? "polyline" : "spline";
    } else if (size > 400) {
        options.mclimit = "0.5";
        options.nslimit = "5";
        options.searchsize = "30";
    }
    return options;
}

Result<GraphPlacement> layoutOne(GVC_t* context, const LayoutGraphSpec& spec,
                                 const std::map<std::string, const GraphPlacement*>& earlier,
                                 const LayoutRequest& request) {
    const bool fast = static_cast<int>(spec.nodes.size()) > request.fastModeNodeCount;
    const DotOptions options = dotOptionsFor(spec, request);
    char graphName[] = "g";
    Agraph_t* raw = agopen(graphName, Agdirected, nullptr);
    std::unique_ptr<Agraph_t, GraphDeleter> graph(raw, GraphDeleter{context});
    agattr(raw, AGRAPH, const_cast<char*>("rankdir"), const_cast<char*>("TB"));
    agattr(raw, AGRAPH, const_cast<char*>("nodesep"), const_cast<char*>("0.25"));
    agattr(raw, AGRAPH, const_cast<char*>("ranksep"), const_cast<char*>(options.ranksep));
    agattr(raw, AGRAPH, const_cast<char*>("splines"), const_cast<char*>(options.splines));
    if (options.mclimit)
        agattr(raw, AGRAPH, const_cast<char*>("mclimit"), const_cast<char*>(options.mclimit));
    if (options.nslimit) {
        agattr(raw, AGRAPH, const_cast<char*>("nslimit"), const_cast<char*>(options.nslimit));
        agattr(raw, AGRAPH, const_cast<char*>("nslimit1"), const_cast<char*>(options.nslimit));
    }
    if (options.searchsize)
        agattr(raw, AGRAPH, const_cast<char*>("searchsize"), const_cast<char*>(options.searchsize));
    agattr(raw, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
    agattr(raw, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
    agattr(raw, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));
    agattr(raw, AGNODE, const_cast<char*>("width"), const_cast<char*>("1"));
    agattr(raw, AGNODE, const_cast<char*>("height"), const_cast<char*>("0.5"));
    agattr(raw, AGEDGE, const_cast<char*>("label"), const_cast<char*>(""));
    agattr(raw, AGEDGE, const_cast<char*>("fontsize"),
           const_cast<char*>(formatNumber(request.labelFontSize).c_str()));
    agattr(raw, AGEDGE, const_cast<char*>("arrowsize"), const_cast<char*>("0.6"));

    std::map<std::string, Agnode_t*> nodesById;
    std::vector<Agnode_t*> nodes;
    std::vector<Agnode_t*> sources, sinks;
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
        const auto& nodeSpec = spec.nodes[i];
        double width = nodeSpec.width, height = nodeSpec.height;
        if (!nodeSpec.nestedGraph.empty()) {
            auto it = earlier.find(nodeSpec.nestedGraph);
            if (it == earlier.end())
                return makeError("layout of graph '" + spec.id + "'",
                                 "nested graph '" + nodeSpec.nestedGraph + "' not laid out before");
            width += it->second->width;
            height += it->second->height;
        }
        if (!(width > 0) || !(height > 0) || width > 1e7 || height > 1e7)
            return makeError("layout of graph '" + spec.id + "'",
                             "node '" + nodeSpec.id + "' has an invalid size");
        std::string name = "n" + std::to_string(i);
        Agnode_t* node = agnode(raw, name.data(), 1);
        agset(node, const_cast<char*>("width"),
              const_cast<char*>(formatNumber(width / kPointsPerInch).c_str()));
        agset(node, const_cast<char*>("height"),
              const_cast<char*>(formatNumber(height / kPointsPerInch).c_str()));
        if (!nodesById.emplace(nodeSpec.id, node).second)
            return makeError("layout of graph '" + spec.id + "'",
                             "duplicate node id '" + nodeSpec.id + "'");
        nodes.push_back(node);
        if (nodeSpec.rank == LayoutNodeSpec::Rank::Source) sources.push_back(node);
        if (nodeSpec.rank == LayoutNodeSpec::Rank::Sink) sinks.push_back(node);
    }
    auto rankGroup = [&](const std::vector<Agnode_t*>& members, const char* name,
                         const char* rank) {
        if (members.empty()) return;
        Agraph_t* sub = agsubg(raw, const_cast<char*>(name), 1);
        agsafeset(sub, const_cast<char*>("rank"), const_cast<char*>(rank), const_cast<char*>(""));
        for (Agnode_t* n : members) agsubnode(sub, n, 1);
    };
    rankGroup(sources, "sources", "source");
    rankGroup(sinks, "sinks", "sink");

    std::vector<Agedge_t*> edges;
    for (std::size_t i = 0; i < spec.edges.size(); ++i) {
        const auto& edgeSpec = spec.edges[i];
        auto tail = nodesById.find(edgeSpec.tail);
        auto head = nodesById.find(edgeSpec.head);
        if (tail == nodesById.end() || head == nodesById.end())
            return makeError(
                "layout of graph '" + spec.id + "'",
                "edge " + edgeSpec.tail + " -> " + edgeSpec.head + " names an unknown node");
        std::string name = "e" + std::to_string(i);
        Agedge_t* edge = agedge(raw, tail->second, head->second, name.data(), 1);
        if (!edgeSpec.label.empty() && !fast)
            agset(edge, const_cast<char*>("label"),
                  const_cast<char*>(escapeLabel(edgeSpec.label).c_str()));
        edges.push_back(edge);
    }

    if (gvLayout(context, raw, "dot") != 0)
        return makeError("layout of graph '" + spec.id + "'", "Graphviz dot failed");

    const boxf box = GD_bb(raw);
    GraphPlacement placement;
    placement.id = spec.id;
    placement.width = box.UR.x - box.LL.x;
    placement.height = box.UR.y - box.LL.y;
    auto convert = [&](pointf p) { return LayoutPoint{p.x - box.LL.x, box.UR.y - p.y}; };
    for (Agnode_t* node : nodes) {
        LayoutPoint centre = convert(ND_coord(node));
        placement.nodes.push_back({centre.x, centre.y, ND_width(node) * kPointsPerInch,
                                   ND_height(node) * kPointsPerInch});
    }
    for (Agedge_t* edge : edges) {
        EdgeRoute route;
        const splines* spl = ED_spl(edge);
        if (spl && spl->size > 0) {
            // A spline may be split in several beziers only for compound edges; we draw the first.
            const bezier& bz = spl->list[0];
            for (int k = 0; k < bz.size; ++k) route.spline.push_back(convert(bz.list[k]));
            if (bz.eflag) {
                route.hasArrow = true;
                route.arrowTip = convert(bz.ep);
            }
        }
        if (ED_label(edge) && ED_label(edge)->set) {
            route.hasLabel = true;
            route.labelCentre = convert(ED_label(edge)->pos);
        }
        placement.edges.push_back(std::move(route));
    }
    return placement;
}

Json pointToJson(const LayoutPoint& p) { return Json::array({p.x, p.y}); }
LayoutPoint pointFromJson(const Json& j) { return {j.at(0).get<double>(), j.at(1).get<double>()}; }

const char* rankName(LayoutNodeSpec::Rank rank) {
    switch (rank) {
        case LayoutNodeSpec::Rank::Source:
            return "source";
        case LayoutNodeSpec::Rank::Sink:
            return "sink";
        default:
            return "any";
    }
}

}  // namespace

Result<LayoutResult> computeLayout(const LayoutRequest& request) {
    // One Graphviz context at a time: the library keeps global state.
    static std::mutex graphvizMutex;
    std::lock_guard lock(graphvizMutex);
    GVC_t* context = processGraphvizContext();
    if (!context) return makeError("layout", "cannot create a Graphviz context");
    agseterr(AGMAX);  // dot's warnings are not ours to print
    LayoutResult result;
    result.graphs.reserve(request.graphs.size());
    std::map<std::string, const GraphPlacement*> done;
    for (const auto& spec : request.graphs) {
        auto placement = layoutOne(context, spec, done, request);
        if (!placement) return placement.error();
        result.graphs.push_back(std::move(placement.value()));
        done[spec.id] = &result.graphs.back();  // stable: reserved above
    }
    return result;
}

std::string serializeLayoutRequest(const LayoutRequest& request) {
    Json graphs = Json::array();
    for (const auto& g : request.graphs) {
        Json nodes = Json::array(), edges = Json::array();
        for (const auto& n : g.nodes)
            nodes.push_back({{"id", n.id},
                             {"w", n.width},
                             {"h", n.height},
                             {"nested", n.nestedGraph},
                             {"rank", rankName(n.rank)}});
        for (const auto& e : g.edges)
            edges.push_back({{"tail", e.tail}, {"head", e.head}, {"label", e.label}});
        graphs.push_back({{"id", g.id}, {"nodes", nodes}, {"edges", edges}});
    }
    return Json{{"graphs", graphs},
                {"labelFontSize", request.labelFontSize},
                {"fastModeNodeCount", request.fastModeNodeCount}}
        .dump();
}

Result<LayoutRequest> parseLayoutRequest(std::string_view text) {
    try {
        Json doc = Json::parse(text);
        LayoutRequest request;
        request.labelFontSize = doc.value("labelFontSize", 9.0);
        if (doc.contains("fastModeNodeCount")) {
            // nlohmann converts any number to int with a plain cast, undefined behaviour for
            // 1e30; the worker's input comes from outside, so the range is checked first.
            const Json& count = doc.at("fastModeNodeCount");
            if (!count.is_number_integer() || count.get<std::int64_t>() < 0 ||
                count.get<std::int64_t>() > std::numeric_limits<int>::max())
                throw std::invalid_argument("fastModeNodeCount is not a non-negative integer");
            request.fastModeNodeCount = count.get<int>();
        }
        for (const auto& g : doc.at("graphs")) {
            LayoutGraphSpec spec;
            spec.id = g.at("id").get<std::string>();
            for (const auto& n : g.at("nodes")) {
                LayoutNodeSpec node;
                node.id = n.at("id").get<std::string>();
                node.width = n.at("w").get<double>();
                node.height = n.at("h").get<double>();
                node.nestedGraph = n.value("nested", "");
                std::string rank = n.value("rank", "any");
                node.rank = rank == "source" ? LayoutNodeSpec::Rank::Source
                            : rank == "sink" ? LayoutNodeSpec::Rank::Sink
                                             : LayoutNodeSpec::Rank::Any;
                spec.nodes.push_back(std::move(node));
            }
            for (const auto& e : g.at("edges"))
                spec.edges.push_back({e.at("tail").get<std::string>(),
                                      e.at("head").get<std::string>(), e.value("label", "")});
            request.graphs.push_back(std::move(spec));
        }
        return request;
    } catch (const std::exception& e) {
        return makeError("layout request", e.what());
    }
}

std::string serializeLayoutResult(const LayoutResult& result) {
    Json graphs = Json::array();
    for (const auto& g : result.graphs) {
        Json nodes = Json::array(), edges = Json::array();
        for (const auto& n : g.nodes) nodes.push_back(Json::array({n.x, n.y, n.width, n.height}));
        for (const auto& e : g.edges) {
            Json spline = Json::array();
            for (const auto& p : e.spline) spline.push_back(pointToJson(p));
            Json edge = {{"spline", spline}};
            if (e.hasArrow) edge["arrow"] = pointToJson(e.arrowTip);
            if (e.hasLabel) edge["label"] = pointToJson(e.labelCentre);
            edges.push_back(std::move(edge));
        }
        graphs.push_back(
            {{"id", g.id}, {"w", g.width}, {"h", g.height}, {"nodes", nodes}, {"edges", edges}});
    }
    return Json{{"graphs", graphs}}.dump();
}

Result<LayoutResult> parseLayoutResult(std::string_view text) {
    try {
        Json doc = Json::parse(text);
        LayoutResult result;
        for (const auto& g : doc.at("graphs")) {
            GraphPlacement placement;
            placement.id = g.at("id").get<std::string>();
            placement.width = g.at("w").get<double>();
            placement.height = g.at("h").get<double>();
            for (const auto& n : g.at("nodes"))
                placement.nodes.push_back({n.at(0).get<double>(), n.at(1).get<double>(),
                                           n.at(2).get<double>(), n.at(3).get<double>()});
            for (const auto& e : g.at("edges")) {
                EdgeRoute route;
                for (const auto& p : e.at("spline")) route.spline.push_back(pointFromJson(p));
                if (e.contains("arrow")) {
                    route.hasArrow = true;
                    route.arrowTip = pointFromJson(e.at("arrow"));
                }
                if (e.contains("label")) {
                    route.hasLabel = true;
                    route.labelCentre = pointFromJson(e.at("label"));
                }
                placement.edges.push_back(std::move(route));
            }
            result.graphs.push_back(std::move(placement));
        }
        return result;
    } catch (const std::exception& e) {
        return makeError("layout result", e.what());
    }
}

}  // namespace onnxlens
