#pragma once
// Where the user was looking in a graph page: the zoom, the node nearest the view's centre and
// its offset from it, the groups open (by path) and the selected node (by name). An edit replaces
// the tab's page with one built from the edited model; the new page takes this place once it is
// drawn, so an edit does not throw the user back to the top of the graph.
#include <QPointF>
#include <memory>
#include <set>
#include <string>

namespace onnxlens::widgets {

class GraphPage;

struct GraphViewPlace {
    bool valid = false;
    double zoom = 1;
    std::string anchorNode;  // nodeIdentity() of the node nearest the view's centre
    QPointF anchorOffset;    // view centre minus that node's centre, in scene units
    std::string selectedNode;
    std::set<std::string> openGroups;
};

// The place shown by `page` now (invalid before its first layout).
GraphViewPlace graphViewPlaceOf(const GraphPage& page);

// Restores `place` on `page` each time the page finishes drawing a graph: opens the groups,
// waits for their layout, then zooms, centres on the anchor node and selects the node. Nodes that
// no longer exist are skipped. Stops after the first complete restore.
void carryGraphViewPlace(GraphPage* page, const GraphViewPlace& place);

}  // namespace onnxlens::widgets
