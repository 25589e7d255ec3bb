#pragma once
// Find (Ctrl+F) by node name, op type or tensor name: matches are listed as you type; choosing
// one emits nodeChosen, and the page expands its groups, selects and centres it.
#include <QWidget>
#include <memory>

#include "onnxlens/model/ViewGraph.h"

class QLineEdit;
class QListWidget;
class QLabel;

namespace onnxlens::widgets {

class FindBar : public QWidget {
    Q_OBJECT
  public:
    explicit FindBar(QWidget* parent = nullptr);
    void setViewGraph(std::shared_ptr<const ViewGraph> view) { view_ = std::move(view); }
    void activate();  // show, focus, select the text
    void setQuery(const QString& text);
    int resultCount() const;
    void chooseResult(int row);
    // Nodes whose name, op type or input/output tensor names contain `query` (case-insensitive).
    static std::vector<int> findNodes(const ViewGraph& view, const QString& query, int limit = 500);

  signals:
    void nodeChosen(int node);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void search();

    std::shared_ptr<const ViewGraph> view_;
    QLineEdit* edit_;
    QLabel* count_;
    QListWidget* results_;
};

}  // namespace onnxlens::widgets
