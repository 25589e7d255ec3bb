#pragma once
// Edit > Metadata…: one entry of the model's metadata_props, or its doc string, producer or
// domain (the keys setMetadataEdit knows), with its current value. An empty value removes a
// metadata_props entry.
#include <QDialog>
#include <map>

#include "onnxlens/model/ModelEdits.h"

class QComboBox;
class QPlainTextEdit;

namespace onnxlens::widgets {

class MetadataDialog : public QDialog {
    Q_OBJECT
  public:
    explicit MetadataDialog(const onnx::ModelProto& model, QWidget* parent = nullptr);

    ModelEdit edit() const;
    QComboBox* keyBox() const { return key_; }
    QPlainTextEdit* valueEdit() const { return value_; }

  private:
    std::map<QString, QString> current_;
    QComboBox* key_;
    QPlainTextEdit* value_;
};

}  // namespace onnxlens::widgets
