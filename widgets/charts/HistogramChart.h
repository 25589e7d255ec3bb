#pragma once
// A histogram (engine::Histogram) drawn as a Qt Charts bar chart: the Run panel's output values
// and the Compare panel's absolute errors.
#include <QString>

#include "onnxlens/workflows/TensorStatistics.h"

class QChart;

namespace onnxlens::widgets {

// A new chart (the caller hands it to a QChartView, which takes ownership). An empty histogram
// gives a chart with only the title and `emptyText` as its subtitle.
QChart* makeHistogramChart(const engine::Histogram& histogram, const QString& title,
                           const QString& axisTitle, const QString& emptyText);

}  // namespace onnxlens::widgets
