#include "widgets/graph/GraphViewPlace.h"

#include <QGraphicsItem>
#include <QScrollBar>
#include <limits>

#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphPage.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"

namespace onnxlens::widgets {

namespace {

// A node's identity across an edit (indices change): kind, op type, name and first output.
std::string nodeIdentity(const ViewGraph& view, int index) {
    const ViewNode& node = view.nodes[static_cast<std::size_t>(index)];
    std::string id = std::to_string(static_cast<int>(node.kind)) + '\x1f' + node.opType + '\x1f' +
                     node.name + '\x1f';
    if (!node.outputs.empty() && node.outputs[0] >= 0)
        id += view.tensors[static_cast<std::size_t>(node.outputs[0])].name;
    else if (!node.inputs.empty() && node.inputs[0] >= 0)
        id += view.tensors[static_cast<std::size_t>(node.inputs[0])].name;
    return id;
}

int nodeWithIdentity(const ViewGraph& view, const std::string& identity) {
    if (identity.empty()) return -1;
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n)
        if (nodeIdentity(view, n) == identity) return n;
    return -1;
}

QPointF viewCentre(const GraphView& view) {
    return view.mapToScene(view.viewport()->rect().center());
}

}  // namespace

GraphViewPlace graphViewPlaceOf(const GraphPage& page) {
    GraphViewPlace place;
    if (!page.isDrawn()) return place;
    const GraphScene& scene = *page.scene();
    const ViewGraph& view = scene.view();
    place.valid = true;
    place.zoom = page.view()->zoom();
    const QPointF centre = viewCentre(*page.view());
    double nearest = std::numeric_limits<double>::max();
    for (int n = 0; n < static_cast<int>(view.nodes.size()); ++n) {
        const GraphNodeItem* item = scene.nodeItem(n);
        if (!item) continue;
        const QPointF offset = centre - item->sceneBoundingRect().center();
        const double distance = offset.x() * offset.x() + offset.y() * offset.y();
        if (distance < nearest) {
            nearest = distance;
            place.anchorNode = nodeIdentity(view, n);
            place.anchorOffset = offset;
        }
    }
    if (const int selected = scene.selectedNode(); selected >= 0)
        place.selectedNode = nodeIdentity(view, selected);
    for (int g = 1; g < static_cast<int>(view.groups.size()); ++g)
        if (scene.isExpanded(g))
            place.openGroups.insert(view.groups[static_cast<std::size_t>(g)].path);
    return place;
}

void carryGraphViewPlace(GraphPage* page, const GraphViewPlace& place) {
    if (!place.valid) return;
    struct State {
        GraphViewPlace place;
        bool groupsOpened = false;
        QMetaObject::Connection drawn, applied;
    };
    auto state = std::make_shared<State>();
    state->place = place;
    auto settle = [page, state] {
        GraphScene* scene = page->scene();
        if (page->isLayoutRunning() || scene->needsLayout()) return;
        const ViewGraph& view = scene->view();
        if (!state->groupsOpened) {
            state->groupsOpened = true;
            for (int g = 1; g < static_cast<int>(view.groups.size()); ++g)
                scene->setExpanded(g, state->place.openGroups.count(
                                          view.groups[static_cast<std::size_t>(g)].path) > 0);
            if (scene->needsLayout()) return;  // back here once the groups are laid out
        }
        page->view()->setZoom(state->place.zoom);
        if (const int anchor = nodeWithIdentity(view, state->place.anchorNode); anchor >= 0)
            if (const GraphNodeItem* item = scene->nodeItem(anchor))
                page->view()->centerOn(item->sceneBoundingRect().center() +
                                       state->place.anchorOffset);
        if (const int selected = nodeWithIdentity(view, state->place.selectedNode); selected >= 0)
            scene->selectNode(selected);
        QObject::disconnect(state->drawn);
        QObject::disconnect(state->applied);
    };
    // A page draws its first graph, and again when View options rebuild it: each time, the groups
    // are opened again before the place is taken.
    state->drawn = QObject::connect(page, &GraphPage::drawn, page, [state, settle] {
        state->groupsOpened = false;
        settle();
    });
    state->applied = QObject::connect(page, &GraphPage::layoutApplied, page, [page, state, settle] {
        if (page->isDrawn()) settle();
    });
}

}  // namespace onnxlens::widgets
