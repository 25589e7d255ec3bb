#pragma once
// The Run dock's outputs after a run: each output's dtype, shape and statistics (a row each), and
// for the chosen row its histogram, its first values and, for 2-D logits, the top 5 classes.
#include <QWidget>
#include <memory>

#include "widgets/workers/EngineWorker.h"

class QChartView;
class QTabWidget;
class QTableWidget;

namespace onnxlens::widgets {

class RunOutputsView : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kValueRows = 1000;  // values shown per output in the value view

    explicit RunOutputsView(QWidget* parent = nullptr);

    void show(const std::shared_ptr<const RunOutcome>& outcome);
    void clear();
    void showOutput(int index);

    QTableWidget* outputsTable() const { return outputs_; }
    QTableWidget* valuesTable() const { return values_; }
    QTableWidget* topTable() const { return top_; }
    QChartView* histogramView() const { return histogram_; }
    QTabWidget* outputTabs() const { return outputTabs_; }

  private:
    void showMapEntries(const engine::Value& value);

    std::shared_ptr<const RunOutcome> outcome_;
    QTableWidget* outputs_;
    QTabWidget* outputTabs_;
    QTableWidget* values_;
    QChartView* histogram_;
    QTableWidget* top_;
};

}  // namespace onnxlens::widgets
