#pragma once
// Graph layout by Graphviz `dot`, as plain structs: node sizes in, positions and spline control
// points out. Graphviz is not thread-safe and can crash or run long on large graphs, so the GUI
// calls this in the onnxlens-layout worker process through the serialised request/result below;
// the CLI's `render` calls it in-process.
//
// Coordinates are in points (1/72 inch, one Qt pixel at 100%), y growing downwards, with the
// origin at the top-left corner of each graph's bounding box.
#include <string>
#include <string_view>
#include <vector>

#include "onnxlens/model/Result.h"

namespace onnxlens {

struct LayoutPoint {
    double x = 0;
    double y = 0;
};

struct LayoutNodeSpec {
    std::string id;
    double width = 0;  // points
    double height = 0;
    // When set, the node stands for an earlier graph of the same request (an expanded group): its
    // size is that graph's size plus `width`/`height` as padding.
    std::string nestedGraph;
    enum class Rank { Any, Source, Sink } rank = Rank::Any;  // ports: first or last rank
};

struct LayoutEdgeSpec {
    std::string tail;  // node ids
    std::string head;
    std::string label;  // text whose room dot reserves (empty: none)
};

struct LayoutGraphSpec {
    std::string id;
    std::vector<LayoutNodeSpec> nodes;
    std::vector<LayoutEdgeSpec> edges;
};

// Graphs are laid out in order, so nested graphs come before the graphs that hold them.
struct LayoutRequest {
    std::vector<LayoutGraphSpec> graphs;
    double labelFontSize = 9;  // points; edge label room is estimated by Graphviz at this size
    // Above this many nodes in one graph, dot's most expensive passes are capped (mclimit,
    // nslimit) and edge labels get no room of their own, trading quality for time.
    int fastModeNodeCount = 600;
};

struct NodePlacement {
    double x = 0;  // centre
    double y = 0;
    double width = 0;
    double height = 0;
};

struct EdgeRoute {
    // Cubic Bezier pieces: p0 c1 c2 p1 c1 c2 p2 ... (1 + 3k points).
    std::vector<LayoutPoint> spline;
    bool hasArrow = false;
    LayoutPoint arrowTip;  // where the arrow head points, beyond the spline's end
    bool hasLabel = false;
    LayoutPoint labelCentre;
};

struct GraphPlacement {
    std::string id;
    double width = 0;
    double height = 0;
    std::vector<NodePlacement> nodes;  // same order as the spec's nodes
    std::vector<EdgeRoute> edges;      // same order as the spec's edges
};

struct LayoutResult {
    std::vector<GraphPlacement> graphs;  // same order as the request's graphs
};

// Lays out every graph of the request with dot. Errors name the graph.
Result<LayoutResult> computeLayout(const LayoutRequest& request);

// The worker protocol: one JSON document each way.
std::string serializeLayoutRequest(const LayoutRequest& request);
Result<LayoutRequest> parseLayoutRequest(std::string_view text);
std::string serializeLayoutResult(const LayoutResult& result);
Result<LayoutResult> parseLayoutResult(std::string_view text);

}  // namespace onnxlens
