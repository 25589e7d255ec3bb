#include "widgets/graph/GraphExport.h"

#include <QFile>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <cmath>

#include "widgets/graph/GraphScene.h"

namespace onnxlens::widgets {

QString layoutSceneInProcess(GraphScene& scene) {
    while (scene.needsLayout()) {
        std::vector<int> groups;
        LayoutRequest request = scene.layoutRequest(groups);
        auto result = computeLayout(request);
        if (!result) return QString::fromStdString(result.error().message);
        if (!scene.applyLayout(groups, *result, scene.generation()))
            return QStringLiteral("the layout does not match the graph");
    }
    return {};
}

QString exportSceneSvg(GraphScene& scene, const QString& path, const QString& title) {
    const QRectF source = scene.contentRect();
    QSvgGenerator generator;
    generator.setFileName(path);
    generator.setTitle(title);
    generator.setDescription(QStringLiteral("Drawn by onnxlens"));
    generator.setSize(source.size().toSize());
    generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
    generator.setResolution(72);
    QPainter painter;
    if (!painter.begin(&generator))
        return QStringLiteral("%1: cannot write the SVG file").arg(path);
    scene.clearSelection();
    scene.render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    painter.end();
    if (!QFile::exists(path)) return QStringLiteral("%1: cannot write the SVG file").arg(path);
    return {};
}

QSize pngSizeFor(GraphScene& scene, double scale, int maxSide) {
    const QRectF source = scene.contentRect();
    double factor = scale;
    const double longest = std::max(source.width(), source.height()) * factor;
    if (longest > maxSide) factor *= maxSide / longest;
    return QSize(std::max(1, static_cast<int>(std::ceil(source.width() * factor))),
                 std::max(1, static_cast<int>(std::ceil(source.height() * factor))));
}

QString exportScenePng(GraphScene& scene, const QString& path, double scale, int maxSide) {
    const QRectF source = scene.contentRect();
    const QSize size = pngSizeFor(scene, scale, maxSide);
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) return QStringLiteral("%1: the image is too large").arg(path);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene.clearSelection();
    scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source);
    painter.end();
    if (!image.save(path, "PNG")) return QStringLiteral("%1: cannot write the PNG file").arg(path);
    return {};
}

}  // namespace onnxlens::widgets
