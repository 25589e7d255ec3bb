#pragma once
// The Benchmark dock's Decode tab: greedy token-by-token decoding of a decoder with a KV cache
// (DecodeLoop.h, as `onnxlens-cli generate`): prompt length, new tokens and intra-op threads
// (remembered), Start / Cancel with progress per step; then the prefill time, the per-step median
// and P90, tokens per second, the KV cache's bytes and the ids, a chart of each step's latency
// against its context length, and exports as JSON (decodeResultJson, like `generate --json`) and
// Markdown. The decode is a job of the tab's ModelController (its engine process); the controller
// keeps the last result, so it comes back with its tab. A model that is not such a decoder greys
// the tab out with why (availabilityChanged).
#include <QElapsedTimer>
#include <QPointer>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "onnxlens/workflows/DecoderModel.h"
#include "onnxlens/workflows/InputPreparation.h"
#include "widgets/workers/ModelController.h"

class QAction;
class QChartView;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace onnxlens::widgets {

class DecodePanel : public QWidget {
    Q_OBJECT
  public:
    explicit DecodePanel(QWidget* parent = nullptr);
    ~DecodePanel() override;

    // The current tab's controller (nullptr: no model open).
    void setController(ModelController* controller);
    ModelController* controller() const { return controller_; }

    void start();
    void cancel();
    bool isRunning() const { return !runningController_.isNull(); }
    // The current model's last decode (nullptr before its first).
    std::shared_ptr<const DecodeOutcome> result() const;
    // Why the current model cannot be decoded ("" when it can): no model, not a decoder (what is
    // missing), the engine cannot run it, a decode is running.
    QString unavailableReason() const;
    // The decoder recognized in the current model (nullopt when it is not one).
    const std::optional<engine::DecoderModel>& decoder() const { return decoder_; }

    // Exports of the current result; an empty string on success, else the error.
    QString exportJson(const QString& path) const;
    QString exportMarkdown(const QString& path) const;

    QSpinBox* promptTokensSpin() const { return promptTokens_; }
    QSpinBox* newTokensSpin() const { return newTokens_; }
    QSpinBox* threadsSpin() const { return threads_; }
    QPushButton* startButton() const { return startButton_; }
    QPushButton* cancelButton() const { return cancelButton_; }
    QAction* startAction() const { return startAction_; }
    QProgressBar* progressBar() const { return progress_; }
    QTableWidget* statisticsTable() const { return statistics_; }
    QChartView* chartView() const { return chart_; }
    int chartPoints() const { return chartPoints_; }
    QString statusText() const;

  signals:
    void started();
    void finished();
    void failed(const QString& message);
    void cancelled();
    // Whether the current model can be decoded, and why not.
    void availabilityChanged(bool available, const QString& reason);

  private:
    void recognize();
    void showResult(const std::shared_ptr<const DecodeOutcome>& outcome);
    void rebuildChart(const engine::DecodeResult* result);
    void onEnded(const QString& status);
    void disconnectRun();  // the running decode's connections, and forgets its controller
    void updateActions();
    void saveSettings() const;
    void chooseAndExport(bool json);
    nlohmann::json resultJson(const DecodeOutcome& outcome) const;

    QPointer<ModelController> controller_;
    std::vector<QMetaObject::Connection> controllerConnections_;
    QPointer<ModelController> runningController_;
    std::vector<QMetaObject::Connection> runConnections_;
    std::optional<engine::DecoderModel> decoder_;
    QString notDecoder_;  // why the current model is not a decoder
    engine::ValueRanges indexRanges_;
    int stepsDone_ = 0;
    int chartPoints_ = 0;
    // The steps reported so far by the running decode, drawn as they come (at most every
    // kLiveChartMs); the finished result then draws every step.
    engine::DecodeResult live_;
    QElapsedTimer liveChartClock_;
    static constexpr int kLiveChartMs = 150;
    QSpinBox* promptTokens_;
    QSpinBox* newTokens_;
    QSpinBox* threads_;
    QPushButton* startButton_;
    QPushButton* cancelButton_;
    QProgressBar* progress_;
    QLabel* status_;
    QTableWidget* statistics_;
    QPlainTextEdit* ids_;
    QChartView* chart_;
    QPushButton* exportJson_;
    QPushButton* exportMarkdown_;
    QAction* startAction_;
};

}  // namespace onnxlens::widgets
