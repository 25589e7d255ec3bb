#include "widgets/graph/GraphEdgeItem.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

#include "widgets/graph/GraphStyle.h"

namespace onnxlens::widgets {

GraphEdgeItem::GraphEdgeItem(const ViewGraph& view, int tensor, QPainterPath path, bool hasArrow,
                             QPointF arrowTip, bool labelled, QPointF labelCentre,
                             bool startsAtPort)
    : view_(view),
      tensor_(tensor),
      path_(path),
      hasArrow_(hasArrow),
      arrowTip_(arrowTip),
      labelled_(labelled),
      labelCentre_(labelCentre),
      startsAtPort_(startsAtPort) {
    setZValue(1);
    const auto& t = view.tensors[tensor];
    setToolTip(QString::fromStdString(t.name + "\n" + t.type.text()));
    bounds_ = path_.boundingRect().adjusted(-6, -6, 6, 6);
    if (hasArrow_) bounds_ = bounds_.united(QRectF(arrowTip_, QSizeF(1, 1)).adjusted(-6, -6, 6, 6));
    if (labelled_) bounds_ = bounds_.united(labelRect());
}

QString GraphEdgeItem::labelText() const {
    return QString::fromStdString(view_.tensors[tensor_].type.shapeText());
}

QRectF GraphEdgeItem::labelRect() const {
    const QFontMetricsF& metrics = GraphStyle::standard().labelMetrics;
    QSizeF size(metrics.horizontalAdvance(labelText()) + 4, metrics.height());
    return QRectF(labelCentre_ - QPointF(size.width() / 2, size.height() / 2), size);
}

QRectF GraphEdgeItem::boundingRect() const { return bounds_; }

QPainterPath GraphEdgeItem::shape() const {
    QPainterPathStroker stroker;
    stroker.setWidth(6);
    return stroker.createStroke(path_);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const auto& style = GraphStyle::standard();
    const double detail = option->levelOfDetailFromTransform(painter->worldTransform());
    painter->setRenderHint(QPainter::Antialiasing, detail >= 0.35);
    painter->setPen(QPen(style.edgeColour, 1.1));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path_);
    if (startsAtPort_) {
        painter->setBrush(style.edgeColour);
        painter->drawEllipse(path_.pointAtPercent(0), 2.5, 2.5);
    }
    if (hasArrow_) {
        QPointF end = path_.currentPosition();
        QLineF line(end, arrowTip_);
        if (line.length() < 0.5) line = QLineF(arrowTip_ - QPointF(0, 6), arrowTip_);
        double angle = std::atan2(line.dy(), line.dx());
        const double size = 7;
        QPointF left =
            arrowTip_ - QPointF(std::cos(angle - 0.4) * size, std::sin(angle - 0.4) * size);
        QPointF right =
            arrowTip_ - QPointF(std::cos(angle + 0.4) * size, std::sin(angle + 0.4) * size);
        painter->setPen(QPen(style.edgeColour, 1.1));
        painter->drawLine(end, arrowTip_);
        painter->setBrush(style.edgeColour);
        painter->drawPolygon(QPolygonF({arrowTip_, left, right}));
    }
    if (!labelled_ || detail < 0.6) return;
    // The shape, with symbolic dims (dynamic axes) in their own colour.
    const auto& type = view_.tensors[tensor_].type;
    painter->setFont(style.labelFont);
    const QFontMetricsF& metrics = style.labelMetrics;
    QRectF rect = labelRect();
    painter->setPen(Qt::NoPen);
    painter->setBrush(QColor(255, 255, 255, 220));
    painter->drawRect(rect);
    double x = rect.left() + 2;
    const double baseline = rect.top() + metrics.ascent();
    auto draw = [&](const QString& text, const QColor& colour) {
        painter->setPen(colour);
        painter->drawText(QPointF(x, baseline), text);
        x += metrics.horizontalAdvance(text);
    };
    if (!type.hasShape || type.dims.empty()) {
        draw(labelText(), style.labelColour);
        return;
    }
    for (std::size_t i = 0; i < type.dims.size(); ++i) {
        if (i) draw(QStringLiteral("x"), style.labelColour);
        const auto& dim = type.dims[i];
        draw(QString::fromStdString(dim.text()),
             dim.isSymbolic() ? style.symbolicDimColour : style.labelColour);
    }
}

}  // namespace onnxlens::widgets
