#pragma once
// The drawn graph: holds the view graph and which groups are expanded, builds layout requests
// for the groups whose layout is missing (deepest first, so a group's size is known before its
// parent is laid out), caches each group's placement, and composes the items from them.
// The scene never lays out itself: whoever owns it (the GUI's GraphPage through the worker
// process, the CLI in-process) runs the request and hands the result back.
#include <QColor>
#include <QGraphicsScene>
#include <QString>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/layout/GraphLayout.h"
#include "onnxlens/model/ViewGraph.h"
#include "widgets/graph/HeatLegend.h"

namespace onnxlens::widgets {

class GraphNodeItem;
class GraphGroupItem;
class GraphEdgeItem;

// One operator's part of what the heat overlay measures (HeatMeasure).
struct NodeHeat {
    double share = 0;   // of the total (summed node time, or the model's FLOPs, ...), 0..1
    double amount = 0;  // ms per run, FLOPs, parameters or bytes
    // The cost model could not count it (a shape its rule needs is unknown): drawn hatched, not
    // on the colour scale; `amount` is what it did count (a lower bound, often 0).
    bool unknown = false;
};
// Keyed by profileNameOf(node) (NodeNames.h), the name the engine's profile uses.
using NodeHeatMap = std::map<std::string, NodeHeat>;

class GraphScene : public QGraphicsScene {
    Q_OBJECT
  public:
    explicit GraphScene(std::shared_ptr<const ViewGraph> view, QObject* parent = nullptr);
    ~GraphScene() override;

    const ViewGraph& view() const { return *view_; }
    std::shared_ptr<const ViewGraph> sharedView() const { return view_; }

    // Models up to `flatLimit` operators open fully expanded; larger ones open with groups
    // expanded from the top only while at most `maxVisibleUnits` boxes would be visible.
    void expandForOverview(int flatLimit = 1000, int maxVisibleUnits = 40);
    void expandAll();
    bool isExpanded(int group) const { return expanded_[group]; }
    bool isVisible(int group) const;  // every ancestor expanded
    // Expanding a group of at most this many operators expands the groups inside it too.
    static constexpr int kOpenFullyNodeCount = 150;
    void setExpanded(int group, bool expanded);
    void toggleGroup(int group);

    bool needsLayout() const;
    // The request for every visible expanded group without a placement; `groups` receives the
    // group of each graph in the request. `generation` identifies the expansion state.
    LayoutRequest layoutRequest(std::vector<int>& groups) const;
    int unitCount(const std::vector<int>& groups) const;  // boxes in a request, for progress
    std::uint64_t generation() const { return generation_; }
    // Stores the placements and rebuilds the items. Results for an outdated generation are
    // ignored (returns false).
    bool applyLayout(const std::vector<int>& groups, const LayoutResult& result,
                     std::uint64_t generation);

    // Expands the groups holding the node; it is selected once laid out (nodeRevealed).
    void revealNode(int node);
    void selectNode(int node);
    GraphNodeItem* nodeItem(int node) const;
    GraphGroupItem* groupItem(int group) const;
    const std::vector<GraphEdgeItem*>& edgeItems() const { return edgeItems_; }
    int selectedNode() const;
    QRectF contentRect() const;  // the composed graph, with a margin
    QRectF inputsRect() const;   // the drawn graph inputs of the main graph; invalid when none

    // Heat overlay: operators found in `heat` are coloured by their share, the others grey;
    // collapsed groups by the summed share of the operators inside. The colour scale runs up to
    // the hottest box on screen (maxHeatShare()), so it is recomputed when groups open or
    // close (heatScaleChanged). Kept across re-layouts until clearHeat().
    void setNodeHeat(const NodeHeatMap& heat, HeatMeasure measure = HeatMeasure::RunTime);
    void clearHeat();
    bool hasHeat() const { return heatShown_; }
    HeatMeasure heatMeasure() const { return heatMeasure_; }
    double maxHeatAmount() const { return maxHeatAmount_; }  // the amount of the hottest box
    std::optional<NodeHeat> heatOfNode(int node) const;
    NodeHeat heatOfGroup(int group) const;  // summed over the operators inside, at any depth
    double maxHeatShare() const { return maxHeatShare_; }
    int heatedNodeCount() const;       // operators the heat map covers with a known amount
    int unknownHeatNodeCount() const;  // operators it lists as unknown (drawn hatched)

    // Quantization-error overlay (replaces the heat overlay while shown): operators found in
    // `sqnr` (profileNameOf -> dB) coloured by sqnrColour, the others grey; collapsed groups by
    // the weakest operator inside. Kept across re-layouts until clearNodeSqnr().
    // `toolTips` (profileNameOf -> text) replace the default tooltip ("output SQNR 31.2 dB against
    // the float model"), `otherToolTip` the one of operators not in `sqnr`.
    void setNodeSqnr(const std::map<std::string, double>& sqnr,
                     const std::map<std::string, QString>& toolTips = {},
                     const QString& otherToolTip = {});
    void clearNodeSqnr();
    bool hasSqnr() const { return sqnrShown_; }
    std::optional<double> sqnrOfNode(int node) const;
    int sqnrNodeCount() const;
    double weakestSqnr() const;

    // A line per group for its tooltip (the cost model's totals of the operators inside), by
    // view group index; kept across re-layouts.
    void setGroupSummaries(std::vector<QString> summaries);

    // Structure-diff overlay (Tools > Compare Models; replaces the other overlays while shown):
    // operators found in `marks` (profileNameOf -> colour and tooltip) painted in their colour,
    // the others plain with `otherToolTip`; collapsed groups holding a marked operator get the
    // first such colour. Kept across re-layouts until clearNodeMarks().
    struct NodeMark {
        QColor colour;
        QString toolTip;
    };
    void setNodeMarks(const std::map<std::string, NodeMark>& marks, const QString& otherToolTip);
    void clearNodeMarks();
    bool hasNodeMarks() const { return marksShown_; }
    std::optional<NodeMark> markOfNode(int node) const;

  signals:
    void layoutNeeded();
    void nodeSelected(int node);  // -1: nothing (or a group) selected
    void groupSelected(int group);
    void nodeRevealed(int node);
    // A group opened by toggleGroup (a click) is drawn at its new size.
    void groupExpanded(int group);
    void rebuilt();
    void heatScaleChanged();

  private:
    // Expanded or collapsed groups whose box must take its new size in the placements of its
    // ancestors, once its own inside is laid out.
    void resizePending();
    void resizeInParents(int group);
    void syncChildSizes(int group);
    static bool resizeUnit(GraphPlacement& placement, std::size_t unit, QSizeF size);
    QSizeF unitSize(const ViewUnitRef& unit) const;
    void rebuildItems();
    void placeGroup(int group, QPointF origin);
    void onSelectionChanged();
    void refreshHeat();  // scale from the boxes on screen, then every item's colour
    void refreshSqnr();
    void refreshMarks();

    std::shared_ptr<const ViewGraph> view_;
    std::vector<char> expanded_;
    std::map<int, GraphPlacement> placements_;
    std::uint64_t generation_ = 0;
    int pendingReveal_ = -1;
    int pendingGroupReveal_ = -1;  // opened by toggleGroup, its box not drawn yet
    std::vector<int> pendingResize_;
    std::vector<GraphNodeItem*> nodeItems_;
    std::vector<GraphGroupItem*> groupItems_;
    std::vector<GraphEdgeItem*> edgeItems_;
    std::map<std::tuple<int, int, int>, QPointF> ports_;  // (group, kind, tensor) -> centre
    bool heatShown_ = false;
    std::vector<std::optional<NodeHeat>> nodeHeat_;  // per view node
    std::vector<NodeHeat> groupHeat_;                // per view group
    double maxHeatShare_ = 0;
    double maxHeatAmount_ = 0;
    HeatMeasure heatMeasure_ = HeatMeasure::RunTime;
    std::vector<QString> groupSummaries_;
    bool sqnrShown_ = false;
    std::vector<std::optional<double>> nodeSqnr_;   // per view node
    std::vector<std::optional<double>> groupSqnr_;  // per view group: the weakest inside
    bool marksShown_ = false;
    std::vector<std::optional<NodeMark>> nodeMarks_;   // per view node
    std::vector<std::optional<NodeMark>> groupMarks_;  // per view group
    QString otherMarkToolTip_;
    // Tooltips of the quantization-error overlay when it shows a model comparison (by view node).
    std::vector<QString> sqnrToolTips_;
    QString sqnrOtherToolTip_;
};

}  // namespace onnxlens::widgets
