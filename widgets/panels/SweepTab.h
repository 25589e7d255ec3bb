#pragma once
// The Benchmark dock's Sweep tab: the symbolic dims to sweep and their values
// ("batch=1,2,4,8 sequence=64,128", remembered), Start / Cancel with progress, and per shape the
// median, P90 and min latency and the items per second, in a table and a chart, all from one
// compiled session (SweepWorker). The warm-up runs, counted runs and threads are the dock's.
#include <QWidget>
#include <functional>
#include <memory>
#include <vector>

#include "onnxlens/workflows/ShapeSweep.h"
#include "widgets/workers/ModelDocument.h"

class QChartView;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace onnxlens::widgets {

class SweepWorker;

class SweepTab : public QWidget {
    Q_OBJECT
  public:
    struct RunSettings {
        int warmupRuns = 2, runs = 10, threads = 0;
    };

    explicit SweepTab(QWidget* parent = nullptr);
    ~SweepTab() override;

    // The model to sweep (nullptr: none open); its symbolic dims fill the hint and, when the
    // field is empty, a first suggestion.
    void setDocument(std::shared_ptr<const ModelDocument> document);
    // Asked at each start for the dock's warm-up runs, counted runs and threads.
    void setRunSettingsSource(std::function<RunSettings()> source) {
        settingsSource_ = std::move(source);
    }

    void start();
    void cancel();
    bool isRunning() const;

    QLineEdit* axesEdit() const { return axes_; }
    QTableWidget* table() const { return table_; }
    QChartView* chart() const { return chart_; }
    QProgressBar* progressBar() const { return progress_; }
    QString statusText() const;
    const std::vector<engine::SweepPoint>& points() const { return points_; }

    // "batch=1,2,4 sequence=8,16" -> axes; an error message (empty when it parses).
    static QString parseAxes(const QString& text, std::vector<engine::SweepAxis>& axes);

  signals:
    void finished();
    void failed(const QString& message);
    void cancelled();

  private:
    void addPoint(const engine::SweepPoint& point);
    void rebuildChart();
    void updateActions();

    SweepWorker* worker_;
    std::shared_ptr<const ModelDocument> document_;
    std::function<RunSettings()> settingsSource_;
    std::vector<engine::SweepPoint> points_;
    QLineEdit* axes_;
    QLabel* symbols_;
    QPushButton* startButton_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QTableWidget* table_;
    QChartView* chart_;
};

}  // namespace onnxlens::widgets
