#include "widgets/graph/GraphView.h"

#include <QWheelEvent>
#include <algorithm>

namespace onnxlens::widgets {

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setAcceptDrops(false);
    viewport()->setAcceptDrops(false);
    setFocusPolicy(Qt::StrongFocus);
}

void GraphView::setZoom(double factor) {
    factor = std::clamp(factor, 0.01, 8.0);
    QTransform t;
    t.scale(factor, factor);
    setTransform(t);
    emit viewportChanged();
}

void GraphView::zoomBy(double factor) { setZoom(zoom() * factor); }

void GraphView::fitToWindow() {
    if (!scene()) return;
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    if (zoom() > 1.0) setZoom(1.0);  // small graphs stay at natural size
    emit viewportChanged();
}

void GraphView::centreOnItemRect(const QRectF& rect) {
    if (zoom() < kLegibleZoom) setZoom(1.0);
    centerOn(rect.center());
    emit viewportChanged();
}

void GraphView::showTop(const QRectF& top) {
    fitToWindow();
    if (zoom() >= kLegibleZoom || !scene()) return;
    setZoom(kLegibleZoom);
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    const QRectF content = scene()->itemsBoundingRect();
    // Horizontally on the inputs; vertically with the inputs' row just under the top edge.
    const double margin = 24 / zoom();
    const double topY = (top.isValid() ? top.top() : content.top()) - margin;
    double x = top.isValid() ? top.center().x() : content.center().x();
    // A wide row of inputs starts at its left end rather than losing it off both sides.
    if (top.isValid() && top.width() > visible.width())
        x = top.left() - margin + visible.width() / 2;
    centerOn(x, topY + visible.height() / 2);
    emit viewportChanged();
}

void GraphView::bringIntoView(const QRectF& rect) {
    if (!rect.isValid()) return;
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    if (visible.contains(rect)) return;
    const double margin = 24 / zoom();
    // Each axis: centred when it fits, else its start just inside the edge.
    const double x = rect.width() + 2 * margin <= visible.width()
                         ? rect.center().x()
                         : rect.left() - margin + visible.width() / 2;
    const double y = rect.height() + 2 * margin <= visible.height()
                         ? rect.center().y()
                         : rect.top() - margin + visible.height() / 2;
    centerOn(x, y);
    emit viewportChanged();
}

void GraphView::wheelEvent(QWheelEvent* event) {
    // Wheel zooms (as in Netron); Shift+wheel or a trackpad's horizontal swipe scrolls.
    if (event->modifiers() & Qt::ShiftModifier || event->angleDelta().y() == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(1.0015, event->angleDelta().y()));
    event->accept();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    emit viewportChanged();
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    emit viewportChanged();
}

}  // namespace onnxlens::widgets
