#pragma once
// A group (name scope, If/Loop/Scan body, local function): a box when collapsed, a titled frame
// around its laid-out inside when expanded. Clicking the header's +/- toggles it. Its tooltip
// gives its path, size, what the operators inside cost, and the heat overlay's figure.
#include <QColor>
#include <QGraphicsItem>
#include <functional>
#include <optional>

#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

class GraphGroupItem : public QGraphicsItem {
  public:
    enum { Type = UserType + 2 };
    GraphGroupItem(const ViewGraph& view, int group, const QRectF& rect, bool expanded,
                   std::function<void(int)> toggle);

    int type() const override { return Type; }
    int groupIndex() const { return group_; }
    bool isExpanded() const { return expanded_; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    // Heat overlay on a collapsed group: filled with the colour of its nodes' summed share.
    void setHeat(QColor colour, const QString& toolTip);
    void clearHeat();
    std::optional<QColor> heatColour() const { return heat_; }
    // The title as drawn: the group's title, elided in the middle when the box is too narrow.
    QString shownTitle() const;
    // A line under the title in the tooltip: the group's totals from the cost model.
    void setSummary(const QString& summary);

  protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

  private:
    QRectF toggleRect() const;
    QString plainToolTip() const;

    const ViewGraph& view_;
    int group_;
    QRectF rect_;
    bool expanded_;
    std::function<void(int)> toggle_;
    std::optional<QColor> heat_;
    QString heatToolTip_;
    QString summary_;
};

}  // namespace onnxlens::widgets
