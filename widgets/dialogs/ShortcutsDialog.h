#pragma once
// Help > Keyboard Shortcuts: every action of the window that has a shortcut, read from the actions
// themselves (menus first, with their menu path, then actions outside the menus), so the list
// cannot drift from what the keys do.
#include <QDialog>
#include <QString>
#include <vector>

class QTableWidget;
class QWidget;

namespace onnxlens::widgets {

struct ShortcutEntry {
    QString where;     // "File", "View > Zoom", or the widget holding an action outside the menus
    QString action;    // the action's text without mnemonics
    QString shortcut;  // every shortcut of the action, in the platform's text, comma-separated
};

// Every action with a shortcut under `window` (its menu bar included), each once.
std::vector<ShortcutEntry> collectShortcuts(const QWidget* window);

class ShortcutsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit ShortcutsDialog(const QWidget* window, QWidget* parent = nullptr);

    const std::vector<ShortcutEntry>& entries() const { return entries_; }

  private:
    std::vector<ShortcutEntry> entries_;
    QTableWidget* table_;
};

}  // namespace onnxlens::widgets
