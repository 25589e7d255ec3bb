#include "widgets/dialogs/SetDimsDialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

SetDimsDialog::SetDimsDialog(const QString& tensor, const std::vector<QString>& dims,
                             QWidget* parent)
    : QDialog(parent), tensor_(tensor), original_(dims) {
    setWindowTitle(tr("Set Dimensions of %1").arg(tensor));
    setObjectName(QStringLiteral("setDimsDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("A positive number fixes an axis; a name (batch, sequence) makes it dynamic."), this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    for (std::size_t axis = 0; axis < dims.size(); ++axis) {
        auto* box = new QLineEdit(dims[axis] == QStringLiteral("?") ? QString() : dims[axis], this);
        box->setObjectName(QStringLiteral("axis%1").arg(axis));
        connect(box, &QLineEdit::textChanged, this, &SetDimsDialog::check);
        form->addRow(tr("axis %1").arg(axis), box);
        boxes_.push_back(box);
    }
    layout->addLayout(form);
    problem_ = new QLabel(this);
    problem_->setStyleSheet(QStringLiteral("color:#b3261e;"));
    layout->addWidget(problem_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    ok_ = buttons->button(QDialogButtonBox::Ok);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    check();
}

QString SetDimsDialog::problem() const {
    if (boxes_.empty()) return tr("%1 has no known shape").arg(tensor_);
    for (std::size_t axis = 0; axis < boxes_.size(); ++axis) {
        const QString text = boxes_[axis]->text().trimmed();
        if (text.isEmpty()) return tr("axis %1 is empty").arg(axis);
        bool number = false;
        const qlonglong value = text.toLongLong(&number);
        if (number && value <= 0)
            return tr("axis %1: a dimension must be positive (or a name)").arg(axis);
        if (!number && (text.startsWith(QLatin1Char('-')) || text.at(0).isDigit()))
            return tr("axis %1: %2 is neither a positive number nor a name").arg(axis).arg(text);
    }
    return {};
}

void SetDimsDialog::check() {
    const QString why = problem();
    problem_->setText(why);
    problem_->setVisible(!why.isEmpty());
    ok_->setEnabled(why.isEmpty() && !edits().empty());
}

std::vector<ModelEdit> SetDimsDialog::edits() const {
    std::vector<ModelEdit> edits;
    for (std::size_t axis = 0; axis < boxes_.size(); ++axis) {
        const QString text = boxes_[axis]->text().trimmed();
        if (text.isEmpty() || text == original_[axis]) continue;
        edits.push_back(
            setDimEdit(tensor_.toStdString(), static_cast<std::int64_t>(axis), text.toStdString()));
    }
    return edits;
}

}  // namespace onnxlens::widgets
