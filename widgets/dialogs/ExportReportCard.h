#pragma once
// The export report card: one row per gate of engine::ExportReport (exported, checker, numbers,
// dynamic batch, latency), green when it held, red when it failed, grey when skipped, each with
// the figure that says so.
// The engine's headers are not included here: Session.h has a member named `slots`, which Qt's
// keyword macro would break in every file including this one after a Qt header.
#include <QWidget>
#include <memory>

class QLabel;
class QGridLayout;

namespace onnxlens::engine {
struct ExportReport;
enum class ReportStatus;
}  // namespace onnxlens::engine

namespace onnxlens::widgets {

class ExportReportCard : public QWidget {
    Q_OBJECT
  public:
    explicit ExportReportCard(QWidget* parent = nullptr);

    void setReport(const engine::ExportReport& report);
    void clear();

    bool hasReport() const { return hasReport_; }
    bool passed() const;
    const engine::ExportReport& report() const { return *report_; }
    int lineCount() const;
    // The text shown on row `i` ("PASS  Numbers match PyTorch  max abs error ...") and its colour.
    QString lineText(int i) const;
    QColor lineColor(int i) const;

    static QColor statusColor(engine::ReportStatus status);

  private:
    QLabel* heading_;
    QGridLayout* rows_;
    QLabel* footer_;
    std::shared_ptr<const engine::ExportReport> report_;
    bool hasReport_ = false;
};

}  // namespace onnxlens::widgets
