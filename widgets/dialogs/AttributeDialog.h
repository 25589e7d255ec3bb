#pragma once
// Edit > Edit Attribute…: one attribute of one node, chosen among the attributes its operator's
// schema declares (and those the node has), shown with its type and current value. The value is
// typed as `onnxlens-cli edit --set-attr` reads it ("3", "0.5", "[1,2,3]", "abc"); the dialog
// checks that the text reads as the attribute's type, and the edit itself checks it against the
// schema (an error names the edit, and the model stays as it was).
#include <QDialog>
#include <map>

#include "onnxlens/model/ModelEdits.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace onnxlens::widgets {

class AttributeDialog : public QDialog {
    Q_OBJECT
  public:
    // `node`: how the edit names the node (its name, or profileNameOf for an unnamed one).
    AttributeDialog(const onnx::NodeProto& proto, const QString& node, int opset,
                    QWidget* parent = nullptr);

    ModelEdit edit() const;
    QComboBox* attributeBox() const { return attribute_; }
    QLineEdit* valueEdit() const { return value_; }
    QPushButton* okButton() const { return ok_; }
    QString problem() const;  // why OK is disabled

    // The value as text in the edit syntax ("[1, 2]" for ints).
    static QString valueText(const onnx::AttributeProto& attribute);

  private:
    void onAttributeChosen();
    void check();

    QString node_;
    struct Choice {
        int type = 0;  // onnx::AttributeProto::AttributeType, 0 unknown
        QString current;
        QString description;
    };
    std::map<QString, Choice> choices_;
    QComboBox* attribute_;
    QLabel* about_;
    QLineEdit* value_;
    QLabel* problem_;
    QPushButton* ok_;
};

}  // namespace onnxlens::widgets
