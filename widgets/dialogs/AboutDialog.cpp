#include "widgets/dialogs/AboutDialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

AboutDialog::AboutDialog(const QString& versionReport, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("About onnxlens"));
    auto* icon = new QLabel(this);
    icon->setPixmap(QApplication::windowIcon().pixmap(64, 64));
    const QString firstLine = versionReport.section(QLatin1Char('\n'), 0, 0);
    auto* title = new QLabel(tr("<h2>%1</h2>An inspector for ONNX models with an embedded CPU "
                                "engine.<br>Graph layout by Graphviz dot.")
                                 .arg(firstLine.toHtmlEscaped()),
                             this);
    title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* header = new QHBoxLayout;
    header->addWidget(icon, 0, Qt::AlignTop);
    header->addWidget(title, 1);

    // "label: value" per line, without the report's indentation.
    QStringList lines;
    for (const QString& line :
         versionReport.section(QLatin1Char('\n'), 1).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        lines << line.trimmed();
    versions_ = new QPlainTextEdit(lines.join(QLatin1Char('\n')), this);
    versions_->setObjectName(QStringLiteral("aboutVersions"));
    versions_->setReadOnly(true);
    versions_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    versions_->setMinimumSize(460, 190);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton* copy = buttons->addButton(tr("&Copy Versions"), QDialogButtonBox::ActionRole);
    connect(copy, &QPushButton::clicked, this, &AboutDialog::copyVersions);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(versions_, 1);
    layout->addWidget(buttons);
}

QString AboutDialog::versionText() const { return versions_->toPlainText(); }

void AboutDialog::copyVersions() const {
    QApplication::clipboard()->setText(windowTitle() + QLatin1Char('\n') + versionText() +
                                       QLatin1Char('\n'));
}

}  // namespace onnxlens::widgets
