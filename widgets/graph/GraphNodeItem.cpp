#include "widgets/graph/GraphNodeItem.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "widgets/graph/GraphStyle.h"
#include "widgets/graph/HeatLegend.h"

namespace onnxlens::widgets {

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

void GraphNodeItem::setHeat(std::optional<QColor> colour, const QString& toolTip) {
    heatShown_ = true;
    heatColour_ = colour;
    setToolTip(toolTip.isEmpty() ? plainToolTip() : plainToolTip() + QLatin1Char('\n') + toolTip);
    update();
}

void GraphNodeItem::clearHeat() {
    if (!heatShown_) return;
    heatShown_ = false;
    heatColour_.reset();
    setToolTip(plainToolTip());
    update();
}

QRectF GraphNodeItem::boundingRect() const { return rect_.adjusted(-3, -3, 3, 3); }

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
    painter->setPen(headerText);
    painter->setFont(style.titleFont);
    painter->drawText(headerRect, Qt::AlignCenter, QString::fromStdString(node.opType));
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
            painter->drawText(line, Qt::AlignLeft | Qt::AlignVCenter, label);
            double labelWidth = (row.kind == ViewRow::Kind::Attribute ? rowMetrics : style.boldRowMetrics)
                                    .horizontalAdvance(label + ' ');
            painter->setFont(style.rowFont);
            painter->setPen(QColor(0x10, 0x10, 0x10));
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
