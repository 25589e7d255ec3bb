#include "widgets/graph/GraphScene.h"

#include <QFontMetricsF>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>

#include "onnxlens/model/NodeNames.h"
#include "widgets/graph/GraphEdgeItem.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphStyle.h"
#include "widgets/graph/HeatLegend.h"
#include "widgets/graph/QuantizationLegend.h"

namespace onnxlens::widgets {

GraphScene::GraphScene(std::shared_ptr<const ViewGraph> view, QObject* parent)
    : QGraphicsScene(parent), view_(std::move(view)), expanded_(view_->groups.size(), 1) {
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    setBackgroundBrush(Qt::white);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::onSelectionChanged);
}

GraphScene::~GraphScene() {
    // Deleting selected items emits selectionChanged: nobody may hear it from a half-destroyed
    // scene.
    blockSignals(true);
    clear();
}

void GraphScene::expandAll() {
    std::fill(expanded_.begin(), expanded_.end(), 1);
    placements_.clear();
    pendingResize_.clear();
    ++generation_;
}

void GraphScene::expandForOverview(int flatLimit, int maxVisibleUnits) {
    expandAll();
    if (view_->operatorCount <= flatLimit) return;
    std::fill(expanded_.begin(), expanded_.end(), 0);
    expanded_[0] = 1;
    // Breadth-first from the top.
    int visible = static_cast<int>(view_->groups[0].children.size());
    std::vector<int> order(view_->groups.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return view_->groups[a].depth < view_->groups[b].depth; });
    for (int g : order) {
        if (g == 0 || !expanded_[view_->groups[g].parent]) continue;
        int more = static_cast<int>(view_->groups[g].children.size()) - 1;
        if (visible + more > maxVisibleUnits) continue;
        expanded_[g] = 1;
        visible += more;
    }
}

bool GraphScene::isVisible(int group) const {
    for (int g = view_->groups[group].parent; g >= 0; g = view_->groups[g].parent)
        if (!expanded_[g]) return false;
    return true;
}

void GraphScene::setExpanded(int group, bool expanded) {
    if (group <= 0 || group >= static_cast<int>(expanded_.size())) return;
    if (static_cast<bool>(expanded_[group]) == expanded) return;
    expanded_[group] = expanded;
    // A small group opens all the way (a transformer layer shows its operators at once); a large
    // one opens one level, so that its inside stays quick to lay out and to read.
    if (expanded && view_->groups[group].nodeCount <= kOpenFullyNodeCount)
        for (int g = 0; g < static_cast<int>(expanded_.size()); ++g)
            if (view_->isAncestor(group, g)) expanded_[g] = 1;
    // The rest of the graph keeps its place: only this group's inside is laid out (or taken
    // from the cache), then its box grows or shrinks in its parent's placement.
    pendingResize_.push_back(group);
    ++generation_;
    if (needsLayout()) {
        emit layoutNeeded();
        return;
    }
    resizePending();
    rebuildItems();
}

void GraphScene::resizePending() {
    std::vector<int> groups = std::move(pendingResize_);
    pendingResize_.clear();
    std::stable_sort(groups.begin(), groups.end(),
                     [&](int a, int b) { return view_->groups[a].depth > view_->groups[b].depth; });
    for (int g : groups) {
        syncChildSizes(g);
        resizeInParents(g);
    }
}

void GraphScene::syncChildSizes(int group) {
    // A cached inside may predate a change of its child groups made while it was hidden.
    auto placement = placements_.find(group);
    if (placement == placements_.end()) return;
    const auto& units = view_->levels[group].units;
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (units[u].kind != ViewUnitRef::Kind::Group) continue;
        if (expanded_[units[u].index] && !placements_.count(units[u].index)) continue;
        resizeUnit(placement->second, u, unitSize(units[u]));
    }
}

void GraphScene::resizeInParents(int group) {
    for (int g = group; g > 0; g = view_->groups[g].parent) {
        const int parent = view_->groups[g].parent;
        auto placement = placements_.find(parent);
        if (placement == placements_.end() || !isVisible(g)) return;
        const auto& units = view_->levels[parent].units;
        const auto unit =
            std::find(units.begin(), units.end(), ViewUnitRef{ViewUnitRef::Kind::Group, g});
        if (unit == units.end()) return;
        const QSizeF size = unitSize(*unit);
        if (!resizeUnit(placement->second, static_cast<std::size_t>(unit - units.begin()), size))
            return;  // same size: the ancestors are unchanged too
    }
}

bool GraphScene::resizeUnit(GraphPlacement& placement, std::size_t unit, QSizeF size) {
    NodePlacement& box = placement.nodes[unit];
    const double dw = size.width() - box.width, dh = size.height() - box.height;
    if (std::abs(dw) < 0.01 && std::abs(dh) < 0.01) return false;
    const double top = box.y - box.height / 2, left = box.x - box.width / 2;
    const double centreY = box.y, centreX = box.x, oldHalf = box.height / 2;
    // The box keeps its top-left corner. Everything below its centre moves down by the growth
    // (the layout flows top to bottom); boxes to its right on its ranks move right by the
    // widening; nothing moves up or left, so what the person was looking at stays put.
    for (std::size_t i = 0; i < placement.nodes.size(); ++i) {
        if (i == unit) continue;
        NodePlacement& other = placement.nodes[i];
        const bool beside = std::abs(other.y - centreY) < oldHalf + other.height / 2;
        if (other.y > centreY) other.y += dh;
        if (beside && other.x > centreX) other.x += dw;
    }
    const double right = left + box.width;
    auto move = [&](LayoutPoint& p) {
        if (std::abs(p.y - centreY) < oldHalf && p.x > right) p.x += dw;  // routed past its side
        if (p.y > centreY) p.y += dh;
    };
    for (auto& edge : placement.edges) {
        for (auto& p : edge.spline) move(p);
        move(edge.arrowTip);
        move(edge.labelCentre);
    }
    box.width = size.width();
    box.height = size.height();
    box.y = top + box.height / 2;
    box.x = left + box.width / 2;
    // Back into the positive quadrant, and the graph's extent from what it now holds.
    double minX = 0, maxX = 0, maxY = 0;
    for (const auto& n : placement.nodes) {
        minX = std::min(minX, n.x - n.width / 2);
        maxX = std::max(maxX, n.x + n.width / 2);
        maxY = std::max(maxY, n.y + n.height / 2);
    }
    for (const auto& edge : placement.edges)
        for (const auto& p : edge.spline) {
            minX = std::min(minX, p.x);
            maxX = std::max(maxX, p.x);
            maxY = std::max(maxY, p.y);
        }
    if (minX < 0) {
        for (auto& n : placement.nodes) n.x -= minX;
        for (auto& edge : placement.edges) {
            for (auto& p : edge.spline) p.x -= minX;
            edge.arrowTip.x -= minX;
            edge.labelCentre.x -= minX;
        }
        maxX -= minX;
    }
    placement.width = std::max(maxX, 1.0);
    placement.height = std::max(maxY, 1.0);
    return true;
}

void GraphScene::toggleGroup(int group) {
    // Called from an item's mouse handler: rebuilding the items must wait until it returns.
    QTimer::singleShot(0, this, [this, group] {
        if (group <= 0 || group >= static_cast<int>(expanded_.size())) return;
        const bool expanding = !expanded_[group];
        // The box the user opened is brought into view once it has its new size.
        if (expanding) pendingGroupReveal_ = group;
        setExpanded(group, expanding);
    });
}

bool GraphScene::needsLayout() const {
    for (std::size_t g = 0; g < expanded_.size(); ++g)
        if (expanded_[g] && !placements_.count(static_cast<int>(g)) &&
            isVisible(static_cast<int>(g)))
            return true;
    return false;
}

QSizeF GraphScene::unitSize(const ViewUnitRef& unit) const {
    const auto& style = GraphStyle::standard();
    switch (unit.kind) {
        case ViewUnitRef::Kind::Node:
            return style.nodeSize(view_->nodes[unit.index]);
        case ViewUnitRef::Kind::Group: {
            if (!expanded_[unit.index]) return style.collapsedGroupSize(view_->groups[unit.index]);
            QSizeF pad = style.expandedGroupPadding();
            auto it = placements_.find(unit.index);
            if (it == placements_.end()) return pad;  // nested in the same request
            return {it->second.width + pad.width(), it->second.height + pad.height()};
        }
        default:
            return {style.portSize, style.portSize};
    }
}

LayoutRequest GraphScene::layoutRequest(std::vector<int>& groups) const {
    groups.clear();
    for (std::size_t g = 0; g < expanded_.size(); ++g)
        if (expanded_[g] && !placements_.count(static_cast<int>(g)) &&
            isVisible(static_cast<int>(g)))
            groups.push_back(static_cast<int>(g));
    std::stable_sort(groups.begin(), groups.end(),
                     [&](int a, int b) { return view_->groups[a].depth > view_->groups[b].depth; });
    std::vector<char> inRequest(expanded_.size(), 0);
    for (int g : groups) inRequest[g] = 1;
    LayoutRequest request;
    // dot reserves room for a label from its own Times metrics at `fontsize` points, one point a
    // scene unit; the label is drawn in the style's sans font on the screen's pixels, wider (a
    // third at 96 dpi, more for the letters): labels of neighbouring edges overlapped. The size
    // given is the one at which dot's estimate (about 0.45 em a character) covers the drawn text.
    const QString sample = QStringLiteral("batch_sizexsequence_lengthx768");
    const double drawn = GraphStyle::standard().labelMetrics.horizontalAdvance(sample);
    request.labelFontSize = std::max(GraphStyle::standard().labelFont.pointSizeF(),
                                     1.1 * drawn / (0.45 * static_cast<double>(sample.size())));
    for (int g : groups) {
        const auto& level = view_->levels[g];
        LayoutGraphSpec spec;
        spec.id = "g" + std::to_string(g);
        for (const auto& unit : level.units) {
            LayoutNodeSpec node;
            node.id = unit.id();
            QSizeF size = unitSize(unit);
            node.width = size.width();
            node.height = size.height();
            if (unit.kind == ViewUnitRef::Kind::Group && expanded_[unit.index] &&
                inRequest[unit.index])
                node.nestedGraph = "g" + std::to_string(unit.index);
            // Graph inputs on the first rank: the view opens on them.
            if (unit.kind == ViewUnitRef::Kind::InPort ||
                (unit.kind == ViewUnitRef::Kind::Node &&
                 view_->nodes[unit.index].kind == ViewNode::Kind::Input))
                node.rank = LayoutNodeSpec::Rank::Source;
            if (unit.kind == ViewUnitRef::Kind::OutPort) node.rank = LayoutNodeSpec::Rank::Sink;
            spec.nodes.push_back(std::move(node));
        }
        for (const auto& edge : level.edges)
            spec.edges.push_back(
                {level.units[edge.tail].id(), level.units[edge.head].id(),
                 edge.labelled ? view_->tensors[edge.tensor].type.shapeText() : std::string()});
        request.graphs.push_back(std::move(spec));
    }
    return request;
}

int GraphScene::unitCount(const std::vector<int>& groups) const {
    int count = 0;
    for (int g : groups) count += static_cast<int>(view_->levels[g].units.size());
    return count;
}

bool GraphScene::applyLayout(const std::vector<int>& groups, const LayoutResult& result,
                             std::uint64_t generation) {
    if (generation != generation_ || result.graphs.size() != groups.size()) return false;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const auto& level = view_->levels[groups[i]];
        const auto& placement = result.graphs[i];
        if (placement.nodes.size() != level.units.size() ||
            placement.edges.size() != level.edges.size())
            return false;
    }
    for (std::size_t i = 0; i < groups.size(); ++i) placements_[groups[i]] = result.graphs[i];
    resizePending();
    rebuildItems();
    return true;
}

void GraphScene::rebuildItems() {
    const int selected = selectedNode();
    QSignalBlocker blocker(this);
    clear();
    nodeItems_.assign(view_->nodes.size(), nullptr);
    groupItems_.assign(view_->groups.size(), nullptr);
    edgeItems_.clear();
    ports_.clear();
    if (placements_.count(0)) placeGroup(0, QPointF(0, 0));
    setSceneRect(contentRect());
    blocker.unblock();
    if (heatShown_) refreshHeat();
    if (sqnrShown_) refreshSqnr();
    if (marksShown_) refreshMarks();
    emit rebuilt();  // views adjust to the new extent before anything is centred
    if (pendingReveal_ >= 0 && nodeItems_[pendingReveal_]) {
        int node = pendingReveal_;
        pendingReveal_ = -1;
        selectNode(node);
        emit nodeRevealed(node);
    } else if (selected >= 0 && nodeItems_[selected]) {
        selectNode(selected);
    }
    // An expanded group's box is final once its inside is laid out.
    if (const int group = pendingGroupReveal_;
        group >= 0 && placements_.count(group) && groupItems_[group]) {
        pendingGroupReveal_ = -1;
        emit groupExpanded(group);
    }
}

void GraphScene::placeGroup(int group, QPointF origin) {
    const auto& style = GraphStyle::standard();
    const auto& level = view_->levels[group];
    const auto& placement = placements_.at(group);
    auto toggle = [this](int g) { toggleGroup(g); };
    std::vector<QRectF> rects(level.units.size());
    for (std::size_t u = 0; u < level.units.size(); ++u) {
        const auto& unit = level.units[u];
        const auto& p = placement.nodes[u];
        QRectF rect(origin.x() + p.x - p.width / 2, origin.y() + p.y - p.height / 2, p.width,
                    p.height);
        rects[u] = rect;
        switch (unit.kind) {
            case ViewUnitRef::Kind::Node: {
                auto* item = new GraphNodeItem(*view_, unit.index, rect);
                item->setStubHandler([this](int producer) { revealNode(producer); });
                addItem(item);
                nodeItems_[unit.index] = item;
                break;
            }
            case ViewUnitRef::Kind::Group: {
                bool open = expanded_[unit.index] && placements_.count(unit.index);
                auto* item = new GraphGroupItem(*view_, unit.index, rect, open, toggle);
                if (static_cast<std::size_t>(unit.index) < groupSummaries_.size())
                    item->setSummary(groupSummaries_[static_cast<std::size_t>(unit.index)]);
                addItem(item);
                groupItems_[unit.index] = item;
                if (open)
                    placeGroup(unit.index,
                               rect.topLeft() + QPointF(style.groupMargin,
                                                        style.groupHeader + style.groupMargin));
                break;
            }
            default:
                ports_[{group, static_cast<int>(unit.kind), unit.index}] = rect.center();
                break;
        }
    }
    const QFontMetricsF& labelMetrics = style.labelMetrics;
    for (std::size_t e = 0; e < level.edges.size(); ++e) {
        const auto& edge = level.edges[e];
        const auto& route = placement.edges[e];
        if (route.spline.empty()) continue;
        const auto& tail = level.units[edge.tail];
        const auto& head = level.units[edge.head];
        auto at = [&](const LayoutPoint& p) { return origin + QPointF(p.x, p.y); };
        QPainterPath path;
        // A tensor leaving an expanded group starts at that group's out-port.
        auto outPort =
            ports_.find({tail.index, static_cast<int>(ViewUnitRef::Kind::OutPort), edge.tensor});
        bool fromPort = tail.kind == ViewUnitRef::Kind::InPort;
        if (tail.kind == ViewUnitRef::Kind::Group && outPort != ports_.end()) {
            path.moveTo(outPort->second);
            path.lineTo(at(route.spline[0]));
            fromPort = true;
        } else {
            path.moveTo(at(route.spline[0]));
        }
        for (std::size_t k = 1; k + 2 < route.spline.size(); k += 3)
            path.cubicTo(at(route.spline[k]), at(route.spline[k + 1]), at(route.spline[k + 2]));
        bool hasArrow = route.hasArrow;
        QPointF tip = hasArrow ? at(route.arrowTip) : path.currentPosition();
        auto inPort =
            ports_.find({head.index, static_cast<int>(ViewUnitRef::Kind::InPort), edge.tensor});
        if (head.kind == ViewUnitRef::Kind::Group && inPort != ports_.end()) {
            path.lineTo(tip);  // through the group's border to its in-port
            tip = inPort->second;
            hasArrow = true;
        }
        if (head.kind == ViewUnitRef::Kind::OutPort) hasArrow = false;
        QPointF labelCentre;
        if (edge.labelled) {
            if (route.hasLabel) {
                labelCentre = at(route.labelCentre);
            } else {  // dot gave the label no room (fast mode): beside the middle of the curve
                QString text = QString::fromStdString(view_->tensors[edge.tensor].type.shapeText());
                labelCentre = path.pointAtPercent(0.5) +
                              QPointF(labelMetrics.horizontalAdvance(text) / 2 + 4, 0);
            }
        }
        auto* item = new GraphEdgeItem(*view_, edge.tensor, path, hasArrow, tip, edge.labelled,
                                       labelCentre, fromPort);
        addItem(item);
        edgeItems_.push_back(item);
    }
}

void GraphScene::revealNode(int node) {
    if (node < 0 || node >= static_cast<int>(view_->nodes.size())) return;
    // The node is what the view goes to: a group expanded just before must not pull the view to
    // its own box once its layout lands after the node's.
    pendingGroupReveal_ = -1;
    bool changed = false;
    for (int g : view_->groupChain(view_->nodes[node].group)) {
        if (g == 0 || expanded_[g]) continue;
        expanded_[g] = 1;
        pendingResize_.push_back(g);
        changed = true;
    }
    if (!changed && nodeItems_.size() > static_cast<std::size_t>(node) && nodeItems_[node]) {
        selectNode(node);
        emit nodeRevealed(node);
        return;
    }
    pendingReveal_ = node;
    ++generation_;
    if (needsLayout()) {
        emit layoutNeeded();
        return;
    }
    resizePending();
    rebuildItems();
}

void GraphScene::selectNode(int node) {
    clearSelection();
    if (node >= 0 && node < static_cast<int>(nodeItems_.size()) && nodeItems_[node])
        nodeItems_[node]->setSelected(true);
}

GraphNodeItem* GraphScene::nodeItem(int node) const {
    return node >= 0 && node < static_cast<int>(nodeItems_.size()) ? nodeItems_[node] : nullptr;
}

GraphGroupItem* GraphScene::groupItem(int group) const {
    return group >= 0 && group < static_cast<int>(groupItems_.size()) ? groupItems_[group]
                                                                      : nullptr;
}

int GraphScene::selectedNode() const {
    for (auto* item : selectedItems())
        if (item->type() == GraphNodeItem::Type)
            return static_cast<GraphNodeItem*>(item)->nodeIndex();
    return -1;
}

QRectF GraphScene::contentRect() const {
    auto it = placements_.find(0);
    if (it == placements_.end()) return QRectF(0, 0, 1, 1);
    return QRectF(-20, -20, it->second.width + 40, it->second.height + 40);
}

QRectF GraphScene::inputsRect() const {
    QRectF rect;
    for (std::size_t n = 0; n < nodeItems_.size(); ++n)
        if (nodeItems_[n] && view_->nodes[n].kind == ViewNode::Kind::Input &&
            view_->nodes[n].group == 0)
            rect = rect.isValid() ? rect.united(nodeItems_[n]->sceneBoundingRect())
                                  : nodeItems_[n]->sceneBoundingRect();
    return rect;
}

void GraphScene::setNodeHeat(const NodeHeatMap& heat, HeatMeasure measure) {
    if (marksShown_) clearNodeMarks();
    heatShown_ = true;
    heatMeasure_ = measure;
    nodeHeat_.assign(view_->nodes.size(), std::nullopt);
    groupHeat_.assign(view_->groups.size(), NodeHeat{});
    for (std::size_t n = 0; n < view_->nodes.size(); ++n) {
        const auto& node = view_->nodes[n];
        if (node.kind != ViewNode::Kind::Operator || !node.proto) continue;
        auto it = heat.find(profileNameOf(*node.proto));
        if (it == heat.end()) continue;
        nodeHeat_[n] = it->second;
        for (int g : view_->groupChain(node.group)) {
            groupHeat_[g].share += it->second.share;
            groupHeat_[g].amount += it->second.amount;
        }
    }
    refreshHeat();
}

void GraphScene::clearHeat() {
    heatShown_ = false;
    nodeHeat_.clear();
    groupHeat_.clear();
    maxHeatShare_ = 0;
    maxHeatAmount_ = 0;
    heatMeasure_ = HeatMeasure::RunTime;
    for (auto* item : nodeItems_)
        if (item) item->clearHeat();
    for (auto* item : groupItems_)
        if (item) item->clearHeat();
    emit heatScaleChanged();
}

std::optional<NodeHeat> GraphScene::heatOfNode(int node) const {
    if (node < 0 || node >= static_cast<int>(nodeHeat_.size())) return std::nullopt;
    return nodeHeat_[node];
}

NodeHeat GraphScene::heatOfGroup(int group) const {
    if (group < 0 || group >= static_cast<int>(groupHeat_.size())) return {};
    return groupHeat_[group];
}

int GraphScene::heatedNodeCount() const {
    return static_cast<int>(std::count_if(nodeHeat_.begin(), nodeHeat_.end(),
                                          [](const auto& h) { return h && !h->unknown; }));
}

int GraphScene::unknownHeatNodeCount() const {
    return static_cast<int>(std::count_if(nodeHeat_.begin(), nodeHeat_.end(),
                                          [](const auto& h) { return h && h->unknown; }));
}

void GraphScene::refreshHeat() {
    // Scaled to the hottest box on screen: a collapsed group of twelve layers would otherwise
    // be the only dark box, and every node inside an opened one pale.
    maxHeatShare_ = 0;
    maxHeatAmount_ = 0;
    auto consider = [this](const NodeHeat& heat) {
        if (heat.share <= maxHeatShare_) return;
        maxHeatShare_ = heat.share;
        maxHeatAmount_ = heat.amount;
    };
    for (std::size_t n = 0; n < nodeItems_.size(); ++n)
        if (nodeItems_[n] && nodeHeat_[n] && !nodeHeat_[n]->unknown) consider(*nodeHeat_[n]);
    for (std::size_t g = 0; g < groupItems_.size(); ++g)
        if (groupItems_[g] && !groupItems_[g]->isExpanded()) consider(groupHeat_[g]);
    auto tip = [this](const NodeHeat& heat) {
        return heatAmountText(heatMeasure_, heat.amount, heat.share);
    };
    auto colour = [this](double share) {
        return heatColour(maxHeatShare_ > 0 ? share / maxHeatShare_ : 0);
    };
    for (std::size_t n = 0; n < nodeItems_.size(); ++n) {
        if (!nodeItems_[n]) continue;
        if (nodeHeat_[n] && nodeHeat_[n]->unknown)
            nodeItems_[n]->setHeat(kUnknownCostColour,
                                   heatUnknownText(heatMeasure_, nodeHeat_[n]->amount),
                                   /*unknown=*/true);
        else if (nodeHeat_[n])
            nodeItems_[n]->setHeat(colour(nodeHeat_[n]->share), tip(*nodeHeat_[n]));
        else
            nodeItems_[n]->setHeat(std::nullopt, heatNotCoveredText(heatMeasure_));
    }
    for (std::size_t g = 0; g < groupItems_.size(); ++g) {
        if (!groupItems_[g]) continue;
        if (groupItems_[g]->isExpanded())
            groupItems_[g]->clearHeat();
        else
            groupItems_[g]->setHeat(colour(groupHeat_[g].share), tip(groupHeat_[g]));
    }
    emit heatScaleChanged();
}

void GraphScene::setNodeSqnr(const std::map<std::string, double>& sqnr,
                             const std::map<std::string, QString>& toolTips,
                             const QString& otherToolTip) {
    if (heatShown_) clearHeat();
    if (marksShown_) clearNodeMarks();
    sqnrShown_ = true;
    sqnrOtherToolTip_ = otherToolTip;
    sqnrToolTips_.assign(view_->nodes.size(), QString());
    nodeSqnr_.assign(view_->nodes.size(), std::nullopt);
    groupSqnr_.assign(view_->groups.size(), std::nullopt);
    for (std::size_t n = 0; n < view_->nodes.size(); ++n) {
        const auto& node = view_->nodes[n];
        if (node.kind != ViewNode::Kind::Operator || !node.proto) continue;
        const std::string name = profileNameOf(*node.proto);
        auto it = sqnr.find(name);
        if (it == sqnr.end()) continue;
        nodeSqnr_[n] = it->second;
        if (auto tip = toolTips.find(name); tip != toolTips.end()) sqnrToolTips_[n] = tip->second;
        for (int g : view_->groupChain(node.group))
            groupSqnr_[g] = groupSqnr_[g] ? std::min(*groupSqnr_[g], it->second) : it->second;
    }
    refreshSqnr();
}

void GraphScene::clearNodeSqnr() {
    if (!sqnrShown_) return;
    sqnrShown_ = false;
    nodeSqnr_.clear();
    groupSqnr_.clear();
    for (auto* item : nodeItems_)
        if (item) item->clearHeat();
    for (auto* item : groupItems_)
        if (item) item->clearHeat();
}

std::optional<double> GraphScene::sqnrOfNode(int node) const {
    if (node < 0 || node >= static_cast<int>(nodeSqnr_.size())) return std::nullopt;
    return nodeSqnr_[node];
}

int GraphScene::sqnrNodeCount() const {
    return static_cast<int>(std::count_if(nodeSqnr_.begin(), nodeSqnr_.end(),
                                          [](const auto& s) { return s.has_value(); }));
}

double GraphScene::weakestSqnr() const {
    double weakest = std::numeric_limits<double>::infinity();
    for (const auto& s : nodeSqnr_)
        if (s) weakest = std::min(weakest, *s);
    return weakest;
}

void GraphScene::refreshSqnr() {
    auto tip = [](double db) {
        return std::isfinite(db)
                   ? tr("output SQNR %1 dB against the float model").arg(db, 0, 'f', 1)
                   : tr("output identical to the float model");
    };
    for (std::size_t n = 0; n < nodeItems_.size(); ++n) {
        if (!nodeItems_[n]) continue;
        if (nodeSqnr_[n])
            nodeItems_[n]->setHeat(sqnrColour(*nodeSqnr_[n]), sqnrToolTips_[n].isEmpty()
                                                                  ? tip(*nodeSqnr_[n])
                                                                  : sqnrToolTips_[n]);
        else
            nodeItems_[n]->setHeat(std::nullopt, sqnrOtherToolTip_.isEmpty()
                                                     ? tr("not quantized (float)")
                                                     : sqnrOtherToolTip_);
    }
    for (std::size_t g = 0; g < groupItems_.size(); ++g) {
        if (!groupItems_[g]) continue;
        if (groupItems_[g]->isExpanded() || !groupSqnr_[g])
            groupItems_[g]->clearHeat();
        else
            groupItems_[g]->setHeat(sqnrColour(*groupSqnr_[g]),
                                    tr("weakest inside: ") + tip(*groupSqnr_[g]));
    }
}

void GraphScene::setGroupSummaries(std::vector<QString> summaries) {
    groupSummaries_ = std::move(summaries);
    for (std::size_t g = 0; g < groupItems_.size() && g < groupSummaries_.size(); ++g)
        if (groupItems_[g]) groupItems_[g]->setSummary(groupSummaries_[g]);
}

void GraphScene::setNodeMarks(const std::map<std::string, NodeMark>& marks,
                              const QString& otherToolTip) {
    if (heatShown_) clearHeat();
    if (sqnrShown_) clearNodeSqnr();
    marksShown_ = true;
    otherMarkToolTip_ = otherToolTip;
    nodeMarks_.assign(view_->nodes.size(), std::nullopt);
    groupMarks_.assign(view_->groups.size(), std::nullopt);
    for (std::size_t n = 0; n < view_->nodes.size(); ++n) {
        const auto& node = view_->nodes[n];
        if (node.kind != ViewNode::Kind::Operator || !node.proto) continue;
        auto it = marks.find(profileNameOf(*node.proto));
        if (it == marks.end()) continue;
        nodeMarks_[n] = it->second;
        for (int g : view_->groupChain(node.group))
            if (!groupMarks_[g]) groupMarks_[g] = it->second;
    }
    refreshMarks();
}

void GraphScene::clearNodeMarks() {
    if (!marksShown_) return;
    marksShown_ = false;
    nodeMarks_.clear();
    groupMarks_.clear();
    for (auto* item : nodeItems_)
        if (item) item->clearHeat();
    for (auto* item : groupItems_)
        if (item) item->clearHeat();
}

std::optional<GraphScene::NodeMark> GraphScene::markOfNode(int node) const {
    if (node < 0 || node >= static_cast<int>(nodeMarks_.size())) return std::nullopt;
    return nodeMarks_[node];
}

void GraphScene::refreshMarks() {
    for (std::size_t n = 0; n < nodeItems_.size(); ++n) {
        if (!nodeItems_[n]) continue;
        if (nodeMarks_[n])
            nodeItems_[n]->setHeat(nodeMarks_[n]->colour, nodeMarks_[n]->toolTip);
        else
            nodeItems_[n]->setHeat(std::nullopt, otherMarkToolTip_);
    }
    for (std::size_t g = 0; g < groupItems_.size(); ++g) {
        if (!groupItems_[g]) continue;
        if (groupItems_[g]->isExpanded() || !groupMarks_[g])
            groupItems_[g]->clearHeat();
        else
            groupItems_[g]->setHeat(groupMarks_[g]->colour, tr("differences inside"));
    }
}

void GraphScene::onSelectionChanged() {
    for (auto* item : selectedItems()) {
        if (item->type() == GraphNodeItem::Type) {
            emit nodeSelected(static_cast<GraphNodeItem*>(item)->nodeIndex());
            return;
        }
        if (item->type() == GraphGroupItem::Type) {
            emit groupSelected(static_cast<GraphGroupItem*>(item)->groupIndex());
            emit nodeSelected(-1);
            return;
        }
    }
    emit nodeSelected(-1);
}

}  // namespace onnxlens::widgets
