// Before any Qt header: Session.h (through ExportReport.h) has a member named `slots`.
#include "onnxlens/workflows/ExportReport.h"
//
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/dialogs/ExportReportCard.h"

namespace onnxlens::widgets {

namespace {

QString statusText(engine::ReportStatus status) {
    switch (status) {
        case engine::ReportStatus::Passed:
            return QStringLiteral("PASS");
        case engine::ReportStatus::Failed:
            return QStringLiteral("FAIL");
        case engine::ReportStatus::Skipped:
            return QStringLiteral("skip");
        case engine::ReportStatus::Warning:
            return QStringLiteral("WARN");
    }
    return {};
}

}  // namespace

ExportReportCard::ExportReportCard(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    heading_ = new QLabel(this);
    heading_->setTextFormat(Qt::PlainText);
    QFont font = heading_->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.2);
    heading_->setFont(font);
    layout->addWidget(heading_);
    rows_ = new QGridLayout;
    rows_->setHorizontalSpacing(14);
    rows_->setColumnStretch(2, 1);
    layout->addLayout(rows_);
    footer_ = new QLabel(this);
    footer_->setTextFormat(Qt::PlainText);
    footer_->setWordWrap(true);
    footer_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(footer_);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    clear();
}

QColor ExportReportCard::statusColor(engine::ReportStatus status) {
    switch (status) {
        case engine::ReportStatus::Passed:
            return QColor(0x1e, 0x8e, 0x3e);
        case engine::ReportStatus::Failed:
            return QColor(0xd9, 0x30, 0x25);
        case engine::ReportStatus::Skipped:
            return QColor(0x80, 0x86, 0x8b);
        case engine::ReportStatus::Warning:
            return QColor(0xc2, 0x6a, 0x00);
    }
    return {};
}

void ExportReportCard::clear() {
    while (QLayoutItem* item = rows_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    report_ = std::make_shared<const engine::ExportReport>();
    hasReport_ = false;
    heading_->setText(tr("No report yet"));
    footer_->clear();
}

void ExportReportCard::setReport(const engine::ExportReport& report) {
    clear();
    report_ = std::make_shared<const engine::ExportReport>(report);
    hasReport_ = true;
    const QString name = QString::fromStdString(
        report.sourceName.empty() ? report.folder.filename().string() : report.sourceName);
    const bool warned = std::any_of(report.lines.begin(), report.lines.end(),
                                    [](const engine::ExportReportLine& l) {
                                        return l.status == engine::ReportStatus::Warning;
                                    });
    heading_->setText(!report.passed ? tr("%1: a check failed").arg(name)
                      : warned ? tr("%1: no check failed, but some cannot be trusted").arg(name)
                               : tr("%1: every check passed").arg(name));
    int row = 0;
    for (const auto& line : report.lines) {
        const QColor color = statusColor(line.status);
        auto* badge = new QLabel(statusText(line.status), this);
        badge->setAlignment(Qt::AlignCenter);
        badge->setMinimumWidth(48);
        badge->setStyleSheet(
            QStringLiteral("QLabel { background: %1; color: white; font-weight: bold; "
                           "border-radius: 4px; padding: 3px 6px; }")
                .arg(color.name()));
        auto* title = new QLabel(QString::fromStdString(line.title), this);
        QFont bold = title->font();
        bold.setBold(true);
        title->setFont(bold);
        auto* figure = new QLabel(QString::fromStdString(line.figure), this);
        figure->setTextFormat(Qt::PlainText);
        figure->setWordWrap(true);
        figure->setTextInteractionFlags(Qt::TextSelectableByMouse);
        figure->setStyleSheet(
            QStringLiteral("QLabel { color: %1; }").arg(color.darker(130).name()));
        rows_->addWidget(badge, row, 0, Qt::AlignTop);
        rows_->addWidget(title, row, 1, Qt::AlignTop);
        rows_->addWidget(figure, row, 2, Qt::AlignTop);
        ++row;
    }
    footer_->setText(tr("Saved as report.md and report.json in %1")
                         .arg(QString::fromStdString(report.folder.string())));
}

bool ExportReportCard::passed() const { return report_->passed; }

int ExportReportCard::lineCount() const { return static_cast<int>(report_->lines.size()); }

QString ExportReportCard::lineText(int i) const {
    if (i < 0 || i >= lineCount()) return {};
    const auto& line = report_->lines[static_cast<std::size_t>(i)];
    return statusText(line.status) + QStringLiteral("  ") + QString::fromStdString(line.title) +
           QStringLiteral("  ") + QString::fromStdString(line.figure);
}

QColor ExportReportCard::lineColor(int i) const {
    if (i < 0 || i >= lineCount()) return {};
    return statusColor(report_->lines[static_cast<std::size_t>(i)].status);
}

}  // namespace onnxlens::widgets
