#include "widgets/graph/QuantizationLegend.h"

#include <algorithm>
#include <cmath>

#include "widgets/graph/HeatLegend.h"

namespace onnxlens::widgets {

QColor sqnrColour(double db) {
    // Hue from red (weak) through yellow to green (close to float); infinite SQNR is green.
    const double t =
        std::isnan(db) ? 0.0 : std::clamp((db - kSqnrLowDb) / (kSqnrHighDb - kSqnrLowDb), 0.0, 1.0);
    return QColor::fromHsvF(static_cast<float>(t / 3.0), 0.75f, 0.92f);
}

QuantizationLegend::QuantizationLegend(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setObjectName(QStringLiteral("quantizationLegend"));
    setFixedSize(sizeHint());
}

void QuantizationLegend::setSummary(int colouredNodes, double weakestDb, int otherNodes) {
    coloured_ = colouredNodes;
    weakestDb_ = weakestDb;
    others_ = otherNodes;
    setToolTip(caption());
    update();
}

void QuantizationLegend::setComparisonMode(bool comparison) {
    comparison_ = comparison;
    setFixedSize(sizeHint());  // the title's length differs
    setToolTip(caption());
    update();
}

QString QuantizationLegend::caption() const {
    QString text = comparison_ ? tr("%n compared node(s)", nullptr, coloured_)
                               : tr("%n quantized node(s)", nullptr, coloured_);
    if (coloured_ > 0 && std::isfinite(weakestDb_))
        text += tr(", weakest %1 dB").arg(weakestDb_, 0, 'f', 1);
    if (others_ > 0) text += tr(", %n other(s)", nullptr, others_);
    return text;
}

QString QuantizationLegend::title() const {
    return comparison_ ? tr("SQNR of each node's output against the first model")
                       : tr("SQNR of each quantized node's output");
}

QSize QuantizationLegend::sizeHint() const {
    const QFontMetrics fm(font());
    const int text =
        std::max(fm.horizontalAdvance(title()),
                 fm.horizontalAdvance(
                     tr("%1 quantized nodes, weakest 88.8 dB, %2 others").arg(8888).arg(88888)));
    return QSize(std::max(250, text + 16), fm.height() * 4 + 22);
}

void QuantizationLegend::paintEvent(QPaintEvent*) {
    paintColourScaleLegend(
        *this, title(),
        [](double t) { return sqnrColour(kSqnrLowDb + (kSqnrHighDb - kSqnrLowDb) * t); },
        tr("<= %1 dB").arg(kSqnrLowDb), tr(">= %1 dB").arg(kSqnrHighDb),
        comparison_ ? tr("none") : tr("float"), caption());
}

}  // namespace onnxlens::widgets
