#pragma once
// The selected node: op type, domain, the opset version defining it, the operator's
// documentation from the onnx schema, attributes, and each input and output with name, dtype and
// shape (symbolic dims highlighted), and what it costs (MACs, FLOPs, parameters, bytes read and
// written, arithmetic intensity). Folded initializers can be opened in the tensor panel.
#include <QWidget>
#include <memory>

#include "onnxlens/model/ViewGraph.h"

class QTreeWidget;
class QTreeWidgetItem;
class QTextBrowser;
class QLabel;

namespace onnxlens::widgets {

struct CostAtDims;

class NodePanel : public QWidget {
    Q_OBJECT
  public:
    explicit NodePanel(QWidget* parent = nullptr);
    // `cost` gives the node's cost (the tab's count at the dims it last ran with,
    // ModelController::cost); nullptr leaves the Cost section out.
    void showNode(std::shared_ptr<const ViewGraph> view, int node,
                  const CostAtDims* cost = nullptr);
    void clear();

    QTreeWidget* details() const { return tree_; }
    QTextBrowser* documentation() const { return doc_; }
    // Test and accessibility helpers: the row texts under a section ("Attributes", "Inputs").
    QStringList sectionRows(const QString& section) const;
    QTreeWidgetItem* rowFor(const QString& section, const QString& name) const;

  signals:
    void tensorActivated(int tensor);

  private:
    void addQuantizedWeight(const ViewNode& node);
    void addCost(const ViewNode& node, const CostAtDims& counted);

    std::shared_ptr<const ViewGraph> view_;
    QLabel* title_;
    QTreeWidget* tree_;
    QTextBrowser* doc_;
};

}  // namespace onnxlens::widgets
