#pragma once
// One segment of a tensor's route: a Graphviz spline with an arrow head, and (on the segment
// that carries it) the tensor's shape as a label, symbolic dims in their own colour.
#include <QGraphicsItem>
#include <QPainterPath>

#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

class GraphEdgeItem : public QGraphicsItem {
  public:
    enum { Type = UserType + 3 };
    // `path` ends where the arrow head starts; `arrowTip` is where it points.
    GraphEdgeItem(const ViewGraph& view, int tensor, QPainterPath path, bool hasArrow,
                  QPointF arrowTip, bool labelled, QPointF labelCentre, bool startsAtPort);

    int type() const override { return Type; }
    int tensorIndex() const { return tensor_; }
    QString labelText() const;
    bool isLabelled() const { return labelled_; }
    // Where the label is drawn (item coordinates), whether or not this segment carries it.
    QRectF labelRect() const;
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  private:
    const ViewGraph& view_;
    int tensor_;
    QPainterPath path_;
    bool hasArrow_;
    QPointF arrowTip_;
    bool labelled_;
    QPointF labelCentre_;
    bool startsAtPort_;
    QRectF bounds_;
};

}  // namespace onnxlens::widgets
