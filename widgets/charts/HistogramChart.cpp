#include "widgets/charts/HistogramChart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QValueAxis>

#include "widgets/charts/AxisLabels.h"

namespace onnxlens::widgets {

QChart* makeHistogramChart(const engine::Histogram& histogram, const QString& title,
                           const QString& axisTitle, const QString& emptyText) {
    auto* chart = new QChart;
    chart->legend()->hide();
    chart->setMargins(QMargins(2, 2, 2, 2));
    if (histogram.counts.empty()) {
        chart->setTitle(title + QStringLiteral(" — ") + emptyText);
        return chart;
    }
    chart->setTitle(title);
    auto* bars = new QBarSet(axisTitle);
    QStringList bins;
    std::int64_t tallest = 0;
    for (std::size_t bin = 0; bin < histogram.counts.size(); ++bin) {
        bars->append(static_cast<qreal>(histogram.counts[bin]));
        tallest = std::max(tallest, histogram.counts[bin]);
        bins << QString::number(bin);
    }
    auto* series = new QBarSeries;
    series->setBarWidth(0.95);
    series->append(bars);
    chart->addSeries(series);
    // The bars sit on a hidden category axis; a value axis over the same width shows the
    // histogram's range, which stays readable however many bins there are.
    auto* binAxis = new QBarCategoryAxis;
    binAxis->append(bins);
    binAxis->setVisible(false);
    auto* rangeAxis = new QValueAxis;
    setValueAxisRange(rangeAxis, histogram.low,
                      histogram.high > histogram.low ? histogram.high : histogram.low + 1);
    rangeAxis->setTitleText(axisTitle);
    auto* countAxis = new QValueAxis;
    // Two intervals: the chart may be given little height (the Compare dock's error histogram,
    // 150 px with every dock open), where more count labels overlap and are drawn as "...".
    setCountAxisRange(countAxis, static_cast<double>(std::max<std::int64_t>(tallest, 1)), 2);
    countAxis->setTitleText(QObject::tr("count"));
    chart->addAxis(binAxis, Qt::AlignBottom);
    chart->addAxis(rangeAxis, Qt::AlignBottom);
    chart->addAxis(countAxis, Qt::AlignLeft);
    series->attachAxis(binAxis);
    series->attachAxis(countAxis);
    return chart;
}

}  // namespace onnxlens::widgets
