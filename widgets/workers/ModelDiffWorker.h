#pragma once
// Tools > Compare Models off the GUI thread: reads the second model, diffs the structure against
// the open one, then runs both on the same inputs (ModelDiff / NumericDiff in the workflows),
// with progress and Cancel; the result comes back on the GUI thread.
#include <QObject>
#include <QString>
#include <memory>
#include <optional>

#include "onnxlens/workflows/ModelDiff.h"
#include "onnxlens/workflows/NumericDiff.h"
#include "widgets/workers/ModelDocument.h"

class QThread;

namespace onnxlens::widgets {

struct ModelComparison {
    QString pathA, pathB;
    engine::ModelDiff structure;  // initializer values compared too
    onnx::ModelProto skeletonB;   // the second model's nodes (no weights), for the Node view
    std::optional<engine::NumericDiff> numeric;
    QString numericError;  // why the runs could not be compared (the structure still is)
};

class ModelDiffWorker : public QObject {
    Q_OBJECT
  public:
    explicit ModelDiffWorker(QObject* parent = nullptr);
    ~ModelDiffWorker() override;  // cancels and waits

    // GUI thread. False while a comparison runs.
    bool start(std::shared_ptr<const ModelDocument> document, const QString& otherPath,
               bool numeric, const engine::NumericDiffOptions& options = {});
    void cancel();
    bool isRunning() const { return thread_ != nullptr; }

  signals:
    void progress(const QString& step, int done, int total);
    void finished(std::shared_ptr<const onnxlens::widgets::ModelComparison> comparison);
    void failed(const QString& message);
    void cancelled();

  private:
    struct Job;
    void finish();
    QThread* thread_ = nullptr;
    std::shared_ptr<Job> job_;
};

}  // namespace onnxlens::widgets
