#pragma once
// The heat overlay's colour scale and its legend, drawn in a corner of the graph view: a node's
// colour says its share of what the overlay measures (the profiled run time, or the cost model's
// FLOPs, parameters or bytes moved) relative to the hottest box (pale yellow for almost nothing,
// dark red for the hottest), grey for nodes the measure does not cover (fused away by the
// optimizer, inside a subgraph).
#include <QColor>
#include <QWidget>
#include <functional>

namespace onnxlens::widgets {

// What a heat overlay measures: the benchmark profile's time per node, or the cost model's
// FLOPs, parameters, or bytes moved (activations read and written plus weights) per node.
enum class HeatMeasure { RunTime, Flops, Parameters, Memory };

QString heatMeasureTitle(HeatMeasure measure);  // the legend's title
// One box's amount for its tooltip: "1.234 ms per run, 5.6 % of the profiled time",
// "1.2 GFLOPs, 5.6 % of the model's".
QString heatAmountText(HeatMeasure measure, double amount, double share);
QString heatAmountShort(HeatMeasure measure, double amount);  // "1.2 GFLOPs", "3.4 MB"
QString heatNotCoveredText(HeatMeasure measure);              // the tooltip of a grey node
// The tooltip of a node the cost model could not count (drawn hatched): "FLOPs unknown (...)", or
// "at least 1.2 MFLOPs" when it counted part.
QString heatUnknownText(HeatMeasure measure, double countedAmount);

// `fraction` of the hottest node's share, 0..1 (clamped).
QColor heatColour(double fraction);
inline const QColor kNotProfiledColour{0xd5, 0xd5, 0xd5};
inline const QColor kUnknownCostColour{0xe4, 0xe8, 0xf0};  // under the hatching of an unknown

// Paints a legend box on `widget`: the title, a bar coloured by colourAt(0..1) with its two end
// labels, a grey swatch labelled `greyLabel`, and the caption (the heat and quantization legends).
void paintColourScaleLegend(QWidget& widget, const QString& title,
                            const std::function<QColor(double)>& colourAt, const QString& low,
                            const QString& high, const QString& greyLabel, const QString& caption);

class HeatLegend : public QWidget {
    Q_OBJECT
  public:
    explicit HeatLegend(QWidget* parent = nullptr);

    void setMeasure(HeatMeasure measure);
    HeatMeasure measure() const { return measure_; }
    // The hottest box's share of the total (0..1) and its amount (ms per run, FLOPs, ...), and
    // how many nodes are coloured.
    void setScale(double maxShare, int profiledNodes, int notProfiledNodes, double maxAmount = 0,
                  int unknownNodes = 0);
    // The dims a cost measure was counted at ("batch = 1, sequence = 128"), shown in the title.
    void setDims(const QString& dims);
    double maxShare() const { return maxShare_; }
    QString caption() const;  // the text under the bar, for tests and screen readers

    QSize sizeHint() const override;
    QString title() const;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    HeatMeasure measure_ = HeatMeasure::RunTime;
    double maxShare_ = 0;
    double maxAmount_ = 0;
    int profiled_ = 0;
    int notProfiled_ = 0;
    int unknown_ = 0;
    QString dims_;
};

}  // namespace onnxlens::widgets
