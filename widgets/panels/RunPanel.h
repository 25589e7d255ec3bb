#pragma once
// The Run dock: the graph's inputs (dtype, declared shape, a source per input), the symbolic
// dims (editable, remembered per model), Run / Cancel with a progress indication, and after a
// run each output's dtype, shape, statistics, values, histogram and, for 2-D logits, the top 5
// classes. A decoder with a KV cache runs its prefill with no dims typed (past length 0, the
// mask ones, positions 0..n-1: DecoderInputs.h). It shows the current tab's ModelController:
// the engine work is the controller's, the input choices are published to it (Compare and
// Benchmark use them), and its last run is shown again when its tab comes back.
#include <QPointer>
#include <QWidget>
#include <functional>
#include <map>
#include <memory>

#include "widgets/panels/DecoderInputs.h"
#include "widgets/panels/InputSources.h"
#include "widgets/panels/RunOutputsView.h"
#include "widgets/workers/EngineWorker.h"
#include "widgets/workers/ModelController.h"

class QAction;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;
class QTimer;

namespace onnxlens::widgets {

class RunPanel : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kValueRows = RunOutputsView::kValueRows;
    enum InputColumn { NameColumn, TypeColumn, SourceColumn, SettingColumn, StatusColumn };

    explicit RunPanel(QWidget* parent = nullptr);
    ~RunPanel() override;

    // The current model tab changed: shows its controller (compiling its session the first time;
    // nullptr: no model).
    void setController(ModelController* controller);
    ModelController* controller() const { return controller_; }
    std::shared_ptr<const CompiledModel> compiledModel() const { return compiled_; }
    bool isReady() const { return compiled_ != nullptr; }
    bool isBusy() const { return busy_; }
    // run() was called and its result (outputs, failure or cancel) has not arrived yet.
    bool isAwaitingRun() const { return awaitingRun_; }

    void run();
    void cancel();
    // The model imports an opset newer than the engine knows: compile it anyway (the button
    // shown beside Run then).
    void runAnyway();
    QPushButton* runAnywayButton() const { return runAnywayButton_; }
    QAction* runAction() const { return runAction_; }
    QAction* cancelAction() const { return cancelAction_; }

    // Symbolic dims and unnamed (`?`) dims as "input:axis" (remembered per model in QSettings).
    QStringList symbols() const;
    qint64 symbolValue(const QString& symbol) const;  // -1 when there is no such symbol
    void setSymbolValue(const QString& symbol, qint64 value);
    engine::SymbolBindings symbolBindings() const;

    void setInputSource(const QString& input, const InputSource& source);
    InputSource inputSource(const QString& input) const;
    QString inputStatus(const QString& input) const;  // the row's message ("" when none)
    bool inputHasError(const QString& input) const;
    void setSeed(quint64 seed);
    quint64 seed() const;
    void setImagePreprocessing(const ImagePreprocessing& preprocessing);
    // Sets every input to the File source of a test data set (one found beside the model, by
    // index, or any folder). Returns an error message, empty on success.
    QString fillFromDataSet(int index);
    QString fillFromFolder(const QString& folder);

    // Everything a run needs, copied (safe to hand to another thread). Published to the
    // controller as it changes: Compare and Benchmark read it there.
    InputChoices currentChoices() const;

    std::shared_ptr<const RunOutcome> lastOutcome() const { return outcome_; }
    QString statusText() const;
    QTableWidget* inputsTable() const { return inputs_; }
    QTableWidget* dimsTable() const { return dims_; }
    QTableWidget* outputsTable() const { return outputsView_->outputsTable(); }
    QTableWidget* valuesTable() const { return outputsView_->valuesTable(); }
    QTableWidget* topTable() const { return outputsView_->topTable(); }
    QChartView* histogramView() const { return outputsView_->histogramView(); }
    QTabWidget* outputTabs() const { return outputsView_->outputTabs(); }
    void showOutput(int index);

  signals:
    void compiled();
    void compileFailed(const QString& message);
    void runFinished();
    void runFailed(const QString& message);
    void runCancelled();
    void busyChanged(bool busy);

  private:
    void buildActions();
    QWidget* buildInputsBox();
    QLayout* buildRunRow();
    void connectController();
    void onCompiled();
    void clearModel();
    void showCompileError(const QString& message);
    // The controller's input choices back on the rows (the tab came back, or it recompiled).
    void applyChoices(const InputChoices& choices);
    void publishChoices();
    void showOutcome(const std::shared_ptr<const RunOutcome>& outcome);
    void buildInputs();
    void buildDims();
    void setBusy(bool busy, const QString& what = {});
    // Run and Ctrl+R enabled, or greyed with why (ModelController::unavailableReason, busy).
    void updateRunAvailability();
    void setStatus(const QString& text, bool error = false);
    void setRowStatus(int row, const QString& text, bool error);
    void onSourceChanged(int row);
    void chooseFileFor(int row);
    void saveDims();
    void onRunFinished(const std::shared_ptr<const RunOutcome>& outcome);
    void onInputsRejected(const std::map<std::string, std::string>& problems);
    int rowOf(const QString& input) const;
    // The random range row `row` starts with: its index range, else the dtype's default.
    std::pair<double, double> randomRangeFor(int row) const;
    QString settingsGroup() const;
    // A decoder (decoder_): its past length row starts at 0, its mask's length row follows
    // past + sequence, the mask and use_cache_branch rows take ones and the position ids rows
    // positions (RunPanelDecoder.cpp).
    void applyDecoderDefaults();

    QPointer<ModelController> controller_;
    std::shared_ptr<const ModelDocument> document_;
    bool applyingChoices_ = false;
    std::shared_ptr<const CompiledModel> compiled_;
    // The inputs in the rows: the compiled session's, or the graph's when it did not compile.
    std::vector<engine::Session::IoInfo> listed_;
    std::shared_ptr<const RunOutcome> outcome_;
    engine::ValueRanges indexRanges_;  // integer inputs that index a table (inferIndexRanges)
    std::optional<DecoderRunInputs> decoder_;  // the model is a decoder with a KV cache
    bool busy_ = false;
    bool awaitingRun_ = false;  // this panel asked for the job the worker is doing

    QAction* runAction_;
    QAction* cancelAction_;
    QLabel* modelLabel_;
    QTableWidget* inputs_;
    QTableWidget* dims_;
    QSpinBox* seed_;
    QComboBox* dataSets_;
    QComboBox* imageScaling_;
    QLineEdit* imageMean_;
    QLineEdit* imageStd_;
    QPushButton* runButton_;
    QPushButton* cancelButton_;
    QPushButton* runAnywayButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QTimer* elapsedTimer_;
    qint64 startedMs_ = 0;
    QString busyWhat_;
    RunOutputsView* outputsView_;
};

}  // namespace onnxlens::widgets
