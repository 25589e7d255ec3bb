#pragma once
// Help > About: the versions onnxlens was built with, the same text as `onnxlens --version` and
// `onnxlens-cli --version` (the app passes it in: the widgets layer does not know the build).
#include <QDialog>
#include <QString>

class QPlainTextEdit;

namespace onnxlens::widgets {

class AboutDialog : public QDialog {
    Q_OBJECT
  public:
    AboutDialog(const QString& versionReport, QWidget* parent = nullptr);

    QString versionText() const;
    // Puts the version report on the clipboard (for bug reports).
    void copyVersions() const;

  private:
    QPlainTextEdit* versions_;
};

}  // namespace onnxlens::widgets
