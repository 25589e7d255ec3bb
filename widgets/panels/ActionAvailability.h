#pragma once
// A dock's action and its button, enabled with what they do as tooltip and status tip, or greyed
// with why not ("model.onnx: 3 node(s) cannot run on the engine: ..."): a disabled action says
// why in its tooltip, in the status bar when hovered in a menu, and (MainWindow) when its
// shortcut is pressed.
#include <QAbstractButton>
#include <QAction>
#include <QString>

namespace onnxlens::widgets {

// `whyNot` empty: enabled.
inline void setAvailability(QAction* action, QAbstractButton* button, const QString& what,
                            const QString& whyNot) {
    const bool enabled = whyNot.isEmpty();
    const QString tip = enabled ? what : whyNot;
    action->setEnabled(enabled);
    action->setToolTip(tip);
    action->setStatusTip(tip);
    if (button) {
        button->setEnabled(enabled);
        button->setToolTip(tip);
    }
}

}  // namespace onnxlens::widgets
