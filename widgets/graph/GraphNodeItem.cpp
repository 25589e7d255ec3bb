#include "widgets/graph/GraphNodeItem.h"

#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QTimer>

#include "widgets/graph/GraphStyle.h"
#include "widgets/graph/HeatLegend.h"

namespace onnxlens::widgets {

namespace {
constexpr double kStubLength = 14;
const QColor kStubColour(0x1f, 0x5f, 0xbf);
}  // namespace

GraphNodeItem::GraphNodeItem(const ViewGraph& view, int node, const QRectF& rect)
    : view_(view), node_(node), rect_(rect) {
    setFlag(ItemIsSelectable);
    setZValue(2);
    setToolTip(plainToolTip());
}

QString GraphNodeItem::plainToolTip() const {
    const auto& n = view_.nodes[node_];
    return QString::fromStdString(n.name.empty() ? n.opType : n.name + " (" + n.opType + ")");
}

void GraphNodeItem::setHeat(std::optional<QColor> colour, const QString& toolTip, bool unknown) {
    heatShown_ = true;
    heatColour_ = colour;
    heatUnknown_ = unknown;
    setToolTip(toolTip.isEmpty() ? plainToolTip() : plainToolTip() + QLatin1Char('\n') + toolTip);
    update();
}

void GraphNodeItem::clearHeat() {
    if (!heatShown_) return;
    heatShown_ = false;
    heatColour_.reset();
    heatUnknown_ = false;
    setToolTip(plainToolTip());
    update();
}

QRectF GraphNodeItem::boundingRect() const {
    return rect_.adjusted(-3 - kStubLength, -3, 3, 3);  // stubs reach out to the left
}

QRectF GraphNodeItem::rowRect(std::size_t row) const {
    const auto& style = GraphStyle::standard();
    const double headerHeight = style.titleMetrics.height() + 2 * style.padding;
    const double rowHeight = style.rowMetrics.height();
    return QRectF(rect_.left() + style.padding,
                  rect_.top() + headerHeight + style.padding / 4 +
                      static_cast<double>(row) * (rowHeight + style.rowSpacing),
                  rect_.width() - 2 * style.padding, rowHeight);
}

int GraphNodeItem::stubTensorAt(QPointF point) const {
    const auto& rows = view_.nodes[node_].rows;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        if (rows[r].kind != ViewRow::Kind::Stub) continue;
        QRectF hit = rowRect(r);
        hit.setLeft(rect_.left() - kStubLength - 2);
        if (hit.contains(point)) return rows[r].tensor;
    }
    return -1;
}

void GraphNodeItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    const int tensor = event->button() == Qt::LeftButton ? stubTensorAt(event->pos()) : -1;
    if (tensor >= 0 && showProducer_ && view_.tensors[tensor].producer >= 0) {
        event->accept();
        // Selecting the producer may rebuild the items (expanding its group): not from inside
        // this item's handler.
        QTimer::singleShot(
            0, scene(),
            [show = showProducer_, producer = view_.tensors[tensor].producer] { show(producer); });
        return;
    }
    QGraphicsItem::mousePressEvent(event);
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const auto& style = GraphStyle::standard();
    const auto& node = view_.nodes[node_];
    const double detail = option->levelOfDetailFromTransform(painter->worldTransform());
    QColor header = style.headerColour(node.category);
    QColor headerText = style.headerTextColour(node.category);
    if (heatShown_ && node.kind == ViewNode::Kind::Operator) {
        header = heatColour_.value_or(kNotProfiledColour);
        headerText = header.lightnessF() < 0.55 ? Qt::white : Qt::black;
    }
    const bool selected = isSelected();
    if (detail < 0.35) {  // zoomed far out: coloured blocks only
        painter->fillRect(rect_, selected ? style.selectionColour : header);
        if (heatShown_ && heatUnknown_ && !selected)
            painter->fillRect(rect_, QBrush(QColor(0x70, 0x70, 0x70), Qt::BDiagPattern));
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);
    const QFontMetricsF& titleMetrics = style.titleMetrics;
    const QFontMetricsF& rowMetrics = style.rowMetrics;
    const double radius = node.kind == ViewNode::Kind::Operator ? 4 : rect_.height() / 2;
    QPen border(selected ? style.selectionColour : QColor(0x30, 0x30, 0x30), selected ? 2.5 : 0.8);
    if (node.kind != ViewNode::Kind::Operator) {
        painter->setPen(border);
        painter->setBrush(header);
        painter->drawRoundedRect(rect_, radius, radius);
        painter->setPen(style.headerTextColour(node.category));
        painter->setFont(style.titleFont);
        painter->drawText(rect_, Qt::AlignCenter, QString::fromStdString(node.title()));
        return;
    }
    const double headerHeight = titleMetrics.height() + 2 * style.padding;
    painter->setPen(Qt::NoPen);
    painter->setBrush(QColor(0xfa, 0xfa, 0xfa));
    painter->drawRoundedRect(rect_, radius, radius);
    QRectF headerRect(rect_.left(), rect_.top(), rect_.width(), headerHeight);
    painter->setBrush(header);
    if (node.rows.empty()) {
        painter->drawRoundedRect(rect_, radius, radius);
    } else {
        QPainterPath path;
        path.setFillRule(Qt::WindingFill);
        path.addRoundedRect(headerRect, radius, radius);
        path.addRect(headerRect.adjusted(0, headerHeight / 2, 0, 0));
        painter->drawPath(path.simplified());
    }
    if (heatShown_ && heatUnknown_) {  // an amount the cost model could not count: hatched
        painter->setBrush(QBrush(QColor(0x70, 0x70, 0x70), Qt::BDiagPattern));
        painter->drawRect(headerRect.adjusted(1, 1, -1, node.rows.empty() ? -1 : 0));
    }
    painter->setPen(headerText);
    painter->setFont(style.titleFont);
    painter->drawText(headerRect, Qt::AlignCenter,
                      QString::fromStdString(node.opType) +
                          (heatShown_ && heatUnknown_ ? QStringLiteral(" ?") : QString()));
    if (detail >= 0.6) {
        painter->setFont(style.rowFont);
        double y = headerRect.bottom() + style.padding / 4;
        for (const auto& row : node.rows) {
            QRectF line(rect_.left() + style.padding, y, rect_.width() - 2 * style.padding,
                        rowMetrics.height());
            const QString label = QString::fromStdString(row.label);
            painter->setPen(row.kind == ViewRow::Kind::Attribute ? QColor(0x55, 0x55, 0x55)
                                                                 : QColor(0x10, 0x10, 0x10));
            if (row.kind != ViewRow::Kind::Attribute) {
                QFont bold = style.rowFont;
                bold.setBold(true);
                painter->setFont(bold);
            }
            if (row.kind == ViewRow::Kind::Stub) {
                // The stub: a short line into the node's left side, the row in link colour.
                painter->setPen(QPen(kStubColour, 1.2));
                const double yMid = line.center().y();
                painter->drawLine(QPointF(rect_.left() - kStubLength, yMid),
                                  QPointF(rect_.left(), yMid));
                painter->drawEllipse(QPointF(rect_.left() - kStubLength, yMid), 1.8, 1.8);
                painter->setPen(kStubColour);
            }
            painter->drawText(line, Qt::AlignLeft | Qt::AlignVCenter, label);
            double labelWidth =
                (row.kind == ViewRow::Kind::Attribute ? rowMetrics : style.boldRowMetrics)
                    .horizontalAdvance(label + ' ');
            painter->setFont(style.rowFont);
            painter->setPen(row.kind == ViewRow::Kind::Stub ? kStubColour
                                                            : QColor(0x10, 0x10, 0x10));
            painter->drawText(line.adjusted(labelWidth, 0, 0, 0), Qt::AlignLeft | Qt::AlignVCenter,
                              QString::fromStdString(row.text));
            y += rowMetrics.height() + style.rowSpacing;
        }
    }
    painter->setPen(border);
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(rect_, radius, radius);
}

}  // namespace onnxlens::widgets
