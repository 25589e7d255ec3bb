#pragma once
// The latency of a benchmark's counted runs, drawn two ways (Qt Charts): a histogram of the
// samples, with the median and P90 marked, and the time series in run order, where warm-up
// effects, drift and periodic stalls (another process, frequency scaling) show.
#include <QWidget>
#include <vector>

#include "onnxlens/workflows/LatencyStatistics.h"
#include "onnxlens/workflows/TensorStatistics.h"

class QChart;
class QChartView;

namespace onnxlens::widgets {

class LatencyCharts : public QWidget {
    Q_OBJECT
  public:
    explicit LatencyCharts(QWidget* parent = nullptr);

    void setSamples(const std::vector<double>& samplesMs,
                    const engine::LatencyStatistics& statistics);
    void clear();

    // What is drawn, for tests: the histogram's bin counts and the number of time-series points.
    const std::vector<int>& histogramCounts() const { return binCounts_; }
    int timeSeriesPoints() const { return seriesPoints_; }
    QChartView* histogramView() const { return histogramView_; }
    QChartView* timeSeriesView() const { return timeSeriesView_; }

    // Bins for `samples` (Freedman-Diaconis width, 5 to 40 bins): counts and the lower edge and
    // width of the first bin.
    struct Histogram {
        std::vector<int> counts;
        double firstEdge = 0, binWidth = 0;
    };
    static Histogram binSamples(std::vector<double> samplesMs);

  private:
    QChartView* histogramView_;
    QChartView* timeSeriesView_;
    std::vector<int> binCounts_;
    int seriesPoints_ = 0;
};

}  // namespace onnxlens::widgets
