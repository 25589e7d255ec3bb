#pragma once
// Tools > Settings: what the window remembers between sessions (the benchmark's threads, warm-up
// and run counts and profiling, the comparison's tolerances, the exporter's Python, time limit,
// threads and runs), written to the same QSettings keys the panels and the export dialog read
// (widgets/SettingsKeys.h). OK writes them; the window then reloads the open panels.
#include <QDialog>

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace onnxlens::widgets {

class SettingsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit SettingsDialog(QWidget* parent = nullptr);

    // Writes the fields to QSettings; false (and nothing written) when a tolerance is not a
    // number >= 0 or the Python path is empty.
    bool save();
    void accept() override;
    // The fields back to the built-in defaults (not written until OK).
    void restoreDefaults();

    QSpinBox* benchmarkThreads() const { return benchmarkThreads_; }
    QSpinBox* benchmarkWarmup() const { return benchmarkWarmup_; }
    QSpinBox* benchmarkRuns() const { return benchmarkRuns_; }
    QCheckBox* benchmarkProfile() const { return benchmarkProfile_; }
    QLineEdit* compareRtol() const { return compareRtol_; }
    QLineEdit* compareAtol() const { return compareAtol_; }
    QLineEdit* exportPython() const { return exportPython_; }
    QSpinBox* exportTimeout() const { return exportTimeout_; }
    QSpinBox* exportThreads() const { return exportThreads_; }
    QSpinBox* exportWarmup() const { return exportWarmup_; }
    QSpinBox* exportRuns() const { return exportRuns_; }

  private:
    void load();
    void browsePython();

    QSpinBox* benchmarkThreads_;
    QSpinBox* benchmarkWarmup_;
    QSpinBox* benchmarkRuns_;
    QCheckBox* benchmarkProfile_;
    QLineEdit* compareRtol_;
    QLineEdit* compareAtol_;
    QLineEdit* exportPython_;
    QSpinBox* exportTimeout_;
    QSpinBox* exportThreads_;
    QSpinBox* exportWarmup_;
    QSpinBox* exportRuns_;
};

}  // namespace onnxlens::widgets
