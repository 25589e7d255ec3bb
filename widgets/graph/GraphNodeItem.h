#pragma once
// One operator, graph input or graph output: a header with the op type, coloured by category,
// then rows for key attributes and folded initializers/constants. With the heat overlay on, the
// header shows the node's share of the profiled run time instead of its category.
#include <QColor>
#include <QGraphicsItem>
#include <functional>
#include <optional>

#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

class GraphNodeItem : public QGraphicsItem {
  public:
    enum { Type = UserType + 1 };
    GraphNodeItem(const ViewGraph& view, int node, const QRectF& rect);

    int type() const override { return Type; }
    int nodeIndex() const { return node_; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    // Heat overlay: `colour` for a profiled node (tooltip with its time), nullopt for a node the
    // profile does not cover (drawn grey); `unknown`: a node whose amount the cost model could
    // not count, drawn hatched over `colour`. clearHeat() restores the category colours.
    void setHeat(std::optional<QColor> colour, const QString& toolTip, bool unknown = false);
    void clearHeat();
    bool isHeatShown() const { return heatShown_; }
    bool isHeatUnknown() const { return heatShown_ && heatUnknown_; }
    std::optional<QColor> heatColour() const { return heatColour_; }

    // Stub rows (a far-away tensor): clicking one calls `show` with the tensor's producer node.
    void setStubHandler(std::function<void(int producer)> show) { showProducer_ = std::move(show); }
    // The stub row under `point` (item coordinates), as a tensor index; -1 when none.
    int stubTensorAt(QPointF point) const;
    QRectF rowRect(std::size_t row) const;

  protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* event) override;

  private:
    QString plainToolTip() const;

    const ViewGraph& view_;
    int node_;
    QRectF rect_;
    bool heatShown_ = false;
    std::optional<QColor> heatColour_;
    bool heatUnknown_ = false;
    std::function<void(int)> showProducer_;
};

}  // namespace onnxlens::widgets
