#pragma once
// The Benchmark dock: warm-up runs, counted runs and intra-op threads (remembered), Start and
// Cancel with progress; then the latency statistics, a histogram and the per-run series, the
// per-operator profile, the heat overlay on the graph, and exports (the profile as Chrome trace
// JSON, the whole result as JSON and Markdown), the roofline of a profiled run (achieved GFLOP/s
// per node against the measured roofs), the Sweep tab (latency per shape) and the Decode tab
// (a decoder's tokens per second, DecodePanel). The benchmark runs
// on the tab's ModelController, on its one compiled session, with the input choices of the Run
// dock it holds; the roofline analysis on a QtConcurrent thread. The dock observes the controller
// and knows no graph: the pages colour themselves (GraphPage::setRunTimeHeatShown, following
// heatAction()) and the main window reveals the nodes it names (nodeActivated).
#include <QHash>
#include <QPointer>
#include <QWidget>
#include <memory>
#include <vector>

#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/LatencyStatistics.h"
#include "widgets/graph/GraphScene.h"
#include "widgets/workers/ModelController.h"

class QAction;
class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;

namespace onnxlens::widgets {

class DecodePanel;
class LatencyCharts;
class ProfileView;
class RooflineChart;
class SweepTab;
struct RooflineAnalysis;

class BenchmarkPanel : public QWidget {
    Q_OBJECT
  public:
    explicit BenchmarkPanel(QWidget* parent = nullptr);
    ~BenchmarkPanel() override;

    // The model to benchmark (the current tab's controller); nullptr: none open.
    void setController(ModelController* controller);
    ModelController* controller() const { return controller_; }
    // Where the inputs come from (called on the engine thread), used as is; empty (the default):
    // the Run dock's input choices the controller holds, else seeded random data with every
    // symbolic dim 1.
    void setFeedsProvider(BenchmarkFeeds provider) { feeds_ = std::move(provider); }

    void start();
    void cancel();
    bool isRunning() const { return !runningController_.isNull(); }
    // The last result of the current model (nullptr before its first benchmark).
    std::shared_ptr<const engine::BenchmarkResult> result() const;

    // Checkable (remembered): colour the graphs by each node's share of the profiled time.
    QAction* heatAction() const { return heatAction_; }
    QAction* startAction() const { return startAction_; }
    QAction* cancelAction() const { return cancelAction_; }

    // Exports of the current result; an empty string on success, else the error.
    QString exportTrace(const QString& path) const;
    QString exportJson(const QString& path) const;
    QString exportMarkdown(const QString& path) const;

    // For tests and the main window.
    QSpinBox* warmupSpin() const { return warmup_; }
    QSpinBox* runsSpin() const { return runs_; }
    QSpinBox* threadsSpin() const { return threads_; }
    QCheckBox* profileCheck() const { return profile_; }
    QTableWidget* statisticsTable() const { return statistics_; }
    LatencyCharts* charts() const { return charts_; }
    ProfileView* profileView() const { return profileView_; }
    QProgressBar* progressBar() const { return progress_; }
    QTabWidget* resultTabs() const { return tabs_; }  // Latency, Profile, Roofline, Sweep, Decode
    RooflineChart* rooflineChart() const { return roofline_; }
    SweepTab* sweepTab() const { return sweepTab_; }
    DecodePanel* decodePanel() const { return decodePanel_; }
    // The roofline analysis of the current model's result (nullptr until it is in).
    std::shared_ptr<const RooflineAnalysis> roofline() const;
    QString statusText() const;
    void showStatus(const QString& text);

    // Warm-up, runs, threads and profiling as remembered in QSettings (the Settings dialog).
    void reloadSettings();

  signals:
    void started();
    void finished();
    void failed(const QString& message);
    void cancelled();
    void rooflineReady();  // the analysis of a finished profiled benchmark is in
    // A node picked in the profile table or the roofline (its profile name, profileNameOf).
    void nodeActivated(const QString& profileName);

  private:
    void startRoofline(ModelController* controller,
                       std::shared_ptr<const engine::BenchmarkResult> result);
    void showRoofline();
    void onFinished(std::shared_ptr<const engine::BenchmarkResult> result);
    void onEnded(const QString& status);  // failed or cancelled
    void showResult(std::shared_ptr<const engine::BenchmarkResult> result);
    void updateActions();
    void saveSettings() const;
    void chooseAndExport(const QString& kind);

    BenchmarkFeeds feeds_;
    QPointer<ModelController> controller_;
    std::vector<QMetaObject::Connection> controllerConnections_;  // to controller_, not a run's
    QPointer<ModelController> runningController_;
    QSpinBox* warmup_;
    QSpinBox* runs_;
    QSpinBox* threads_;
    QCheckBox* profile_;
    QCheckBox* heatCheck_;
    QPushButton* startButton_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QTabWidget* tabs_;
    QTableWidget* statistics_;
    LatencyCharts* charts_;
    ProfileView* profileView_;
    RooflineChart* roofline_;
    SweepTab* sweepTab_;
    DecodePanel* decodePanel_;
    QHash<const ModelController*, std::shared_ptr<const RooflineAnalysis>> rooflines_;
    QPushButton* exportTrace_;
    QPushButton* exportJson_;
    QPushButton* exportMarkdown_;
    QAction* heatAction_;
    QAction* startAction_;
    QAction* cancelAction_;
};

}  // namespace onnxlens::widgets
