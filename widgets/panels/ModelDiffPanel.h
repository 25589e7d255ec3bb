#pragma once
// The Model Diff dock (Tools > Compare Models): progress and Cancel while the comparison runs,
// then the report (structure, and where the runs part ways), a "First Divergence" button, and
// for the node selected in the graph both versions side by side with their figures.
#include <QWidget>
#include <memory>

#include "widgets/workers/ModelDiffWorker.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace onnxlens::widgets {

class ModelDiffPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ModelDiffPanel(QWidget* parent = nullptr);

    void setRunning(const QString& otherPath);
    void setProgress(const QString& step, int done, int total);
    void setFailed(const QString& message);
    // `modelA`: the open model the comparison's node indexes of A refer to.
    void setComparison(std::shared_ptr<const ModelComparison> comparison,
                       std::shared_ptr<const onnx::ModelProto> modelA);
    std::shared_ptr<const ModelComparison> comparison() const { return comparison_; }
    // The node of the first model selected in the graph (nullptr: none).
    void showNode(const onnx::NodeProto* node);

    QString reportText() const;
    QString nodeText() const;
    QPushButton* firstDivergenceButton() const { return firstDivergence_; }
    QPushButton* cancelButton() const { return cancel_; }

  signals:
    void cancelRequested();
    // profileNameOf of the node of the first model that made the first diverging value.
    void firstDivergenceRequested(const QString& nodeName);

  private:
    QLabel* status_;
    QProgressBar* progress_;
    QPushButton* cancel_;
    QPushButton* firstDivergence_;
    QPlainTextEdit* report_;
    QPlainTextEdit* node_;
    std::shared_ptr<const ModelComparison> comparison_;
    std::shared_ptr<const onnx::ModelProto> modelA_;
};

}  // namespace onnxlens::widgets
