// Engine headers first: Session.h before any Qt header.
#pragma push_macro("slots")
#undef slots
#include "onnxlens/workflows/QuantizationReport.h"
#include "onnxlens/workflows/Quantizer.h"
#pragma pop_macro("slots")

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "widgets/dialogs/QuantizationReportCard.h"

namespace onnxlens::widgets {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString sqnrText(double db) { return qs(engine::formatSqnr(db)); }

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* table = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    return table;
}

void setRow(QTableWidget* table, int row, const QStringList& cells) {
    for (int c = 0; c < cells.size(); ++c) table->setItem(row, c, new QTableWidgetItem(cells[c]));
}

}  // namespace

QuantizationReportCard::QuantizationReportCard(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    verdict_ = new QLabel(this);
    verdict_->setObjectName(QStringLiteral("quantizationVerdict"));
    layout->addWidget(verdict_);
    outputs_ = makeTable({tr("output"), tr("max abs error"), tr("mean abs error"), tr("cosine"),
                          tr("SQNR"), tr("top-1"), tr("top-5 overlap"), tr("verdict")},
                         this);
    layout->addWidget(outputs_);
    layout->addWidget(new QLabel(tr("Weakest quantized nodes (exclude these first):"), this));
    nodes_ =
        makeTable({tr("node"), tr("op type"), tr("SQNR"), tr("cosine"), tr("max abs error")}, this);
    layout->addWidget(nodes_);
    footer_ = new QLabel(this);
    footer_->setWordWrap(true);
    layout->addWidget(footer_);
    clear();
}

void QuantizationReportCard::clear() {
    report_.reset();
    outputs_->setRowCount(0);
    nodes_->setRowCount(0);
    verdict_->setText(tr("No report yet."));
    verdict_->setStyleSheet({});
    footer_->clear();
}

void QuantizationReportCard::setReport(std::shared_ptr<const engine::QuantizationReport> report) {
    report_ = std::move(report);
    if (!report_) return clear();
    const auto& r = *report_;
    outputs_->setRowCount(static_cast<int>(r.outputs.size()));
    for (int i = 0; i < static_cast<int>(r.outputs.size()); ++i) {
        const auto& o = r.outputs[static_cast<std::size_t>(i)];
        setRow(outputs_, i,
               {qs(o.name), QString::number(o.figures.maxAbsError, 'g', 4),
                QString::number(o.figures.meanAbsError, 'g', 4),
                QString::number(o.figures.cosine, 'f', 6), sqnrText(o.figures.sqnrDb),
                o.logits ? QStringLiteral("%1 %").arg(100 * o.top1Agreement, 0, 'f', 1)
                         : QStringLiteral("-"),
                o.logits ? QStringLiteral("%1 %").arg(100 * o.top5Overlap, 0, 'f', 1)
                         : QStringLiteral("-"),
                QString()});
    }
    const int shown = std::min(kShownNodes, static_cast<int>(r.nodes.size()));
    nodes_->setRowCount(shown);
    for (int i = 0; i < shown; ++i) {
        const auto& n = r.nodes[static_cast<std::size_t>(i)];
        setRow(nodes_, i,
               {qs(n.name), qs(n.opType), sqnrText(n.figures.sqnrDb),
                QString::number(n.figures.cosine, 'f', 6),
                QString::number(n.figures.maxAbsError, 'g', 4)});
    }
    const bool int4 = r.settings.format == engine::QuantizationFormat::Int4;
    const QString kind = int4 ? QStringLiteral("int4") : QStringLiteral("int8");
    QString footer =
        int4 ? tr("Settings: int4 MatMulNBits weights, blocks of %1, %2, accuracy level %3. ")
                   .arg(r.settings.blockSize)
                   .arg(r.settings.symmetric ? tr("symmetric") : tr("asymmetric (zero points)"))
                   .arg(r.settings.accuracyLevel)
             : QString();
    footer += tr("Size: %1 MB float, %2 MB %4 (%3x smaller).")
                  .arg(r.floatBytes / 1e6, 0, 'f', 2)
                  .arg(r.int8Bytes / 1e6, 0, 'f', 2)
                  .arg(r.sizeRatio, 0, 'f', 2)
                  .arg(kind);
    if (r.benchmarked)
        footer += tr(" Median latency: %1 ms float, %2 ms %5 (%3x), %4 threads.")
                      .arg(r.floatLatency.medianMs, 0, 'f', 3)
                      .arg(r.int8Latency.medianMs, 0, 'f', 3)
                      .arg(r.speedup, 0, 'f', 2)
                      .arg(r.threads)
                      .arg(kind);
    footer += tr(" Inputs: %1.").arg(qs([&] {
        std::string s;
        for (const auto& set : r.inputSets) s += (s.empty() ? "" : ", ") + set;
        return s;
    }()));
    footer_->setText(footer);
    refreshVerdict();
}

void QuantizationReportCard::setMinSqnrDb(double db) {
    minSqnrDb_ = db;
    refreshVerdict();
}

bool QuantizationReportCard::passed() const {
    if (!report_) return false;
    for (const auto& o : report_->outputs)
        if (!o.problem.empty() || !(o.figures.sqnrDb >= minSqnrDb_)) return false;
    return true;
}

QString QuantizationReportCard::verdictText() const { return verdict_->text(); }
QString QuantizationReportCard::footerText() const { return footer_->text(); }

void QuantizationReportCard::refreshVerdict() {
    if (!report_) return;
    for (int i = 0; i < outputs_->rowCount() && i < static_cast<int>(report_->outputs.size());
         ++i) {
        const auto& o = report_->outputs[static_cast<std::size_t>(i)];
        const bool ok = o.problem.empty() && o.figures.sqnrDb >= minSqnrDb_;
        auto* item = new QTableWidgetItem(o.problem.empty() ? (ok ? tr("pass") : tr("fail"))
                                                            : qs(o.problem));
        item->setForeground(ok ? QColor(0x1b, 0x7f, 0x3b) : QColor(0xc6, 0x28, 0x28));
        outputs_->setItem(i, 7, item);
    }
    const bool ok = passed();
    verdict_->setText(ok ? tr("PASS: every output keeps SQNR >= %1 dB").arg(minSqnrDb_)
                         : tr("FAIL: an output is below SQNR %1 dB").arg(minSqnrDb_));
    verdict_->setStyleSheet(ok ? QStringLiteral("color: #1b7f3b; font-weight: bold")
                               : QStringLiteral("color: #c62828; font-weight: bold"));
}

}  // namespace onnxlens::widgets
