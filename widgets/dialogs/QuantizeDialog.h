#pragma once
// Tools > Quantize Model...: dynamic int8 quantization of the open model (MatMul, Gemm, Conv and
// the Gather of embedding tables; QOperator or QDQ), or int4 weights (com.microsoft MatMulNBits:
// block size, symmetric or not, accuracy level), with the options of `onnxlens-cli quantize`; the
// choices are remembered (QSettings, widgets/SettingsKeys.h). Then the accuracy report (both models
// run on the test data sets beside the model, else seeded random inputs), all on a worker thread
// with progress and Cancel. The report card shows the verdict against the tolerance set here; "Open
// int8 model" opens the written model in a new tab (the window then colours it by quantization
// error).
#include <QDialog>
#include <QString>
#include <atomic>
#include <map>
#include <memory>
#include <string>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace onnxlens::engine {
struct QuantizationReport;
}  // namespace onnxlens::engine

namespace onnxlens::widgets {

class QuantizationReportCard;

class QuantizeDialog : public QDialog {
    Q_OBJECT
  public:
    enum class State { Idle, Running, Done, Failed, Cancelled };

    explicit QuantizeDialog(QWidget* parent = nullptr);
    ~QuantizeDialog() override;

    // The model to quantize; proposes the output chosen for it last time (QSettings), else
    // "<name>.int8.onnx" beside it.
    void setModel(const QString& path);
    // Browse…: a save dialog for the output, then setOutputPath.
    void chooseOutput();
    // The output, remembered for the current model.
    void setOutputPath(const QString& path);
    QString modelPath() const { return model_; }

    bool start();  // false (errorText()) when a run is under way or the options are invalid
    void cancel();

    State state() const { return state_; }
    QString errorText() const { return error_; }
    QString statusText() const;
    QString outputPath() const;
    QString reportFolder() const { return reportFolder_; }
    std::shared_ptr<const engine::QuantizationReport> report() const { return report_; }
    // profileNameOf -> SQNR (dB) of the int8 model's nodes and of the float nodes they replace.
    std::map<std::string, double> sqnrByNode() const;

    QuantizationReportCard* reportCard() const { return card_; }
    QLineEdit* outputEdit() const { return output_; }
    QPushButton* browseButton() const { return browse_; }
    QCheckBox* perChannelBox() const { return perChannel_; }
    QCheckBox* opTypeBox(const QString& op) const;
    QComboBox* formatBox() const { return format_; }
    // int4 only (enabled when the format is int4): block size 16-256, symmetric, accuracy level.
    QComboBox* blockSizeBox() const { return blockSize_; }
    QCheckBox* symmetricBox() const { return symmetric_; }
    QSpinBox* accuracyLevelBox() const { return accuracyLevel_; }
    bool int4Chosen() const;
    QLineEdit* excludeEdit() const { return exclude_; }
    QDoubleSpinBox* toleranceBox() const { return tolerance_; }
    QSpinBox* runsBox() const { return runs_; }
    QPushButton* openButton() const { return open_; }

  signals:
    void finished(bool passed);
    void failed(const QString& message);
    void openInt8Requested(const QString& path);

  private:
    struct Outcome;
    void setBusy(bool busy);
    void updateFormatControls();
    void loadSettings();
    void saveSettings() const;
    void onFinished(const Outcome& outcome);

    QString model_;
    QLineEdit* output_;
    QPushButton* browse_;
    QCheckBox* perChannel_;
    QCheckBox* matMul_;
    QCheckBox* gemm_;
    QCheckBox* conv_;
    QCheckBox* gather_;
    QComboBox* format_;
    QComboBox* blockSize_;
    QCheckBox* symmetric_;
    QSpinBox* accuracyLevel_;
    bool busy_ = false;
    QLineEdit* exclude_;
    QDoubleSpinBox* tolerance_;
    QSpinBox* threads_;
    QSpinBox* runs_;
    QCheckBox* benchmark_;
    QPushButton* start_;
    QPushButton* cancel_;
    QPushButton* open_;
    QProgressBar* progress_;
    QLabel* status_;
    QuantizationReportCard* card_;
    State state_ = State::Idle;
    QString error_;
    QString written_;
    QString reportFolder_;
    std::shared_ptr<std::atomic<bool>> cancelFlag_;
    std::shared_ptr<const engine::QuantizationReport> report_;
};

}  // namespace onnxlens::widgets
