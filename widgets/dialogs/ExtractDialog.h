#pragma once
// Edit > Extract Subgraph…: the tensors where the new model starts (its inputs) and ends (its
// outputs), one name per line, filled from the graph's selection or context menu. OK gives one
// extract edit (onnx.utils.extract_model's semantics; a cut that leaves a tensor undefined is an
// error of the edit, naming the tensor).
#include <QDialog>
#include <QStringList>

#include "onnxlens/model/ModelEdits.h"

class QPlainTextEdit;
class QPushButton;

namespace onnxlens::widgets {

class ExtractDialog : public QDialog {
    Q_OBJECT
  public:
    ExtractDialog(const QStringList& inputs, const QStringList& outputs, QWidget* parent = nullptr);

    ModelEdit edit() const;
    QPlainTextEdit* inputsEdit() const { return inputs_; }
    QPlainTextEdit* outputsEdit() const { return outputs_; }
    QPushButton* okButton() const { return ok_; }

  private:
    static std::vector<std::string> names(const QPlainTextEdit* edit);
    QPlainTextEdit* inputs_;
    QPlainTextEdit* outputs_;
    QPushButton* ok_;
};

}  // namespace onnxlens::widgets
