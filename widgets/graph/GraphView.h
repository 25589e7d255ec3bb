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
    void centreOnItemRect(const QRectF& rect);

signals:
    void viewportChanged();

protected:
    void wheelEvent(QWheelEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent* event) override;
};

}  // namespace onnxlens::widgets
