#pragma once
// One operator, graph input or graph output: a header with the op type, coloured by category,
// then rows for key attributes and folded initializers/constants.
#include <QGraphicsItem>

#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

class GraphNodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    GraphNodeItem(const ViewGraph& view, int node, const QRectF& rect);

    int type() const override { return Type; }
    int nodeIndex() const { return node_; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
               QWidget* widget) override;

private:
    const ViewGraph& view_;
    int node_;
    QRectF rect_;
};

}  // namespace onnxlens::widgets
