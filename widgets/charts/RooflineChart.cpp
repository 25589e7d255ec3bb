#include "widgets/charts/RooflineChart.h"

#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>

namespace onnxlens::widgets {

namespace {
// Distinct hues that read on white, one per frequent op type.
const QColor kSeriesColours[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                 QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                 QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                 QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};

// The power of ten at or below / above v, so that the log axes end on labelled ticks.
double decadeBelow(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decadeAbove(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }
}  // namespace

RooflineChart::RooflineChart(QWidget* parent) : QWidget(parent) {
    auto* chart = new QChart;
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignRight);
    view_ = new QChartView(chart, this);
    view_->setObjectName(QStringLiteral("rooflineChart"));
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumSize(320, 200);
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(caption_);
    layout->addWidget(view_, 1);
    clear();
}

QString RooflineChart::caption() const { return caption_->text(); }

int RooflineChart::pointCount() const {
    int n = 0;
    for (const auto& s : series_) n += static_cast<int>(s.points.size());
    return n;
}

void RooflineChart::clear(const QString& message) {
    QChart* chart = view_->chart();
    chart->removeAllSeries();
    for (auto* axis : chart->axes()) {
        chart->removeAxis(axis);
        delete axis;
    }
    series_.clear();
    chart->setTitle(QString());
    caption_->setText(message.isEmpty() ? tr("Run a benchmark with “Profile operators” on to see "
                                             "each node against the processor's roofs.")
                                        : message);
}

QString RooflineChart::pointText(const Point& p) const {
    return tr("%1 (%2)\n%3 GFLOP/s achieved, %4 % of the peak\n%5 FLOPs/byte, %6 ms per run")
        .arg(p.node, p.opType)
        .arg(p.gflops, 0, 'f', 2)
        .arg(100.0 * p.peakShare, 0, 'f', 1)
        .arg(p.intensity, 0, 'g', 3)
        .arg(p.ms, 0, 'f', 3);
}

void RooflineChart::setAnalysis(const RooflineAnalysis& analysis) {
    clear();
    // Points need a positive position on both log axes: nodes without arithmetic are left out.
    std::vector<Point> points;
    for (const auto& r : analysis.rates)
        if (r.flops > 0 && r.gflops > 0 && r.intensity > 0)
            points.push_back({QString::fromStdString(r.nodeName), QString::fromStdString(r.opType),
                              r.intensity, r.gflops, r.perRunMs, r.peakShare});
    if (points.empty()) {
        clear(analysis.error.isEmpty() ? tr("No profiled node has FLOPs the cost model counted.")
                                       : tr("No roofline: %1").arg(analysis.error));
        return;
    }
    // The op types with the most time get a colour each, in order of time.
    std::map<QString, double> timeByType;
    for (const auto& p : points) timeByType[p.opType] += p.ms;
    std::vector<std::pair<double, QString>> types;
    for (const auto& [type, ms] : timeByType) types.emplace_back(ms, type);
    std::sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a > b; });
    std::map<QString, std::size_t> seriesOf;
    auto addSeries = [this](const QString& name, QColor colour) {
        SeriesPoints s;
        s.series = new QScatterSeries;
        s.series->setName(name);
        s.series->setColor(colour);
        s.series->setBorderColor(colour.darker(140));
        s.series->setMarkerSize(9);
        series_.push_back(s);
        return series_.size() - 1;
    };
    std::size_t other = 0;
    for (std::size_t i = 0; i < types.size(); ++i) {
        if (i < kOpTypeSeries) {
            seriesOf[types[i].second] = addSeries(types[i].second, kSeriesColours[i]);
            continue;
        }
        if (i == kOpTypeSeries) other = addSeries(tr("other"), kSeriesColours[kOpTypeSeries]);
        seriesOf[types[i].second] = other;
    }
    double xMin = 1e30, xMax = 0, yMin = 1e30, yMax = 0;
    for (const auto& p : points) {
        auto& s = series_[seriesOf[p.opType]];
        s.series->append(p.intensity, p.gflops);
        s.points.push_back(p);
        xMin = std::min(xMin, p.intensity);
        xMax = std::max(xMax, p.intensity);
        yMin = std::min(yMin, p.gflops);
        yMax = std::max(yMax, p.gflops);
    }
    const double peak = analysis.peak.gflops;
    const double bandwidth = analysis.bandwidth.gbPerSecond;
    const double ridge = analysis.ridgeIntensity();
    if (peak > 0) yMax = std::max(yMax, peak);
    if (ridge > 0) {
        xMin = std::min(xMin, ridge);
        xMax = std::max(xMax, ridge);
    }
    xMin = decadeBelow(xMin * 0.9);
    xMax = decadeAbove(xMax * 1.1);
    yMin = decadeBelow(yMin * 0.9);
    yMax = decadeAbove(yMax * 1.1);
    if (bandwidth > 0) yMin = std::min(yMin, decadeBelow(bandwidth * xMin));

    QChart* chart = view_->chart();
    auto* xAxis = new QLogValueAxis;
    xAxis->setBase(10);
    xAxis->setLabelFormat(QStringLiteral("%g"));
    xAxis->setTitleText(tr("arithmetic intensity (FLOPs per byte moved)"));
    xAxis->setRange(xMin, xMax);
    xAxis->setMinorTickCount(-1);
    auto* yAxis = new QLogValueAxis;
    yAxis->setBase(10);
    yAxis->setLabelFormat(QStringLiteral("%g"));
    yAxis->setTitleText(tr("achieved GFLOP/s"));
    yAxis->setRange(yMin, yMax);
    yAxis->setMinorTickCount(-1);
    chart->addAxis(xAxis, Qt::AlignBottom);
    chart->addAxis(yAxis, Qt::AlignLeft);
    auto addRoof = [&](const QString& name, QColor colour, Qt::PenStyle style,
                       std::vector<QPointF> line) {
        auto* roof = new QLineSeries;
        roof->setName(name);
        QPen pen(colour, 2, style);
        roof->setPen(pen);
        for (const auto& p : line) roof->append(p);
        chart->addSeries(roof);
        roof->attachAxis(xAxis);
        roof->attachAxis(yAxis);
    };
    if (bandwidth > 0 && peak > 0) {
        addRoof(tr("memory roof %1 GB/s").arg(bandwidth, 0, 'f', 1), QColor(0x44, 0x44, 0x44),
                Qt::DashLine, {{xMin, bandwidth * xMin}, {ridge, peak}});
        addRoof(tr("compute roof %1 GFLOP/s").arg(peak, 0, 'f', 1), QColor(0x22, 0x22, 0x22),
                Qt::SolidLine, {{ridge, peak}, {xMax, peak}});
    } else if (peak > 0) {
        addRoof(tr("compute roof %1 GFLOP/s").arg(peak, 0, 'f', 1), QColor(0x22, 0x22, 0x22),
                Qt::SolidLine, {{xMin, peak}, {xMax, peak}});
    }
    for (auto& s : series_) {
        chart->addSeries(s.series);
        s.series->attachAxis(xAxis);
        s.series->attachAxis(yAxis);
        QScatterSeries* series = s.series;
        connect(series, &QScatterSeries::clicked, this, [this, series](const QPointF& p) {
            const QString node = nodeAt(series, p);
            if (!node.isEmpty()) emit nodeActivated(node);
        });
        connect(series, &QScatterSeries::hovered, this,
                [this, series](const QPointF& p, bool entered) {
                    if (!entered) {
                        QToolTip::hideText();
                        return;
                    }
                    for (const auto& sp : series_)
                        if (sp.series == series)
                            for (const auto& point : sp.points)
                                if (point.node == nodeAt(series, p)) {
                                    QToolTip::showText(QCursor::pos(), pointText(point), view_);
                                    return;
                                }
                });
    }
    chart->setTitle(tr("Roofline at %n thread(s)", nullptr, analysis.peak.threads));
    QString text = tr("%n node(s) with counted FLOPs; click a point to show the node.", nullptr,
                      static_cast<int>(points.size()));
    if (peak > 0)
        text += QLatin1Char(' ') +
                tr("Compute roof: %1.").arg(QString::fromStdString(analysis.peak.method));
    if (bandwidth > 0)
        text += QLatin1Char(' ') +
                tr("Memory roof: %1.").arg(QString::fromStdString(analysis.bandwidth.method));
    if (!analysis.error.isEmpty()) text += QLatin1Char(' ') + analysis.error;
    caption_->setText(text);
}

QString RooflineChart::nodeAt(const QScatterSeries* series, QPointF p) const {
    for (const auto& s : series_) {
        if (s.series != series) continue;
        // Nearest in log space: the click gives the point's own coordinates, the nearest is it.
        double best = 1e300;
        const Point* hit = nullptr;
        for (const auto& point : s.points) {
            const double dx = std::log10(point.intensity) - std::log10(std::max(p.x(), 1e-300));
            const double dy = std::log10(point.gflops) - std::log10(std::max(p.y(), 1e-300));
            if (dx * dx + dy * dy < best) {
                best = dx * dx + dy * dy;
                hit = &point;
            }
        }
        return hit ? hit->node : QString();
    }
    return {};
}

QPoint RooflineChart::pointPosition(const QString& nodeName) const {
    for (const auto& s : series_)
        for (const auto& point : s.points)
            if (point.node == nodeName) {
                const QPointF inChart =
                    view_->chart()->mapToPosition(QPointF(point.intensity, point.gflops), s.series);
                return view_->mapFromScene(view_->chart()->mapToScene(inChart));
            }
    return {};
}

}  // namespace onnxlens::widgets
