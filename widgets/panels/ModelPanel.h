#pragma once
// Everything `onnxlens-cli info` knows about the model, from ModelSummary: IR version,
// producer, opsets per domain, metadata, inputs and outputs with dynamic axes, op histogram,
// parameters, functions, checker and shape-inference results; and what the model costs (MACs,
// FLOPs, parameters by element type, activation and peak activation memory, the dims used).
#include <QWidget>

class QTreeWidget;

namespace onnxlens::widgets {

struct ModelDocument;

class ModelPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ModelPanel(QWidget* parent = nullptr);
    void showModel(const ModelDocument& document);
    void clear();
    QTreeWidget* tree() const { return tree_; }
    // The width that shows every visible row's name and value uncut (the tree's frame, scroll
    // bar and the panel's margins included).
    int contentWidth() const;

  private:
    void addCost(const ModelDocument& document);

    QTreeWidget* tree_;
};

}  // namespace onnxlens::widgets
