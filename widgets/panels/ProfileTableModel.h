#pragma once
// A benchmark's per-operator profile as a table model: one row per node, or one per op type,
// with time per run and share of the profiled time, and (once the roofline analysis is in) the
// achieved GFLOP/s and share of the processor's peak. Numbers sort as numbers (Qt::UserRole).
#include <QAbstractTableModel>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnxlens/workflows/BenchmarkRunner.h"
#include "onnxlens/workflows/Roofline.h"

namespace onnxlens::widgets {

class ProfileTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum class Rows { Nodes, OpTypes };
    // Node rows: Node, Op type, ms per run, Share, GFLOP/s, % of peak. Op-type rows: Op type,
    // Nodes, ms per run, Share, GFLOP/s (summed FLOPs over summed time of the counted nodes),
    // % of peak.
    enum Column {
        NameColumn,
        SecondColumn,
        MsColumn,
        ShareColumn,
        GflopsColumn,
        PeakShareColumn,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole;

    explicit ProfileTableModel(Rows rows, QObject* parent = nullptr);

    void setResult(std::shared_ptr<const engine::BenchmarkResult> result);
    // Achieved rates of the result's nodes (engine::nodeRates) and the peak they are shares of;
    // empty: the columns stay blank.
    void setRates(const std::vector<engine::NodeRate>& rates, double peakGflops);
    Rows rows() const { return rows_; }
    // The node's profile name (Nodes) or the op type (OpTypes) of a row.
    QString keyOf(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    struct Rate {
        double flops = 0, ms = 0;
    };
    std::optional<double> gflopsOf(int row) const;

    Rows rows_;
    std::map<std::string, Rate> rates_;  // by node name or op type
    double peakGflops_ = 0;
    std::shared_ptr<const engine::BenchmarkResult> result_;
};

}  // namespace onnxlens::widgets
