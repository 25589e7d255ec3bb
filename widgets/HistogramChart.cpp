#include "widgets/HistogramChart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QValueAxis>

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
    QStringList binCentres;
    std::int64_t tallest = 0;
    for (std::size_t bin = 0; bin < histogram.counts.size(); ++bin) {
        bars->append(static_cast<qreal>(histogram.counts[bin]));
        tallest = std::max(tallest, histogram.counts[bin]);
        // Every fourth label keeps 40 bins readable in a dock.
        const double centre =
            histogram.low + histogram.binWidth() * (static_cast<double>(bin) + 0.5);
        binCentres << (bin % 4 == 0 ? QString::number(centre, 'g', 3)
                                    : QString(bin, QLatin1Char(' ')));
    }
    auto* series = new QBarSeries;
    series->setBarWidth(0.95);
    series->append(bars);
    chart->addSeries(series);
    auto* xAxis = new QBarCategoryAxis;
    xAxis->append(binCentres);
    xAxis->setTitleText(axisTitle);
    xAxis->setLabelsAngle(-60);
    auto* yAxis = new QValueAxis;
    yAxis->setRange(0, static_cast<qreal>(std::max<std::int64_t>(tallest, 1)));
    yAxis->setLabelFormat(QStringLiteral("%d"));
    yAxis->setTitleText(QObject::tr("count"));
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    series->attachAxis(xAxis);
    series->attachAxis(yAxis);
    return chart;
}

}  // namespace onnxlens::widgets
