#include "widgets/graph/GraphPage.h"

#include <QFutureWatcher>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "onnxlens/model/NodeNames.h"
#include "widgets/graph/CostColouring.h"
#include "widgets/graph/DiffLegend.h"
#include "widgets/graph/FindBar.h"
#include "widgets/graph/GraphGroupItem.h"
#include "widgets/graph/GraphNodeItem.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/graph/GraphView.h"
#include "widgets/graph/HeatLegend.h"
#include "widgets/graph/MinimapView.h"
#include "widgets/graph/OptimizedGraph.h"
#include "widgets/graph/QuantizationLegend.h"
#include "widgets/workers/LayoutClient.h"
#include "widgets/workers/ModelController.h"

namespace onnxlens::widgets {

GraphPage::GraphPage(std::shared_ptr<const ModelDocument> document, QWidget* parent)
    : QWidget(parent),
      document_(std::move(document)),
      controller_(new ModelController(document_, this)),
      fileView_(document_->view) {
    scene_ = new GraphScene(document_->view, this);
    applyGroupSummaries();
    scene_->expandForOverview();
    view_ = new GraphView(this);
    view_->setScene(scene_);
    minimap_ = new MinimapView(view_, this);
    findBar_ = new FindBar(this);
    findBar_->setViewGraph(document_->view);
    client_ = new LayoutClient(this);

    progress_ = new QWidget(this);
    auto* progressRow = new QHBoxLayout(progress_);
    progressRow->setContentsMargins(6, 2, 6, 2);
    progressLabel_ = new QLabel(progress_);
    auto* bar = new QProgressBar(progress_);
    bar->setRange(0, 0);  // Graphviz reports no progress: a busy indicator
    bar->setMaximumWidth(160);
    auto* cancel = new QPushButton(tr("Cancel"), progress_);
    progressRow->addWidget(progressLabel_, 1);
    progressRow->addWidget(bar);
    progressRow->addWidget(cancel);
    progress_->hide();

    banner_ = new QWidget(this);
    banner_->setStyleSheet(QStringLiteral("background:#fdecea; color:#611a15;"));
    auto* bannerRow = new QHBoxLayout(banner_);
    bannerRow->setContentsMargins(6, 4, 6, 4);
    bannerLabel_ = new QLabel(banner_);
    bannerLabel_->setWordWrap(true);
    bannerLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* retry = new QPushButton(tr("Retry"), banner_);
    bannerRow->addWidget(bannerLabel_, 1);
    bannerRow->addWidget(retry);
    banner_->hide();

    auto* graphArea = new QGridLayout;
    graphArea->addWidget(view_, 0, 0);
    graphArea->addWidget(minimap_, 0, 0, Qt::AlignRight | Qt::AlignBottom);
    heatLegend_ = new HeatLegend(this);
    heatLegend_->hide();
    graphArea->addWidget(heatLegend_, 0, 0, Qt::AlignRight | Qt::AlignTop);
    sqnrLegend_ = new QuantizationLegend(this);
    sqnrLegend_->hide();
    graphArea->addWidget(sqnrLegend_, 0, 0, Qt::AlignRight | Qt::AlignTop);
    diffLegend_ = new DiffLegend(this);
    diffLegend_->hide();
    graphArea->addWidget(diffLegend_, 0, 0, Qt::AlignRight | Qt::AlignTop);
    graphArea->setContentsMargins(0, 0, 0, 0);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(findBar_);
    layout->addWidget(banner_);
    layout->addWidget(progress_);
    layout->addLayout(graphArea, 1);

    progressDelay_ = new QTimer(this);
    progressDelay_->setSingleShot(true);
    connect(progressDelay_, &QTimer::timeout, progress_, &QWidget::show);
    connect(cancel, &QPushButton::clicked, this, &GraphPage::cancelLayout);
    connect(retry, &QPushButton::clicked, this, &GraphPage::retryLayout);
    connect(controller_, &ModelController::optimizedGraphReady, this,
            &GraphPage::onOptimizedGraphReady);
    connect(controller_, &ModelController::compileFailed, this,
            [this](const QString& message) { onOptimizedGraphFailed(message); });
    connect(controller_, &ModelController::failed, this,
            [this](EngineJob job, const QString& message) {
                if (job == EngineJob::OptimizedGraph || job == EngineJob::Compile)
                    onOptimizedGraphFailed(message);
            });
    connect(controller_, &ModelController::benchmarkFinished, this, &GraphPage::applyRunTimeHeat);
    // Counted again at the dims of a run or benchmark: the cost colouring and the group tooltips
    // follow.
    connect(controller_, &ModelController::costChanged, this, [this] {
        applyGroupSummaries();
        if (heat_ && heatMeasure_ != HeatMeasure::RunTime) setCostColouring(heatMeasure_);
    });
    connect(client_, &LayoutClient::finished, this, &GraphPage::onLayoutFinished);
    connect(client_, &LayoutClient::failed, this, &GraphPage::onLayoutFailed);
    connect(client_, &LayoutClient::cancelled, this, [this] {
        progressDelay_->stop();
        progress_->hide();
        showBanner(tr("Layout cancelled."));
    });
    connectScene();
    connect(findBar_, &FindBar::nodeChosen, this, &GraphPage::revealNode);
}

void GraphPage::connectScene() {
    connect(scene_, &GraphScene::layoutNeeded, this, [this] {
        // Coalesce several expand/collapse clicks into one layout.
        if (layoutQueued_) return;
        layoutQueued_ = true;
        QTimer::singleShot(0, this, [this] {
            layoutQueued_ = false;
            runLayout();
        });
    });
    connect(scene_, &GraphScene::nodeSelected, this, &GraphPage::nodeSelected);
    connect(scene_, &GraphScene::heatScaleChanged, this, &GraphPage::updateHeatLegend);
    connect(scene_, &GraphScene::nodeRevealed, this, [this](int node) {
        if (auto* item = scene_->nodeItem(node)) view_->centreOnItemRect(item->sceneBoundingRect());
        emit nodeRevealed(node);
    });
    connect(scene_, &GraphScene::groupExpanded, this, [this](int group) {
        if (auto* item = scene_->groupItem(group)) view_->bringIntoView(item->sceneBoundingRect());
    });
    connect(scene_, &GraphScene::rebuilt, this, [this] {
        // Room around the graph, so that any node (even at the border) can be centred.
        const QRectF content = scene_->sceneRect();
        const double margin = std::max(view_->viewport()->width(), view_->viewport()->height()) /
                              std::max(0.05, view_->zoom());
        view_->setSceneRect(content.adjusted(-margin, -margin, margin, margin));
        minimap_->refit();
    });
}

GraphPage::~GraphPage() {
    scene_->disconnect(this);
    client_->cancel();
}

void GraphPage::start() { runLayout(); }

bool GraphPage::isLayoutRunning() const { return client_->isRunning(); }

void GraphPage::showFind() { findBar_->activate(); }

void GraphPage::revealNode(int node) { scene_->revealNode(node); }

bool GraphPage::revealProfiledNode(const QString& profileName) {
    const auto view = shownViewGraph();
    const std::string name = profileName.toStdString();
    for (int n = 0; n < static_cast<int>(view->nodes.size()); ++n) {
        const auto& node = view->nodes[static_cast<std::size_t>(n)];
        if (node.proto && profileNameOf(*node.proto) == name) {
            revealNode(n);
            return true;
        }
    }
    return false;
}

QString GraphPage::expandAllGroups() {
    const int operators = scene_->view().operatorCount;
    if (operators > kExpandAllOperatorLimit)
        return tr("Not expanding all groups: %1 operators are more than a drawing can show "
                  "readably (limit %2). Expand the groups you need, or use Find (Ctrl+F).")
            .arg(operators)
            .arg(kExpandAllOperatorLimit);
    scene_->expandAll();
    emit scene_->layoutNeeded();
    return {};
}

void GraphPage::cancelLayout() { client_->cancel(); }

void GraphPage::retryLayout() {
    banner_->hide();
    runLayout();
}

void GraphPage::runLayout() {
    if (!scene_->needsLayout()) return;
    banner_->hide();
    LayoutRequest request = scene_->layoutRequest(requestGroups_);
    requestGeneration_ = scene_->generation();
    progressLabel_->setText(
        tr("Laying out %n box(es) with Graphviz…", nullptr, scene_->unitCount(requestGroups_)));
    progressDelay_->start(150);  // no flicker for the quick ones
    client_->start(request);
}

void GraphPage::onLayoutFinished(const onnxlens::LayoutResult& result) {
    progressDelay_->stop();
    progress_->hide();
    lastLayoutMs_ = static_cast<double>(client_->elapsedMs());
    if (!scene_->applyLayout(requestGroups_, result, requestGeneration_)) {
        runLayout();  // the expansion changed meanwhile
        return;
    }
    lastError_.clear();
    if (!drawn_) {
        drawn_ = true;
        view_->showTop(scene_->inputsRect());
        emit drawn();
    }
    emit layoutApplied(lastLayoutMs_);
    if (scene_->needsLayout()) runLayout();
}

void GraphPage::onLayoutFailed(const QString& message) {
    progressDelay_->stop();
    progress_->hide();
    showBanner(message);
    emit layoutFailed(message);
}

void GraphPage::showBanner(const QString& message) {
    lastError_ = message;
    bannerLabel_->setText(message);
    banner_->show();
}

}  // namespace onnxlens::widgets

namespace onnxlens::widgets {

std::shared_ptr<const ViewGraph> GraphPage::shownViewGraph() const { return scene_->sharedView(); }

void GraphPage::setShowOptimized(bool optimized) {
    if (optimized == showOptimized_) return;
    showOptimized_ = optimized;
    if (!optimized) {
        showViewGraph(fileView_);
        return;
    }
    optimizedPending_ = true;
    controller_->buildOptimizedGraph();
}

std::shared_ptr<const OptimizedGraph> GraphPage::optimizedGraph() const {
    return controller_->optimizedGraph();
}

void GraphPage::onOptimizedGraphFailed(const QString& reason) {
    if (!std::exchange(optimizedPending_, false)) return;
    showOptimized_ = false;
    const QString message = tr("Cannot show the optimized graph: %1").arg(reason);
    showBanner(message);
    emit optimizedGraphFailed(message);
}

void GraphPage::onOptimizedGraphReady() {
    optimizedPending_ = false;
    if (showOptimized_) showViewGraph(controller_->optimizedGraph()->view);
}

void GraphPage::setViewGraphOptions(const ViewGraphOptions& options) {
    fileViewOptions_ = options;
    const std::uint64_t build = ++fileViewBuild_;
    using ViewResult = Result<ViewGraph>;
    auto* watcher = new QFutureWatcher<ViewResult>(this);
    connect(watcher, &QFutureWatcher<ViewResult>::finished, this, [this, watcher, build] {
        watcher->deleteLater();
        if (build != fileViewBuild_) return;  // asked again meanwhile
        const ViewResult& result = watcher->result();
        if (!result) {
            showBanner(tr("Cannot rebuild the graph: %1")
                           .arg(QString::fromStdString(result.error().message)));
            return;
        }
        fileView_ = std::make_shared<const ViewGraph>(result.value());
        if (!showOptimized_) showViewGraph(fileView_);
    });
    auto model = document_->view->model;
    watcher->setFuture(
        QtConcurrent::run([model, options] { return buildViewGraph(model, options); }));
}

void GraphPage::showViewGraph(std::shared_ptr<const ViewGraph> view) {
    if (view == scene_->sharedView()) return;
    {
        QSignalBlocker quiet(client_);  // replaced, not cancelled by the person: no banner
        client_->cancel();
    }
    progressDelay_->stop();
    progress_->hide();
    banner_->hide();
    GraphScene* old = scene_;
    old->disconnect(this);
    scene_ = new GraphScene(std::move(view), this);
    applyGroupSummaries();
    scene_->expandForOverview();
    connectScene();
    view_->setScene(scene_);
    minimap_->setScene(scene_);
    findBar_->setViewGraph(scene_->sharedView());
    delete old;
    if (heat_) scene_->setNodeHeat(*heat_, heatMeasure_);
    updateHeatLegend();
    if (sqnr_) scene_->setNodeSqnr(*sqnr_, sqnrToolTips_, sqnrOtherToolTip());
    updateQuantizationLegend();
    if (marks_) scene_->setNodeMarks(*marks_, tr("same in both models"));
    drawn_ = false;  // fit the new graph to the window once it is laid out
    emit viewGraphChanged();
    runLayout();
}

void GraphPage::setQuantizationError(const std::map<std::string, double>& sqnr) {
    if (heat_) clearHeat();
    if (marks_) clearStructureDiff();
    sqnr_ = sqnr;
    sqnrToolTips_.clear();
    sqnrLegend_->setComparisonMode(false);
    scene_->setNodeSqnr(sqnr);
    updateQuantizationLegend();
}

QString GraphPage::sqnrOtherToolTip() const {
    return sqnrToolTips_.empty() ? QString() : tr("not compared (no matching value)");
}

void GraphPage::setComparisonError(const std::map<std::string, double>& sqnr,
                                   const std::map<std::string, QString>& toolTips) {
    if (heat_) clearHeat();
    if (marks_) clearStructureDiff();
    sqnr_ = sqnr;
    sqnrToolTips_ = toolTips;
    sqnrLegend_->setComparisonMode(true);
    scene_->setNodeSqnr(sqnr, sqnrToolTips_, sqnrOtherToolTip());
    updateQuantizationLegend();
}

void GraphPage::setStructureDiff(const std::map<std::string, GraphScene::NodeMark>& marks,
                                 int changed, int removed, int renamed, int added,
                                 const QString& otherModel) {
    if (heat_) clearHeat();
    if (sqnr_) clearQuantizationError();
    marks_ = marks;
    scene_->setNodeMarks(marks, tr("same in both models"));
    diffLegend_->setCounts(changed, removed, renamed, added, otherModel);
    diffLegend_->show();
    diffLegend_->raise();
}

void GraphPage::clearStructureDiff() {
    marks_.reset();
    scene_->clearNodeMarks();
    diffLegend_->hide();
}

void GraphPage::clearQuantizationError() {
    sqnr_.reset();
    sqnrToolTips_.clear();
    scene_->clearNodeSqnr();
    updateQuantizationLegend();
}

void GraphPage::updateQuantizationLegend() {
    if (!sqnr_) {
        sqnrLegend_->hide();
        return;
    }
    const int coloured = scene_->sqnrNodeCount();
    sqnrLegend_->setSummary(coloured, scene_->weakestSqnr(),
                            scene_->view().operatorCount - coloured);
    sqnrLegend_->show();
    sqnrLegend_->raise();
}

void GraphPage::setNodeHeat(const NodeHeatMap& heat, HeatMeasure measure) {
    if (sqnr_) clearQuantizationError();
    heat_ = heat;
    heatMeasure_ = measure;
    scene_->setNodeHeat(heat, measure);
    updateHeatLegend();
}

bool GraphPage::setCostColouring(HeatMeasure measure) {
    const auto counted = controller_->cost();
    if (!counted->cost || measure == HeatMeasure::RunTime) return false;
    setNodeHeat(costHeatMap(*counted->cost, measure), measure);
    return true;
}

void GraphPage::setRunTimeHeatShown(bool shown) {
    runTimeHeatShown_ = shown;
    applyRunTimeHeat();
}

void GraphPage::applyRunTimeHeat() {
    const auto result = controller_->lastBenchmark();
    if (runTimeHeatShown_ && result && result->profiled) {
        NodeHeatMap heat;
        for (const auto& node : result->nodes) heat[node.nodeName] = {node.share, node.perRunMs};
        setNodeHeat(heat, HeatMeasure::RunTime);
    } else if (hasHeat() && heatMeasure_ == HeatMeasure::RunTime) {  // a cost colouring stays
        clearHeat();
    }
}

void GraphPage::applyGroupSummaries() {
    if (const auto counted = controller_->cost(); counted->cost)
        scene_->setGroupSummaries(groupCostSummaries(scene_->view(), *counted->cost));
}

void GraphPage::clearHeat() {
    heat_.reset();
    heatMeasure_ = HeatMeasure::RunTime;
    scene_->clearHeat();
    updateHeatLegend();
}

void GraphPage::updateHeatLegend() {
    if (!heat_) {
        heatLegend_->hide();
        return;
    }
    const int coloured = scene_->heatedNodeCount();
    const int unknown = scene_->unknownHeatNodeCount();
    heatLegend_->setMeasure(heatMeasure_);
    heatLegend_->setDims(heatMeasure_ == HeatMeasure::RunTime ? QString()
                                                              : controller_->cost()->dimsText());
    heatLegend_->setScale(scene_->maxHeatShare(), coloured,
                          scene_->view().operatorCount - coloured - unknown,
                          scene_->maxHeatAmount(), unknown);
    heatLegend_->show();
    heatLegend_->raise();
}

}  // namespace onnxlens::widgets
