#pragma once
// The per-operator profile of a benchmark: sortable tables per op type and per node (time per
// run, share of the profiled time), a bar chart of the op types' shares, and a filter for the
// node table, with each node's achieved GFLOP/s and share of the processor's peak once measured.
// Activating a node row asks for that node to be shown in the graph.
#include <QWidget>
#include <memory>

#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/Roofline.h"

class QChartView;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace onnxlens::widgets {

class ProfileTableModel;

class ProfileView : public QWidget {
    Q_OBJECT
  public:
    explicit ProfileView(QWidget* parent = nullptr);

    void setResult(std::shared_ptr<const engine::BenchmarkResult> result);
    // The achieved GFLOP/s and share of the peak per node and op type, and the peak's method.
    void setRates(const std::vector<engine::NodeRate>& rates, const engine::PeakThroughput& peak);
    void clear();

    QTableView* nodeTable() const { return nodeTable_; }
    QTableView* opTypeTable() const { return opTypeTable_; }
    QSortFilterProxyModel* nodeProxy() const { return nodeProxy_; }
    QSortFilterProxyModel* opTypeProxy() const { return opTypeProxy_; }
    QChartView* barChart() const { return barChart_; }
    QLabel* peakLabel() const { return peak_; }
    ProfileTableModel* nodeModel() const { return nodeModel_; }
    ProfileTableModel* opTypeModel() const { return opTypeModel_; }
    int barCount() const { return barCount_; }  // op types drawn in the bar chart
    void setNodeFilter(const QString& text);

    static constexpr int kMaxBars = 12;     // the rest is one "other" bar
    static constexpr int kLabelChars = 24;  // a longer op type is elided in the middle
    static QString elidedOpType(const std::string& opType);
    // Bars (with the "other" bar) that the chart's height has a text line of room for.
    int barsThatFit() const;

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  signals:
    void nodeActivated(const QString& profileName);

  private:
    QTableView* makeTable(QSortFilterProxyModel* proxy);
    void rebuildBarChart();

    std::shared_ptr<const engine::BenchmarkResult> result_;
    QTabWidget* tabs_;
    QLabel* summary_;
    QLabel* peak_;
    ProfileTableModel* nodeModel_;
    ProfileTableModel* opTypeModel_;
    QSortFilterProxyModel* nodeProxy_;
    QSortFilterProxyModel* opTypeProxy_;
    QTableView* nodeTable_;
    QTableView* opTypeTable_;
    QLineEdit* filter_;
    QChartView* barChart_;
    int barCount_ = 0;
    int barRoom_ = 0;  // barsThatFit() when the chart was built
};

}  // namespace onnxlens::widgets
