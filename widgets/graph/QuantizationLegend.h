#pragma once
// The quantization-error overlay's colour scale and legend (View > Colour by Quantization Error):
// a quantized node's colour says the SQNR of its output against the float model's same tensor,
// red at 20 dB or less (the report's default tolerance), green at 50 dB or more; grey for nodes
// that were not quantized.
#include <QColor>
#include <QWidget>

namespace onnxlens::widgets {

inline constexpr double kSqnrLowDb = 20.0;
inline constexpr double kSqnrHighDb = 50.0;
QColor sqnrColour(double db);

class QuantizationLegend : public QWidget {
    Q_OBJECT
  public:
    explicit QuantizationLegend(QWidget* parent = nullptr);

    // How many nodes are coloured, the weakest SQNR among them, and the nodes left grey.
    void setSummary(int colouredNodes, double weakestDb, int otherNodes);
    // A model comparison (View > Colour by Error) instead of a quantization report: the same scale,
    // "compared" instead of "quantized" nodes.
    void setComparisonMode(bool comparison);
    QString caption() const;
    QString title() const;
    QSize sizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    int coloured_ = 0;
    double weakestDb_ = 0;
    int others_ = 0;
    bool comparison_ = false;
};

}  // namespace onnxlens::widgets
