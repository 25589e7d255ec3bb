#include "widgets/graph/HeatLegend.h"

#include <QLinearGradient>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cmath>

#include "widgets/graph/CostText.h"

namespace onnxlens::widgets {

QColor heatColour(double fraction) {
    // A sequential yellow-orange-red scale: lightness falls with heat, so it also reads in grey.
    static const std::array<QColor, 5> stops = {QColor(0xff, 0xf7, 0xbc), QColor(0xfe, 0xd9, 0x76),
                                                QColor(0xfd, 0x8d, 0x3c), QColor(0xe3, 0x1a, 0x1c),
                                                QColor(0x80, 0x00, 0x26)};
    if (!std::isfinite(fraction)) fraction = 0;
    const double t = std::clamp(fraction, 0.0, 1.0) * (stops.size() - 1);
    const auto lo = std::min(static_cast<std::size_t>(t), stops.size() - 2);
    const double f = t - static_cast<double>(lo);
    const QColor& a = stops[lo];
    const QColor& b = stops[lo + 1];
    auto mix = [f](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * f)); };
    return QColor(mix(a.red(), b.red()), mix(a.green(), b.green()), mix(a.blue(), b.blue()));
}

QString heatMeasureTitle(HeatMeasure measure) {
    switch (measure) {
        case HeatMeasure::RunTime:
            break;
        case HeatMeasure::Flops:
            return QObject::tr("FLOPs per box (cost model)");
        case HeatMeasure::Parameters:
            return QObject::tr("Parameters per box (cost model)");
        case HeatMeasure::Memory:
            return QObject::tr("Bytes moved per box (cost model)");
    }
    return QObject::tr("Share of run time per box");
}

QString heatAmountShort(HeatMeasure measure, double amount) {
    switch (measure) {
        case HeatMeasure::RunTime:
            break;
        case HeatMeasure::Flops:
            return siAmount(amount, QStringLiteral("FLOPs"));
        case HeatMeasure::Parameters:
            return siAmount(amount, QObject::tr("params"));
        case HeatMeasure::Memory:
            return byteSize(amount);
    }
    return QObject::tr("%1 ms").arg(amount, 0, 'f', 3);
}

QString heatAmountText(HeatMeasure measure, double amount, double share) {
    if (measure == HeatMeasure::RunTime)
        return QObject::tr("%1 ms per run, %2 % of the profiled time")
            .arg(amount, 0, 'f', 3)
            .arg(100.0 * share, 0, 'f', 1);
    const QString what = measure == HeatMeasure::Memory ? QObject::tr(
                                                              " (activations read and "
                                                              "written, weights)")
                                                        : QString();
    return QObject::tr("%1%2, %3 % of the model's")
        .arg(heatAmountShort(measure, amount), what)
        .arg(100.0 * share, 0, 'f', 1);
}

QString heatNotCoveredText(HeatMeasure measure) {
    switch (measure) {
        case HeatMeasure::RunTime:
            break;
        case HeatMeasure::Flops:
            return QObject::tr(
                "no FLOPs counted (data movement, inside a subgraph, or made by "
                "the optimizer)");
        case HeatMeasure::Parameters:
            return QObject::tr("reads no weights (or inside a subgraph, or made by the optimizer)");
        case HeatMeasure::Memory:
            return QObject::tr("not counted (inside a subgraph, or made by the optimizer)");
    }
    return QObject::tr("not in the profile (fused by the optimizer, or inside a subgraph)");
}

QString heatUnknownText(HeatMeasure measure, double countedAmount) {
    if (countedAmount > 0)
        return QObject::tr("at least %1: a shape the count needs is unknown")
            .arg(heatAmountShort(measure, countedAmount));
    return QObject::tr("%1 unknown: a shape the count needs is unknown")
        .arg(measure == HeatMeasure::Flops ? QObject::tr("FLOPs") : QObject::tr("bytes moved"));
}

HeatLegend::HeatLegend(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setObjectName(QStringLiteral("heatLegend"));
    setFixedSize(sizeHint());
}

void HeatLegend::setMeasure(HeatMeasure measure) {
    measure_ = measure;
    setFixedSize(sizeHint());
    update();
}

void HeatLegend::setDims(const QString& dims) {
    dims_ = dims;
    setFixedSize(sizeHint());
    update();
}

void HeatLegend::setScale(double maxShare, int profiledNodes, int notProfiledNodes,
                          double maxAmount, int unknownNodes) {
    unknown_ = unknownNodes;
    maxShare_ = maxShare;
    maxAmount_ = maxAmount;
    profiled_ = profiledNodes;
    notProfiled_ = notProfiledNodes;
    setToolTip(caption());
    update();
}

QString HeatLegend::caption() const {
    QString text = tr("%n node(s) coloured", nullptr, profiled_);
    if (unknown_ > 0) text += tr(", %n unknown (hatched)", nullptr, unknown_);
    if (notProfiled_ > 0)
        text += measure_ == HeatMeasure::RunTime
                    ? tr(", %n not in the profile", nullptr, notProfiled_)
                    : tr(", %n with none", nullptr, notProfiled_);
    return text;
}

QSize HeatLegend::sizeHint() const {
    // Wide enough for the title and for the caption of a large model.
    const QFontMetrics fm(font());
    const int text =
        std::max(fm.horizontalAdvance(title()),
                 fm.horizontalAdvance(tr("%1 node(s) coloured, %2 unknown (hatched), %3 with none")
                                          .arg(88888)
                                          .arg(8888)
                                          .arg(8888)));
    return QSize(std::max(230, text + 16), fm.height() * 4 + 22);
}

QString HeatLegend::title() const {
    if (dims_.isEmpty() || measure_ == HeatMeasure::RunTime) return heatMeasureTitle(measure_);
    return tr("%1 at %2").arg(heatMeasureTitle(measure_), dims_);
}

void paintColourScaleLegend(QWidget& widget, const QString& title,
                            const std::function<QColor(double)>& colourAt, const QString& low,
                            const QString& high, const QString& greyLabel, const QString& caption) {
    QPainter p(&widget);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QColor(0x99, 0x99, 0x99));
    p.setBrush(QColor(255, 255, 255, 230));
    p.drawRoundedRect(QRectF(widget.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4);
    const QFontMetrics fm(widget.font());
    const int margin = 8;
    const int line = fm.height();
    const int width = widget.width();
    p.setPen(Qt::black);
    p.drawText(QRect(margin, 4, width - 2 * margin, line), Qt::AlignLeft | Qt::AlignVCenter, title);
    const QRect bar(margin, 4 + line + 3, width - 2 * margin - 40, line);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i) gradient.setColorAt(i / 8.0, colourAt(i / 8.0));
    p.setPen(QColor(0x60, 0x60, 0x60));
    p.setBrush(gradient);
    p.drawRect(bar);
    const QRect grey(bar.right() + 10, bar.top(), 30, line);
    p.setBrush(kNotProfiledColour);
    p.drawRect(grey);
    p.setPen(Qt::black);
    const int labels = bar.bottom() + 2;
    p.drawText(QRect(bar.left(), labels, bar.width(), line), Qt::AlignLeft | Qt::AlignVCenter, low);
    p.drawText(QRect(bar.left(), labels, bar.width(), line), Qt::AlignRight | Qt::AlignVCenter,
               high);
    p.drawText(QRect(grey.left() - 6, labels, grey.width() + 12, line), Qt::AlignCenter, greyLabel);
    p.setPen(QColor(0x44, 0x44, 0x44));
    p.drawText(QRect(margin, labels + line + 2, width - 2 * margin, line),
               Qt::AlignLeft | Qt::AlignVCenter, caption);
}

void HeatLegend::paintEvent(QPaintEvent*) {
    // The time overlay's end reads as a share; a cost's as the hottest box's amount and share.
    const QString high = measure_ == HeatMeasure::RunTime
                             ? QStringLiteral("%1 %").arg(100.0 * maxShare_, 0, 'f', 1)
                             : QStringLiteral("%1 (%2 %)")
                                   .arg(heatAmountShort(measure_, maxAmount_))
                                   .arg(100.0 * maxShare_, 0, 'f', 1);
    paintColourScaleLegend(
        *this, title(), heatColour,
        measure_ == HeatMeasure::RunTime ? QStringLiteral("0 %") : QStringLiteral("0"), high,
        tr("none"), caption());
}

}  // namespace onnxlens::widgets
