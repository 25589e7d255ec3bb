#pragma once
// The view onto a GraphScene: wheel and Ctrl +/- zoom around the cursor, drag to pan, fit to
// window. It accepts no drops, so files dropped on it reach the main window.
#include <QGraphicsView>

namespace onnxlens::widgets {

class GraphView : public QGraphicsView {
    Q_OBJECT
  public:
    explicit GraphView(QWidget* parent = nullptr);

    double zoom() const { return transform().m11(); }
    void setZoom(double factor);
    void zoomBy(double factor);
    void fitToWindow();
    // Zoom at which node text (8-9 pt) reads without effort.
    static constexpr double kLegibleZoom = 0.9;
    // Centres on the rect, zooming in to a legible level first when zoomed out further.
    void centreOnItemRect(const QRectF& rect);
    // The first view: the whole graph when it fits at a legible zoom, else the graph's top
    // (`top`: its inputs) at that zoom, with the start of the flow below it.
    void showTop(const QRectF& top);
    // Scrolls (at the same zoom) so that `rect` is in view: whole when it fits, else its top-left
    // part (the title of an opened group and the start of its inside). Nothing when in view.
    void bringIntoView(const QRectF& rect);

  signals:
    void viewportChanged();

  protected:
    void wheelEvent(QWheelEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
};

}  // namespace onnxlens::widgets
