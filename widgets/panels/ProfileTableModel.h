#pragma once
// A benchmark's per-operator profile as a table model: one row per node, or one per op type,
// with time per run and share of the profiled time. Numbers sort as numbers (Qt::UserRole).
#include <QAbstractTableModel>
#include <memory>

#include "onnxlens/workflows/BenchmarkRunner.h"

namespace onnxlens::widgets {

class ProfileTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum class Rows { Nodes, OpTypes };
    // Node rows: Node, Op type, ms per run, Share. Op-type rows: Op type, Nodes, ms per run, Share.
    enum Column { NameColumn, SecondColumn, MsColumn, ShareColumn, ColumnCount };
    static constexpr int SortRole = Qt::UserRole;

    explicit ProfileTableModel(Rows rows, QObject* parent = nullptr);

    void setResult(std::shared_ptr<const engine::BenchmarkResult> result);
    Rows rows() const { return rows_; }
    // The node's profile name (Nodes) or the op type (OpTypes) of a row.
    QString keyOf(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    Rows rows_;
    std::shared_ptr<const engine::BenchmarkResult> result_;
};

}  // namespace onnxlens::widgets
