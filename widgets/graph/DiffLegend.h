#pragma once
// The structure-diff overlay's legend (Tools > Compare Models): what each colour says about a node
// of the first model against the second, with counts, and how many nodes only the second has
// (they have no box in this graph).
#include <QColor>
#include <QWidget>

namespace onnxlens::widgets {

QColor changedNodeColour();
QColor removedNodeColour();
QColor renamedNodeColour();

class DiffLegend : public QWidget {
    Q_OBJECT
  public:
    explicit DiffLegend(QWidget* parent = nullptr);

    void setCounts(int changed, int removed, int renamed, int added, const QString& otherModel);
    QString caption() const;
    QSize sizeHint() const override;

  protected:
    void paintEvent(QPaintEvent* event) override;

  private:
    int changed_ = 0, removed_ = 0, renamed_ = 0, added_ = 0;
    QString otherModel_;
};

}  // namespace onnxlens::widgets
