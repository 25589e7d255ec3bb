#include "widgets/dialogs/ShortcutsDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QMenu>
#include <QMenuBar>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>

namespace onnxlens::widgets {

namespace {

QString withoutMnemonics(QString text) {
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    return text;
}

QString shortcutText(const QAction* action) {
    QStringList keys;
    for (const QKeySequence& key : action->shortcuts())
        if (!key.isEmpty()) keys << key.toString(QKeySequence::NativeText);
    return keys.join(QStringLiteral(", "));
}

void collectMenu(const QMenu* menu, const QString& path, std::vector<ShortcutEntry>& entries,
                 QSet<const QAction*>& seen) {
    for (const QAction* action : menu->actions()) {
        if (action->isSeparator()) continue;
        if (const QMenu* sub = action->menu()) {
            collectMenu(sub, path + QStringLiteral(" > ") + withoutMnemonics(sub->title()), entries,
                        seen);
            continue;
        }
        const QString keys = shortcutText(action);
        if (keys.isEmpty() || seen.contains(action)) continue;
        seen.insert(action);
        entries.push_back({path, withoutMnemonics(action->text()), keys});
    }
}

}  // namespace

std::vector<ShortcutEntry> collectShortcuts(const QWidget* window) {
    std::vector<ShortcutEntry> entries;
    QSet<const QAction*> seen;
    if (const auto* bar = window->findChild<QMenuBar*>()) {
        for (const QAction* top : bar->actions())
            if (const QMenu* menu = top->menu())
                collectMenu(menu, withoutMnemonics(menu->title()), entries, seen);
    }
    // Actions outside the menus: panel buttons and keys of the graph view.
    for (const QAction* action : window->findChildren<QAction*>()) {
        const QString keys = shortcutText(action);
        if (keys.isEmpty() || seen.contains(action)) continue;
        seen.insert(action);
        const QObject* owner = action->parent();
        QString where = owner && owner->isWidgetType()
                            ? static_cast<const QWidget*>(owner)->windowTitle()
                            : QString();
        if (where.isEmpty() && owner) where = owner->objectName();
        if (where.isEmpty() && owner) where = QString::fromLatin1(owner->metaObject()->className());
        entries.push_back({where, withoutMnemonics(action->text()), keys});
    }
    return entries;
}

ShortcutsDialog::ShortcutsDialog(const QWidget* window, QWidget* parent)
    : QDialog(parent), entries_(collectShortcuts(window)) {
    setWindowTitle(tr("Keyboard Shortcuts"));
    table_ = new QTableWidget(static_cast<int>(entries_.size()), 3, this);
    table_->setObjectName(QStringLiteral("shortcutsTable"));
    table_->setHorizontalHeaderLabels({tr("Shortcut"), tr("Action"), tr("Where")});
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    for (int row = 0; row < static_cast<int>(entries_.size()); ++row) {
        const auto& e = entries_[static_cast<std::size_t>(row)];
        table_->setItem(row, 0, new QTableWidgetItem(e.shortcut));
        table_->setItem(row, 1, new QTableWidgetItem(e.action));
        table_->setItem(row, 2, new QTableWidgetItem(e.where));
    }
    table_->resizeColumnsToContents();
    table_->resizeRowsToContents();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setMinimumSize(560, 420);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_, 1);
    layout->addWidget(buttons);
}

}  // namespace onnxlens::widgets
