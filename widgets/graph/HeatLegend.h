#pragma once
// The heat overlay's colour scale and its legend, drawn in a corner of the graph view: a node's
// colour says its share of the profiled run time relative to the hottest node (pale yellow for
// almost nothing, dark red for the hottest), grey for nodes the profile does not cover (fused
// away by the optimizer, or inside a subgraph).
#include <QColor>
#include <QWidget>
#include <functional>

namespace onnxlens::widgets {

// `fraction` of the hottest node's share, 0..1 (clamped).
QColor heatColour(double fraction);
inline const QColor kNotProfiledColour{0xd5, 0xd5, 0xd5};

// Paints a legend box on `widget`: the title, a bar coloured by colourAt(0..1) with its two end
// labels, a grey swatch labelled `greyLabel`, and the caption (the heat and quantization legends).
void paintColourScaleLegend(QWidget& widget, const QString& title,
                            const std::function<QColor(double)>& colourAt, const QString& low,
                            const QString& high, const QString& greyLabel, const QString& caption);

class HeatLegend : public QWidget {
    Q_OBJECT
  public:
    explicit HeatLegend(QWidget* parent = nullptr);

    // The hottest node's share of the summed node time (0..1) and how many nodes are coloured.
    void setScale(double maxShare, int profiledNodes, int notProfiledNodes);
    double maxShare() const { return maxShare_; }
    QString caption() const;  // the text under the bar, for tests and screen readers

    QSize sizeHint() const override;
    QString title() const;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    double maxShare_ = 0;
    int profiled_ = 0;
    int notProfiled_ = 0;
};

}  // namespace onnxlens::widgets
