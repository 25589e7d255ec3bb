#pragma once
// The quantization report card (Tools > Quantize Model...): PASS or FAIL against the SQNR the user
// asks every output to keep, the per-output table (max and mean abs error, cosine, SQNR, top-1 and
// top-5 for logits), the weakest quantized nodes, then size and latency of float and int8.
// Engine headers stay out of this header (Qt's `slots` macro, see EngineHeaders.h).
#include <QWidget>
#include <memory>

class QLabel;
class QTableWidget;

namespace onnxlens::engine {
struct QuantizationReport;
}  // namespace onnxlens::engine

namespace onnxlens::widgets {

class QuantizationReportCard : public QWidget {
    Q_OBJECT
  public:
    explicit QuantizationReportCard(QWidget* parent = nullptr);

    void setReport(std::shared_ptr<const engine::QuantizationReport> report);
    void clear();
    // The verdict is recomputed against this minimum SQNR (dB) of every output.
    void setMinSqnrDb(double db);
    double minSqnrDb() const { return minSqnrDb_; }

    bool hasReport() const { return report_ != nullptr; }
    bool passed() const;
    QString verdictText() const;
    QTableWidget* outputTable() const { return outputs_; }
    QTableWidget* nodeTable() const { return nodes_; }
    QString footerText() const;

    static constexpr int kShownNodes = 10;

  private:
    void refreshVerdict();

    QLabel* verdict_;
    QTableWidget* outputs_;
    QTableWidget* nodes_;
    QLabel* footer_;
    std::shared_ptr<const engine::QuantizationReport> report_;
    double minSqnrDb_ = 20.0;
};

}  // namespace onnxlens::widgets
