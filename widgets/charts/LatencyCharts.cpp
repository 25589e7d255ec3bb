#include "widgets/charts/LatencyCharts.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "widgets/charts/AxisLabels.h"

namespace onnxlens::widgets {

namespace {

QChartView* makeChartView(const QString& title, QWidget* parent) {
    auto* chart = new QChart;
    chart->setTitle(title);
    chart->legend()->hide();
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    auto* view = new QChartView(chart, parent);
    view->setRenderHint(QPainter::Antialiasing);
    view->setMinimumSize(280, 190);
    return view;
}

void resetChart(QChart* chart) {
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
}

double percentileOfSorted(const std::vector<double>& sorted, double p) {
    const double rank = p * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(rank);
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace

LatencyCharts::LatencyCharts(QWidget* parent) : QWidget(parent) {
    histogramView_ = makeChartView(tr("Latency histogram"), this);
    timeSeriesView_ = makeChartView(tr("Latency per run"), this);
    histogramView_->setObjectName(QStringLiteral("latencyHistogram"));
    timeSeriesView_->setObjectName(QStringLiteral("latencyTimeSeries"));
    auto* layout = new QHBoxLayout(this);  // side by side: the dock is wide, not tall
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(histogramView_, 1);
    layout->addWidget(timeSeriesView_, 1);
}

LatencyCharts::Histogram LatencyCharts::binSamples(std::vector<double> samples) {
    Histogram h;
    if (samples.empty()) return h;
    std::sort(samples.begin(), samples.end());
    const double lo = samples.front(), hi = samples.back();
    const double n = static_cast<double>(samples.size());
    // Freedman-Diaconis: robust to the few slow outliers every benchmark has.
    const double iqr = percentileOfSorted(samples, 0.75) - percentileOfSorted(samples, 0.25);
    int bins = 10;
    if (iqr > 0) bins = static_cast<int>(std::ceil((hi - lo) / (2 * iqr / std::cbrt(n))));
    bins = std::clamp(bins, 5, 40);
    if (hi <= lo) bins = 1;
    h.firstEdge = lo;
    h.binWidth = hi > lo ? (hi - lo) / bins : 1.0;
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    for (double v : samples) {
        auto b = static_cast<int>((v - lo) / h.binWidth);
        h.counts[static_cast<std::size_t>(std::clamp(b, 0, bins - 1))]++;
    }
    return h;
}

void LatencyCharts::clear() {
    resetChart(histogramView_->chart());
    resetChart(timeSeriesView_->chart());
    binCounts_.clear();
    seriesPoints_ = 0;
}

void LatencyCharts::setSamples(const std::vector<double>& samples,
                               const engine::LatencyStatistics& statistics) {
    clear();
    if (samples.empty()) return;

    const Histogram h = binSamples(samples);
    binCounts_ = h.counts;
    QChart* hist = histogramView_->chart();
    // Drawn as a filled step outline over a numeric ms axis: readable tick labels at any bin
    // count (a bar series would need one category label per bin).
    auto* outline = new QLineSeries;
    auto* base = new QLineSeries;
    int maxCount = 0;
    for (std::size_t b = 0; b < h.counts.size(); ++b) {
        const double left = h.firstEdge + static_cast<double>(b) * h.binWidth;
        outline->append(left, h.counts[b]);
        outline->append(left + h.binWidth, h.counts[b]);
        maxCount = std::max(maxCount, h.counts[b]);
    }
    base->append(h.firstEdge, 0);
    base->append(h.firstEdge + static_cast<double>(h.counts.size()) * h.binWidth, 0);
    auto* bars = new QAreaSeries(outline, base);
    bars->setName(tr("runs"));
    bars->setColor(QColor(0x42, 0x7a, 0xb5));
    bars->setBorderColor(QColor(0x2a, 0x55, 0x85));
    hist->addSeries(bars);
    auto* binAxis = new QValueAxis;
    setValueAxisRange(binAxis, h.firstEdge,
                      h.firstEdge + static_cast<double>(h.counts.size()) * h.binWidth, 6);
    binAxis->setTitleText(tr("ms"));
    auto* countAxis = new QValueAxis;
    setCountAxisRange(countAxis, std::max(1, maxCount));  // whole, evenly spaced counts
    countAxis->setTitleText(tr("runs"));
    hist->addAxis(binAxis, Qt::AlignBottom);
    hist->addAxis(countAxis, Qt::AlignLeft);
    bars->attachAxis(binAxis);
    bars->attachAxis(countAxis);
    hist->setTitle(tr("Latency histogram: median %1 ms, P90 %2 ms")
                       .arg(statistics.medianMs, 0, 'f', 3)
                       .arg(statistics.p90Ms, 0, 'f', 3));

    QChart* series = timeSeriesView_->chart();
    auto* line = new QLineSeries;
    line->setName(tr("run time"));
    for (std::size_t i = 0; i < samples.size(); ++i)
        line->append(static_cast<double>(i + 1), samples[i]);
    seriesPoints_ = static_cast<int>(line->count());
    auto* median = new QLineSeries;
    median->setName(tr("median"));
    median->append(1, statistics.medianMs);
    median->append(static_cast<double>(samples.size()), statistics.medianMs);
    QPen medianPen(QColor(0xe3, 0x1a, 0x1c));
    medianPen.setStyle(Qt::DashLine);
    median->setPen(medianPen);
    series->addSeries(line);
    series->addSeries(median);
    auto* runAxis = new QValueAxis;
    runAxis->setRange(1, std::max<double>(2, static_cast<double>(samples.size())));
    runAxis->setLabelFormat(QStringLiteral("%d"));
    runAxis->applyNiceNumbers();
    runAxis->setTitleText(tr("run"));
    auto* msAxis = new QValueAxis;
    const double pad = std::max(1e-3, (statistics.maxMs - statistics.minMs) * 0.08);
    msAxis->setRange(std::max(0.0, statistics.minMs - pad), statistics.maxMs + pad);
    msAxis->setTitleText(tr("ms"));
    series->addAxis(runAxis, Qt::AlignBottom);
    series->addAxis(msAxis, Qt::AlignLeft);
    for (auto* s : {line, median}) {
        s->attachAxis(runAxis);
        s->attachAxis(msAxis);
    }
    series->legend()->show();
    series->legend()->setAlignment(Qt::AlignTop);
}

}  // namespace onnxlens::widgets
