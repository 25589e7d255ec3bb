#pragma once
// Edit > Set Dimensions…: one box per axis of a graph input or output, filled with its dims as
// they are ("1", "batch", "?"); a positive number fixes the axis, a name makes it symbolic. OK
// gives one set-dim edit per changed axis (applied as one undoable step); a dim <= 0 or an empty
// box keeps OK disabled and says why.
#include <QDialog>
#include <vector>

#include "onnxlens/model/ModelEdits.h"

class QLabel;
class QLineEdit;
class QPushButton;

namespace onnxlens::widgets {

class SetDimsDialog : public QDialog {
    Q_OBJECT
  public:
    SetDimsDialog(const QString& tensor, const std::vector<QString>& dims,
                  QWidget* parent = nullptr);

    std::vector<ModelEdit> edits() const;
    QLineEdit* axisEdit(int axis) const { return boxes_.at(static_cast<std::size_t>(axis)); }
    QPushButton* okButton() const { return ok_; }
    QString problem() const;  // why OK is disabled; empty when it is not

  private:
    void check();

    QString tensor_;
    std::vector<QString> original_;
    std::vector<QLineEdit*> boxes_;
    QLabel* problem_;
    QPushButton* ok_;
};

}  // namespace onnxlens::widgets
