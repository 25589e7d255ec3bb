#pragma once
// Writes a composed GraphScene as SVG (text stays text, so node labels are searchable) or PNG.
// Used by File > Export and by `onnxlens-cli render`.
#include <QSize>
#include <QString>

namespace onnxlens::widgets {

class GraphScene;

// Lays the scene out with Graphviz in this process, until no visible group lacks a layout: for
// the CLI and tools without a window (the GUI uses the worker process instead). Returns an
// empty string on success, else the error message.
QString layoutSceneInProcess(GraphScene& scene);

// Returns an empty string on success, else the error message.
QString exportSceneSvg(GraphScene& scene, const QString& path, const QString& title);
// `scale` 1 = one pixel per point; very large graphs are scaled down to at most `maxSide` pixels.
QString exportScenePng(GraphScene& scene, const QString& path, double scale = 1.0,
                       int maxSide = 16000);
QSize pngSizeFor(GraphScene& scene, double scale = 1.0, int maxSide = 16000);

}  // namespace onnxlens::widgets
