#include "widgets/graph/GraphGroupItem.h"

#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "widgets/graph/GraphStyle.h"

namespace onnxlens::widgets {

namespace {
QColor groupTint(const ViewGroup& group, bool expanded) {
    QColor base;
    switch (group.kind) {
        case ViewGroup::Kind::Subgraph:
            base = QColor(0xf3, 0xe9, 0xd2);
            break;
        case ViewGroup::Kind::Function:
            base = QColor(0xe3, 0xec, 0xf7);
            break;
        default:
            base = QColor(0xe9, 0xed, 0xf1);
            break;
    }
    if (expanded) base = base.lighter(100 + std::min(group.depth, 4) * 2);
    return base;
}
}  // namespace

GraphGroupItem::GraphGroupItem(const ViewGraph& view, int group, const QRectF& rect, bool expanded,
                               std::function<void(int)> toggle)
    : view_(view), group_(group), rect_(rect), expanded_(expanded), toggle_(std::move(toggle)) {
    setFlag(ItemIsSelectable, !expanded);
    setZValue(expanded ? 0 : 2);
    setToolTip(plainToolTip());
}

QString GraphGroupItem::plainToolTip() const {
    const auto& g = view_.groups[group_];
    QString tip = QString::fromStdString(g.path) + QStringLiteral(" (%1 nodes)").arg(g.nodeCount);
    if (!summary_.isEmpty()) tip += QLatin1Char('\n') + summary_;
    if (heat_ && !heatToolTip_.isEmpty()) tip += QLatin1Char('\n') + heatToolTip_;
    return tip + QStringLiteral("\nclick +/- or double-click to %1")
                     .arg(expanded_ ? QStringLiteral("collapse") : QStringLiteral("expand"));
}

void GraphGroupItem::setSummary(const QString& summary) {
    summary_ = summary;
    setToolTip(plainToolTip());
}

void GraphGroupItem::setHeat(QColor colour, const QString& toolTip) {
    heat_ = colour;
    heatToolTip_ = toolTip;
    setToolTip(plainToolTip());
    update();
}

void GraphGroupItem::clearHeat() {
    if (!heat_) return;
    heat_.reset();
    heatToolTip_.clear();
    setToolTip(plainToolTip());
    update();
}

QRectF GraphGroupItem::boundingRect() const { return rect_.adjusted(-3, -3, 3, 3); }

QRectF GraphGroupItem::toggleRect() const {
    return QRectF(rect_.left() + 5, rect_.top() + 5, 12, 12);
}

QString GraphGroupItem::shownTitle() const {
    const QFontMetricsF titleMetrics(GraphStyle::standard().titleFont);
    return titleMetrics.elidedText(QString::fromStdString(view_.groups[group_].title),
                                   Qt::ElideMiddle, rect_.width() - 26);
}

void GraphGroupItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const auto& style = GraphStyle::standard();
    const auto& group = view_.groups[group_];
    const double detail = option->levelOfDetailFromTransform(painter->worldTransform());
    painter->setRenderHint(QPainter::Antialiasing, detail >= 0.35);
    const bool selected = isSelected();
    QPen border(selected ? style.selectionColour : QColor(0x8a, 0x94, 0xa0),
                selected ? 2.5 : (expanded_ ? 1.0 : 1.4));
    if (!expanded_) border.setStyle(Qt::SolidLine);
    painter->setPen(border);
    const bool heated = heat_ && !expanded_;
    painter->setBrush(heated ? *heat_ : groupTint(group, expanded_));
    painter->drawRoundedRect(rect_, 6, 6);
    if (!expanded_) {  // the stacked look of something holding more
        painter->setBrush(Qt::NoBrush);
        painter->drawLine(rect_.bottomLeft() + QPointF(4, 3), rect_.bottomRight() + QPointF(-4, 3));
    }
    if (detail < 0.35 && !expanded_) return;
    QFontMetricsF titleMetrics(style.titleFont);
    painter->setFont(style.titleFont);
    const bool darkFill = heated && heat_->lightnessF() < 0.55;
    painter->setPen(darkFill ? QColor(Qt::white) : QColor(0x22, 0x2a, 0x35));
    QRectF titleRect(rect_.left() + 22, rect_.top() + 2, rect_.width() - 26,
                     expanded_ ? style.groupHeader - 2 : titleMetrics.height() + style.padding);
    painter->drawText(titleRect, Qt::AlignLeft | Qt::AlignVCenter, shownTitle());
    if (!expanded_) {
        painter->setFont(style.rowFont);
        painter->setPen(darkFill ? QColor(0xee, 0xee, 0xee) : QColor(0x50, 0x58, 0x62));
        QRectF sub(rect_.left() + style.padding, titleRect.bottom(),
                   rect_.width() - 2 * style.padding,
                   rect_.bottom() - titleRect.bottom() - style.padding / 2);
        painter->drawText(sub, Qt::AlignCenter,
                          GraphStyle::standard().collapsedGroupSubtitle(group));
    }
    QRectF toggle = toggleRect();
    painter->setPen(QPen(QColor(0x40, 0x48, 0x52), 1));
    painter->setBrush(Qt::white);
    painter->drawRect(toggle);
    painter->drawLine(QPointF(toggle.left() + 3, toggle.center().y()),
                      QPointF(toggle.right() - 3, toggle.center().y()));
    if (!expanded_)
        painter->drawLine(QPointF(toggle.center().x(), toggle.top() + 3),
                          QPointF(toggle.center().x(), toggle.bottom() - 3));
}

void GraphGroupItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
    if (event->button() == Qt::LeftButton &&
        toggleRect().adjusted(-3, -3, 3, 3).contains(event->pos())) {
        event->accept();
        if (toggle_) toggle_(group_);
        return;
    }
    if (expanded_) {
        // Clicks on an expanded frame's empty area pan the view instead of selecting the frame.
        event->ignore();
        return;
    }
    QGraphicsItem::mousePressEvent(event);
}

void GraphGroupItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    QRectF header(rect_.left(), rect_.top(), rect_.width(), GraphStyle::standard().groupHeader);
    if (!expanded_ || header.contains(event->pos())) {
        event->accept();
        if (toggle_) toggle_(group_);
        return;
    }
    QGraphicsItem::mouseDoubleClickEvent(event);
}

}  // namespace onnxlens::widgets
