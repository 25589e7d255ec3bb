#pragma once
// The roofline of a profiled benchmark (Qt Charts, log-log): every node the cost model counted
// as a point at its arithmetic intensity (FLOPs per byte moved) and achieved GFLOP/s, coloured
// by op type, under the two roofs measured on this machine at the benchmark's thread count: the
// memory roof (bandwidth x intensity) and the compute roof (the GEMM peak), meeting at the ridge.
// A point's tooltip names the node; clicking it asks for the node in the graph.
#include <QString>
#include <QWidget>
#include <vector>

#include "widgets/workers/RooflineAnalysis.h"

class QChartView;
class QLabel;
class QScatterSeries;

namespace onnxlens::widgets {

class RooflineChart : public QWidget {
    Q_OBJECT
  public:
    explicit RooflineChart(QWidget* parent = nullptr);

    void setAnalysis(const RooflineAnalysis& analysis);
    // `message` in place of the chart ("measuring the roofs…", "run with Profile operators").
    void clear(const QString& message = {});

    QChartView* chartView() const { return view_; }
    QString caption() const;
    int pointCount() const;
    // Where a node's point is drawn, in the chart view's viewport coordinates (tests, and
    // keyboard users through the node table); invalid when the node is not drawn.
    QPoint pointPosition(const QString& nodeName) const;
    // The node whose point is nearest to `pointInSeries` of `series` (what a click on it hit).
    QString nodeAt(const QScatterSeries* series, QPointF pointInSeries) const;

    static constexpr int kOpTypeSeries =
        7;  // op types with a colour of their own; the rest "other"

  signals:
    void nodeActivated(const QString& profileName);

  private:
    struct Point {
        QString node, opType;
        double intensity = 0, gflops = 0, ms = 0, peakShare = 0;
    };
    struct SeriesPoints {
        QScatterSeries* series = nullptr;
        std::vector<Point> points;
    };
    QString pointText(const Point& point) const;

    QChartView* view_;
    QLabel* caption_;
    std::vector<SeriesPoints> series_;
};

}  // namespace onnxlens::widgets
