#include "widgets/graph/HeatLegend.h"

#include <QLinearGradient>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cmath>

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

HeatLegend::HeatLegend(QWidget* parent) : QWidget(parent) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    setObjectName(QStringLiteral("heatLegend"));
    setFixedSize(sizeHint());
}

void HeatLegend::setScale(double maxShare, int profiledNodes, int notProfiledNodes) {
    maxShare_ = maxShare;
    profiled_ = profiledNodes;
    notProfiled_ = notProfiledNodes;
    setToolTip(caption());
    update();
}

QString HeatLegend::caption() const {
    QString text = tr("%n node(s) coloured", nullptr, profiled_);
    if (notProfiled_ > 0) text += tr(", %n not in the profile", nullptr, notProfiled_);
    return text;
}

QSize HeatLegend::sizeHint() const {
    // Wide enough for the title and for the caption of a large model.
    const QFontMetrics fm(font());
    const int text =
        std::max(fm.horizontalAdvance(title()),
                 fm.horizontalAdvance(
                     tr("%1 node(s) coloured, %2 not in the profile").arg(88888).arg(8888)));
    return QSize(std::max(230, text + 16), fm.height() * 4 + 22);
}

QString HeatLegend::title() const { return tr("Share of run time per box"); }

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
    paintColourScaleLegend(*this, title(), heatColour, QStringLiteral("0 %"),
                           QStringLiteral("%1 %").arg(100.0 * maxShare_, 0, 'f', 1), tr("none"),
                           caption());
}

}  // namespace onnxlens::widgets
