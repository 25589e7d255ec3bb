#include "widgets/dialogs/AttributeDialog.h"

#include <onnx/defs/schema.h>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

namespace {

QString typeName(int type) {
    switch (type) {
        case onnx::AttributeProto::INT:
            return QStringLiteral("int");
        case onnx::AttributeProto::FLOAT:
            return QStringLiteral("float");
        case onnx::AttributeProto::STRING:
            return QStringLiteral("string");
        case onnx::AttributeProto::INTS:
            return QStringLiteral("ints");
        case onnx::AttributeProto::FLOATS:
            return QStringLiteral("floats");
        case onnx::AttributeProto::STRINGS:
            return QStringLiteral("strings");
        case onnx::AttributeProto::TENSOR:
            return QStringLiteral("tensor (a .npy or .pb file)");
        case onnx::AttributeProto::GRAPH:
            return QStringLiteral("graph");
        default:
            return QStringLiteral("unknown type");
    }
}

QStringList listItems(QString text) {
    text = text.trimmed();
    if (text.startsWith(QLatin1Char('[')) && text.endsWith(QLatin1Char(']')))
        text = text.mid(1, text.size() - 2);
    if (text.trimmed().isEmpty()) return {};
    QStringList items = text.split(QLatin1Char(','));
    for (QString& item : items) item = item.trimmed();
    return items;
}

}  // namespace

QString AttributeDialog::valueText(const onnx::AttributeProto& a) {
    auto joined = [](const auto& values, auto format) {
        QStringList parts;
        for (const auto& v : values) parts << format(v);
        return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
    };
    switch (a.type()) {
        case onnx::AttributeProto::INT:
            return QString::number(a.i());
        case onnx::AttributeProto::FLOAT:
            return QString::number(a.f(), 'g', 9);
        case onnx::AttributeProto::STRING:
            return QString::fromStdString(a.s());
        case onnx::AttributeProto::INTS:
            return joined(a.ints(), [](std::int64_t v) { return QString::number(v); });
        case onnx::AttributeProto::FLOATS:
            return joined(a.floats(), [](float v) { return QString::number(v, 'g', 9); });
        case onnx::AttributeProto::STRINGS:
            return joined(a.strings(),
                          [](const std::string& v) { return QString::fromStdString(v); });
        default:
            return {};
    }
}

AttributeDialog::AttributeDialog(const onnx::NodeProto& proto, const QString& node, int opset,
                                 QWidget* parent)
    : QDialog(parent), node_(node) {
    setWindowTitle(tr("Edit Attribute of %1").arg(node));
    setObjectName(QStringLiteral("attributeDialog"));
    if (const auto* schema = onnx::OpSchemaRegistry::Schema(proto.op_type(), opset, proto.domain()))
        for (const auto& [name, attribute] : schema->attributes())
            choices_[QString::fromStdString(name)] = {
                static_cast<int>(attribute.type), QString(),
                QString::fromStdString(attribute.description)};
    for (const auto& attribute : proto.attribute()) {
        Choice& choice = choices_[QString::fromStdString(attribute.name())];
        if (choice.type == 0) choice.type = attribute.type();
        choice.current = valueText(attribute);
    }
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    attribute_ = new QComboBox(this);
    attribute_->setObjectName(QStringLiteral("attributeBox"));
    for (const auto& [name, choice] : choices_)
        if (choice.type != onnx::AttributeProto::GRAPH) attribute_->addItem(name);
    form->addRow(tr("attribute"), attribute_);
    about_ = new QLabel(this);
    about_->setWordWrap(true);
    form->addRow(tr("type"), about_);
    value_ = new QLineEdit(this);
    value_->setObjectName(QStringLiteral("valueEdit"));
    form->addRow(tr("value"), value_);
    layout->addLayout(form);
    problem_ = new QLabel(this);
    problem_->setStyleSheet(QStringLiteral("color:#b3261e;"));
    layout->addWidget(problem_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    connect(attribute_, &QComboBox::currentTextChanged, this, &AttributeDialog::onAttributeChosen);
    connect(value_, &QLineEdit::textChanged, this, &AttributeDialog::check);
    onAttributeChosen();
}

void AttributeDialog::onAttributeChosen() {
    auto it = choices_.find(attribute_->currentText());
    if (it == choices_.end()) {
        about_->clear();
        value_->clear();
        check();
        return;
    }
    about_->setText(typeName(it->second.type) +
                    (it->second.current.isEmpty() ? tr(", not set") : QString()));
    about_->setToolTip(it->second.description);
    value_->setText(it->second.current);
    check();
}

QString AttributeDialog::problem() const {
    auto it = choices_.find(attribute_->currentText());
    if (it == choices_.end()) return tr("The operator has no attributes to edit");
    const QString text = value_->text().trimmed();
    if (text.isEmpty() && it->second.type != onnx::AttributeProto::STRING)
        return tr("Type a value");
    bool ok = true;
    switch (it->second.type) {
        case onnx::AttributeProto::INT:
            text.toLongLong(&ok);
            break;
        case onnx::AttributeProto::FLOAT:
            text.toDouble(&ok);
            break;
        case onnx::AttributeProto::INTS:
            for (const QString& item : listItems(text)) {
                item.toLongLong(&ok);
                if (!ok) break;
            }
            break;
        case onnx::AttributeProto::FLOATS:
            for (const QString& item : listItems(text)) {
                item.toDouble(&ok);
                if (!ok) break;
            }
            break;
        default:
            break;
    }
    if (!ok) return tr("%1 does not read as %2").arg(text, typeName(it->second.type));
    if (text == it->second.current) return tr("Unchanged");
    return {};
}

void AttributeDialog::check() {
    const QString why = problem();
    problem_->setText(why);
    ok_->setEnabled(why.isEmpty());
}

ModelEdit AttributeDialog::edit() const {
    return setAttributeEdit(node_.toStdString(), attribute_->currentText().toStdString(),
                            value_->text().trimmed().toStdString());
}

}  // namespace onnxlens::widgets
