#include "widgets/dialogs/ExtractDialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

ExtractDialog::ExtractDialog(const QStringList& inputs, const QStringList& outputs, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Extract Subgraph"));
    setObjectName(QStringLiteral("extractDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("The new model reads the input tensors and computes the output "
                                "tensors, keeping only the nodes and weights in between. One "
                                "tensor name per line."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    inputs_ = new QPlainTextEdit(inputs.join(QLatin1Char('\n')), this);
    inputs_->setObjectName(QStringLiteral("extractInputs"));
    outputs_ = new QPlainTextEdit(outputs.join(QLatin1Char('\n')), this);
    outputs_->setObjectName(QStringLiteral("extractOutputs"));
    for (auto* box : {inputs_, outputs_}) box->setMaximumHeight(90);
    form->addRow(tr("inputs"), inputs_);
    form->addRow(tr("outputs"), outputs_);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    auto check = [this] { ok_->setEnabled(!names(outputs_).empty()); };
    connect(outputs_, &QPlainTextEdit::textChanged, this, check);
    check();
}

std::vector<std::string> ExtractDialog::names(const QPlainTextEdit* edit) {
    std::vector<std::string> names;
    for (const QString& line : edit->toPlainText().split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) names.push_back(line.trimmed().toStdString());
    return names;
}

ModelEdit ExtractDialog::edit() const { return extractEdit(names(inputs_), names(outputs_)); }

}  // namespace onnxlens::widgets
