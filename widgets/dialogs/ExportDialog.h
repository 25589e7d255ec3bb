#pragma once
// Tools > Export from PyTorch & Benchmark: the exporter script as a QProcess (time limit, log
// streamed, Cancel at any time), then engine::validateExport on a worker thread and the report
// card. The options are remembered in QSettings. The dialog never touches the main window's
// models: it announces the exported model with modelExported() and the window opens it.
#include <QDialog>
#include <QProcess>
#include <atomic>
#include <memory>

#include "onnxlens/workflows/ExporterCommand.h"  // (ExportReport.h is not included: see ExportReportCard.h)

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace onnxlens::widgets {

class ExportReportCard;

class ExportDialog : public QDialog {
    Q_OBJECT
  public:
    enum class State { Idle, Exporting, Validating, Done, Failed, Cancelled };

    explicit ExportDialog(QWidget* parent = nullptr);
    ~ExportDialog() override;

    // The form's contents as a request, and back (tests and settings use these).
    engine::ExportRequest request() const;
    void setRequest(const engine::ExportRequest& request);

    // Starts the export with the form's options; false (and the reason in errorText()) when the
    // options are invalid or a run is under way.
    bool startExport();
    void cancel();

    State state() const { return state_; }
    QString errorText() const { return errorText_; }
    QString logText() const;
    ExportReportCard* reportCard() const { return card_; }
    // "Quantize (int8, dynamic)": model.int8.onnx beside model.onnx, with its rows on the card.
    QCheckBox* quantizeBox() const { return quantize_; }

    // The options as remembered in QSettings (also after the Settings dialog changed them).
    void loadSettings();

  signals:
    void modelExported(const QString& modelPath);  // model.onnx is written; open it
    void reportReady(bool passed);                 // the report card shows the validation
    void exportFailed(const QString& message);     // failed or cancelled; nothing was opened

  protected:
    void closeEvent(QCloseEvent* event) override;

  private:
    void buildForm();
    void saveSettings() const;
    void updateSourceWidgets();
    void browseSource();
    void browseOutDir();
    void browsePython();
    void appendLog(const QString& text);
    void onProcessOutput();
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onProcessError(QProcess::ProcessError error);
    void finishExport(const engine::ExporterOutcome& outcome);
    void startValidation();
    void fail(const QString& message, const QString& hint, State state);
    void setBusy(bool busy);

    QComboBox* sourceKind_;
    QLineEdit* source_;
    QPushButton* browseSource_;
    QLineEdit* inputShape_;
    QLineEdit* outDir_;
    QSpinBox* opset_;
    QCheckBox* dynamicBatch_;
    QCheckBox* quantize_;
    QComboBox* task_;
    QSpinBox* runs_;
    QSpinBox* warmup_;
    QSpinBox* threads_;
    QLineEdit* python_;
    QSpinBox* timeout_;
    QPushButton* exportButton_;
    QPushButton* cancelButton_;
    QPushButton* closeButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QPlainTextEdit* log_;
    ExportReportCard* card_;

    QProcess* process_ = nullptr;
    QTimer* deadline_;
    QByteArray pendingOut_, stderr_;
    engine::ExportRequest running_;
    bool timedOut_ = false, cancelRequested_ = false, startFailed_ = false;
    std::shared_ptr<std::atomic<bool>> validationCancel_;
    State state_ = State::Idle;
    QString errorText_;
};

}  // namespace onnxlens::widgets
