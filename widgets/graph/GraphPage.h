#pragma once
// One opened model's graph: the view with its minimap and find bar, and the layout runs in the
// worker process with progress, cancel, and an error banner when the worker fails.
#include <QElapsedTimer>
#include <QWidget>
#include <memory>
#include <optional>

#include "onnxlens/layout/GraphLayout.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/workers/ModelDocument.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace onnxlens::widgets {

class FindBar;
class GraphView;
class DiffLegend;
class HeatLegend;
class LayoutClient;
class MinimapView;
class ModelController;
class QuantizationLegend;
struct OptimizedGraph;

class GraphPage : public QWidget {
    Q_OBJECT
  public:
    explicit GraphPage(std::shared_ptr<const ModelDocument> document, QWidget* parent = nullptr);
    ~GraphPage() override;

    const ModelDocument& document() const { return *document_; }
    std::shared_ptr<const ModelDocument> sharedDocument() const { return document_; }
    // The model's engine side: its one compiled session, input choices and last results.
    ModelController* controller() const { return controller_; }
    GraphScene* scene() const { return scene_; }
    GraphView* view() const { return view_; }
    FindBar* findBar() const { return findBar_; }
    LayoutClient* layoutClient() const { return client_; }
    MinimapView* minimap() const { return minimap_; }

    // Starts the first layout (after the caller connected its signals).
    void start();
    bool isDrawn() const { return drawn_; }
    bool isLayoutRunning() const;
    QString lastError() const { return lastError_; }
    double lastLayoutMs() const { return lastLayoutMs_; }

    void showFind();
    void revealNode(int node);
    // Reveals the node of the shown graph a profile names (profileNameOf); false when the shown
    // graph has none (a node the optimizer made, while the file's graph is shown).
    bool revealProfiledNode(const QString& profileName);
    // View > Expand All Groups: every group open, laid out level by level. A graph too large
    // to read or lay out that way is refused: the returned message says why (empty: started).
    QString expandAllGroups();
    static constexpr int kExpandAllOperatorLimit = 20000;
    void cancelLayout();
    void retryLayout();

    // View > Show Optimized Graph: the graph the engine runs, built from the controller's
    // session on its engine thread the first time and laid out like the file's graph; false shows
    // the file's graph again. Node indices (nodeSelected) then refer to shownViewGraph().
    void setShowOptimized(bool optimized);
    bool isShowingOptimized() const { return showOptimized_; }
    bool isOptimizedPending() const { return optimizedPending_; }
    std::shared_ptr<const ViewGraph> shownViewGraph() const;
    std::shared_ptr<const OptimizedGraph> optimizedGraph() const;

    // View > Show Constants and View > Fold Repeated Blocks: the file's graph built again with
    // these options on a worker thread, then shown (the optimized graph is unaffected).
    void setViewGraphOptions(const ViewGraphOptions& options);
    const ViewGraphOptions& viewGraphOptions() const { return fileViewOptions_; }

    // Heat overlay on whichever graph is shown, with its legend in the view's top-right corner:
    // the profile's time per node, or (setCostColouring) the cost model's figures. One at a
    // time; clearHeat() removes whichever is shown.
    void setNodeHeat(const NodeHeatMap& heat, HeatMeasure measure = HeatMeasure::RunTime);
    void clearHeat();
    bool hasHeat() const { return heat_.has_value(); }
    HeatMeasure heatMeasure() const { return heatMeasure_; }
    // View > Colour by FLOPs / Parameters / Memory from the document's cost model; false when the
    // model could not be counted.
    bool setCostColouring(HeatMeasure measure);
    // Benchmark > Colour Graph by Time: while on, the controller's last profiled benchmark is the
    // heat overlay (set again when a benchmark of this model finishes); off removes the time
    // colouring (a cost colouring stays).
    void setRunTimeHeatShown(bool shown);
    bool isRunTimeHeatShown() const { return runTimeHeatShown_; }
    HeatLegend* heatLegend() const { return heatLegend_; }

    // View > Colour by Quantization Error: nodes by the SQNR of their output (profileNameOf ->
    // dB, from a quantization report), with its legend in the same corner.
    void setQuantizationError(const std::map<std::string, double>& sqnr);
    void clearQuantizationError();
    bool hasQuantizationError() const { return sqnr_.has_value(); }
    QuantizationLegend* quantizationLegend() const { return sqnrLegend_; }

    // View > Colour by Error after Tools > Compare Models: the same SQNR colouring, each node's
    // output against the other model's matching value, with the figures in `toolTips`
    // (profileNameOf -> text).
    void setComparisonError(const std::map<std::string, double>& sqnr,
                            const std::map<std::string, QString>& toolTips);

    // Tools > Compare Models: nodes marked changed / removed / renamed (profileNameOf -> mark),
    // with a legend of the counts (`added`: nodes only the other model has).
    void setStructureDiff(const std::map<std::string, GraphScene::NodeMark>& marks, int changed,
                          int removed, int renamed, int added, const QString& otherModel);
    void clearStructureDiff();
    bool hasStructureDiff() const { return marks_.has_value(); }
    DiffLegend* diffLegend() const { return diffLegend_; }

  signals:
    void drawn();                   // the first layout is on screen
    void layoutApplied(double ms);  // any layout (first or after expanding) is on screen
    void layoutFailed(const QString& message);
    void nodeSelected(int node);  // -1: nothing
    void nodeRevealed(int node);
    void viewGraphChanged();  // original <-> optimized graph swapped in (before its layout)
    void optimizedGraphFailed(const QString& message);

  private:
    void connectScene();
    void showViewGraph(std::shared_ptr<const ViewGraph> view);
    void updateHeatLegend();
    void applyRunTimeHeat();
    void applyGroupSummaries();
    void updateQuantizationLegend();
    QString sqnrOtherToolTip() const;
    void runLayout();
    void onLayoutFinished(const onnxlens::LayoutResult& result);
    void onLayoutFailed(const QString& message);
    void showBanner(const QString& message);

    void onOptimizedGraphReady();
    void onOptimizedGraphFailed(const QString& reason);

    std::shared_ptr<const ModelDocument> document_;
    ModelController* controller_;
    GraphScene* scene_;
    GraphView* view_;
    MinimapView* minimap_;
    FindBar* findBar_;
    LayoutClient* client_;
    QWidget* progress_;
    QLabel* progressLabel_;
    QWidget* banner_;
    QLabel* bannerLabel_;
    QTimer* progressDelay_;
    std::vector<int> requestGroups_;
    std::uint64_t requestGeneration_ = 0;
    bool drawn_ = false;
    bool layoutQueued_ = false;
    QString lastError_;
    double lastLayoutMs_ = 0;
    HeatLegend* heatLegend_;
    std::optional<NodeHeatMap> heat_;
    HeatMeasure heatMeasure_ = HeatMeasure::RunTime;
    bool runTimeHeatShown_ = false;
    QuantizationLegend* sqnrLegend_;
    std::optional<std::map<std::string, double>> sqnr_;
    std::map<std::string, QString> sqnrToolTips_;  // a model comparison's figures per node
    DiffLegend* diffLegend_;
    std::optional<std::map<std::string, GraphScene::NodeMark>> marks_;
    bool showOptimized_ = false;
    bool optimizedPending_ = false;
    std::shared_ptr<const ViewGraph> fileView_;  // the file's graph as currently built
    ViewGraphOptions fileViewOptions_;
    std::uint64_t fileViewBuild_ = 0;  // the latest requested rebuild; older ones are dropped
};

}  // namespace onnxlens::widgets
