#pragma once
// The whole graph in miniature with the main view's visible area as a rectangle; clicking or
// dragging moves the main view there.
#include <QGraphicsView>

namespace onnxlens::widgets {

class GraphView;

class MinimapView : public QGraphicsView {
    Q_OBJECT
  public:
    explicit MinimapView(GraphView* main, QWidget* parent = nullptr);
    void refit();

  protected:
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

  private:
    GraphView* main_;
};

}  // namespace onnxlens::widgets
