#include "widgets/dialogs/MetadataDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

MetadataDialog::MetadataDialog(const onnx::ModelProto& model, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Model Metadata"));
    setObjectName(QStringLiteral("metadataDialog"));
    auto text = [](const std::string& s) { return QString::fromStdString(s); };
    current_[QStringLiteral("doc_string")] = text(model.doc_string());
    current_[QStringLiteral("producer_name")] = text(model.producer_name());
    current_[QStringLiteral("producer_version")] = text(model.producer_version());
    current_[QStringLiteral("domain")] = text(model.domain());
    current_[QStringLiteral("graph_doc_string")] = text(model.graph().doc_string());
    for (const auto& entry : model.metadata_props())
        current_[text(entry.key())] = text(entry.value());
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    key_ = new QComboBox(this);
    key_->setObjectName(QStringLiteral("metadataKey"));
    key_->setEditable(true);
    for (const auto& [key, value] : current_) key_->addItem(key);
    value_ = new QPlainTextEdit(this);
    value_->setObjectName(QStringLiteral("metadataValue"));
    value_->setMaximumHeight(120);
    form->addRow(tr("key"), key_);
    form->addRow(tr("value"), value_);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    QPushButton* ok = buttons->button(QDialogButtonBox::Ok);
    connect(key_, &QComboBox::currentTextChanged, this, [this, ok](const QString& key) {
        auto it = current_.find(key.trimmed());
        value_->setPlainText(it == current_.end() ? QString() : it->second);
        ok->setEnabled(!key.trimmed().isEmpty());
    });
    key_->setCurrentText(QStringLiteral("doc_string"));
    value_->setPlainText(current_[QStringLiteral("doc_string")]);
}

ModelEdit MetadataDialog::edit() const {
    return setMetadataEdit(key_->currentText().trimmed().toStdString(),
                           value_->toPlainText().toStdString());
}

}  // namespace onnxlens::widgets
