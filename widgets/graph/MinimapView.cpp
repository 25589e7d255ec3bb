#include "widgets/graph/MinimapView.h"

#include <QMouseEvent>

#include "widgets/graph/GraphView.h"

namespace onnxlens::widgets {

MinimapView::MinimapView(GraphView* main, QWidget* parent) : QGraphicsView(parent), main_(main) {
    setScene(main->scene());
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setRenderHints(QPainter::Antialiasing);
    setAcceptDrops(false);
    viewport()->setAcceptDrops(false);
    setFrameShape(QFrame::Box);
    setFixedSize(180, 180);
    setBackgroundBrush(QColor(250, 250, 250));
    connect(main, &GraphView::viewportChanged, this, [this] { viewport()->update(); });
}

void MinimapView::refit() {
    if (!scene()) return;
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
}

void MinimapView::drawForeground(QPainter* painter, const QRectF&) {
    QRectF visible = main_->mapToScene(main_->viewport()->rect()).boundingRect();
    painter->setPen(QPen(QColor(0xff, 0x9f, 0x1c), 0));
    painter->setBrush(QColor(0xff, 0x9f, 0x1c, 40));
    painter->drawRect(visible);
}

void MinimapView::mousePressEvent(QMouseEvent* event) {
    main_->centerOn(mapToScene(event->position().toPoint()));
    viewport()->update();
}

void MinimapView::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) mousePressEvent(event);
}

void MinimapView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    refit();
}

void MinimapView::wheelEvent(QWheelEvent* event) { event->ignore(); }

}  // namespace onnxlens::widgets
