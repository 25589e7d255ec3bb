#pragma once
// Everything `onnxlens-cli info` knows about the model, from ModelSummary: IR version,
// producer, opsets per domain, metadata, inputs and outputs with dynamic axes, op histogram,
// parameters, functions, checker and shape-inference results; and what the model costs (MACs,
// FLOPs, parameters by element type, activation and peak activation memory, the dims used).
#include <QWidget>

class QTreeWidget;

namespace onnxlens::widgets {

struct CostAtDims;
struct ModelDocument;

class ModelPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ModelPanel(QWidget* parent = nullptr);
    // `cost`: the tab controller's count (ModelController::cost) at the dims the model last ran
    // with; nullptr counts as the document's own (every symbolic dim 1).
    void showModel(const ModelDocument& document, const CostAtDims* cost = nullptr);
    // Replaces the Cost section (a run at other dims was counted), leaving the rest as it is.
    void showCost(const CostAtDims& cost);
    void clear();
    QTreeWidget* tree() const { return tree_; }
    // The width that shows every visible row's name and value uncut (the tree's frame, scroll
    // bar and the panel's margins included).
    int contentWidth() const;

  private:
    void addCost(const CostAtDims& cost, int at = -1);

    QTreeWidget* tree_;
};

}  // namespace onnxlens::widgets
