#include "widgets/graph/FindBar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace onnxlens::widgets {

FindBar::FindBar(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* row = new QHBoxLayout;
    edit_ = new QLineEdit(this);
    edit_->setPlaceholderText(tr("Find node name, op type or tensor name"));
    edit_->setClearButtonEnabled(true);
    count_ = new QLabel(this);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("×"));
    close->setAutoRaise(true);
    close->setToolTip(tr("Close (Esc)"));
    row->addWidget(edit_, 1);
    row->addWidget(count_);
    row->addWidget(close);
    layout->addLayout(row);
    results_ = new QListWidget(this);
    results_->setMaximumHeight(180);
    results_->hide();
    layout->addWidget(results_);
    connect(edit_, &QLineEdit::textChanged, this, &FindBar::search);
    connect(edit_, &QLineEdit::returnPressed, this, [this] {
        if (results_->count() > 0) chooseResult(std::max(0, results_->currentRow()));
    });
    connect(results_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { chooseResult(results_->row(item)); });
    connect(results_, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { chooseResult(results_->row(item)); });
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    edit_->installEventFilter(this);
    hide();
}

void FindBar::activate() {
    show();
    edit_->setFocus();
    edit_->selectAll();
}

void FindBar::setQuery(const QString& text) { edit_->setText(text); }

int FindBar::resultCount() const { return results_->count(); }

std::vector<int> FindBar::findNodes(const ViewGraph& view, const QString& query, int limit) {
    std::vector<int> found;
    const std::string needle = query.trimmed().toLower().toStdString();
    if (needle.empty()) return found;
    auto contains = [&](const std::string& text) {
        if (text.size() < needle.size()) return false;
        auto it = std::search(
            text.begin(), text.end(), needle.begin(), needle.end(),
            [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
        return it != text.end();
    };
    for (int n = 0;
         n < static_cast<int>(view.nodes.size()) && static_cast<int>(found.size()) < limit; ++n) {
        const auto& node = view.nodes[n];
        bool match = contains(node.name) || contains(node.opType);
        for (int t : node.inputs)
            if (!match && t >= 0) match = contains(view.tensors[t].name);
        for (int t : node.outputs)
            if (!match && t >= 0) match = contains(view.tensors[t].name);
        if (match) found.push_back(n);
    }
    return found;
}

void FindBar::search() {
    results_->clear();
    if (!view_) return;
    auto found = findNodes(*view_, edit_->text());
    for (int n : found) {
        const auto& node = view_->nodes[n];
        auto* item = new QListWidgetItem(
            QStringLiteral("%1  —  %2")
                .arg(QString::fromStdString(node.opType),
                     QString::fromStdString(node.name.empty() ? "(unnamed)" : node.name)),
            results_);
        item->setData(Qt::UserRole, n);
    }
    results_->setVisible(!found.empty());
    if (!found.empty()) results_->setCurrentRow(0);
    count_->setText(edit_->text().isEmpty()
                        ? QString()
                        : tr("%n match(es)", nullptr, static_cast<int>(found.size())));
}

void FindBar::chooseResult(int row) {
    auto* item = results_->item(row);
    if (!item) return;
    emit nodeChosen(item->data(Qt::UserRole).toInt());
}

bool FindBar::eventFilter(QObject* watched, QEvent* event) {
    if (watched == edit_ && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() == Qt::Key_Escape) {
            hide();
            return true;
        }
        if (key->key() == Qt::Key_Down || key->key() == Qt::Key_Up) {
            int row = results_->currentRow() + (key->key() == Qt::Key_Down ? 1 : -1);
            if (row >= 0 && row < results_->count()) results_->setCurrentRow(row);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace onnxlens::widgets
