#include "widgets/panels/ProfileTableModel.h"

#include <algorithm>

namespace onnxlens::widgets {

ProfileTableModel::ProfileTableModel(Rows rows, QObject* parent)
    : QAbstractTableModel(parent), rows_(rows) {}

void ProfileTableModel::setResult(std::shared_ptr<const engine::BenchmarkResult> result) {
    beginResetModel();
    result_ = std::move(result);
    rates_.clear();
    peakGflops_ = 0;
    endResetModel();
}

void ProfileTableModel::setRates(const std::vector<engine::NodeRate>& rates, double peakGflops) {
    rates_.clear();
    for (const auto& r : rates) {
        if (r.flops <= 0) continue;  // data movement: no rate to speak of
        Rate& rate = rates_[rows_ == Rows::Nodes ? r.nodeName : r.opType];
        rate.flops += r.flops;
        rate.ms += r.perRunMs;
    }
    peakGflops_ = peakGflops;
    if (rowCount() > 0)
        emit dataChanged(index(0, GflopsColumn), index(rowCount() - 1, PeakShareColumn));
}

std::optional<double> ProfileTableModel::gflopsOf(int row) const {
    auto it = rates_.find(keyOf(row).toStdString());
    if (it == rates_.end() || it->second.ms <= 0) return std::nullopt;
    return it->second.flops / (it->second.ms * 1e-3) / 1e9;
}

int ProfileTableModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !result_) return 0;
    return static_cast<int>(rows_ == Rows::Nodes ? result_->nodes.size() : result_->opTypes.size());
}

int ProfileTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString ProfileTableModel::keyOf(int row) const {
    if (row < 0 || row >= rowCount()) return {};
    return QString::fromStdString(rows_ == Rows::Nodes ? result_->nodes[row].nodeName
                                                       : result_->opTypes[row].opType);
}

QVariant ProfileTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const double runs = std::max(1, result_->statistics.runs);
    QString name, second;
    double ms = 0, share = 0, secondNumber = 0;
    if (rows_ == Rows::Nodes) {
        const auto& node = result_->nodes[index.row()];
        name = QString::fromStdString(node.nodeName);
        second = QString::fromStdString(node.opType);
        ms = node.perRunMs;
        share = node.share;
    } else {
        const auto& op = result_->opTypes[index.row()];
        name = QString::fromStdString(op.opType);
        secondNumber = op.calls / runs;
        second = QString::number(secondNumber, 'g', 4);
        ms = op.totalMs / runs;
        share = op.share;
    }
    const std::optional<double> gflops =
        index.column() >= GflopsColumn ? gflopsOf(index.row()) : std::nullopt;
    const double gflopsValue = gflops.value_or(0.0);
    const double peakShare = gflops && peakGflops_ > 0 ? gflopsValue / peakGflops_ : 0;
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
                case GflopsColumn:
                    return gflops ? QString::number(*gflops, 'f', *gflops < 10 ? 2 : 1) : QString();
                case PeakShareColumn:
                    return gflops && peakGflops_ > 0
                               ? QStringLiteral("%1 %").arg(100.0 * peakShare, 0, 'f', 1)
                               : QString();
                case NameColumn:
                    return name;
                case SecondColumn:
                    return second;
                case MsColumn:
                    return QString::number(ms, 'f', 3);
                case ShareColumn:
                    return QStringLiteral("%1 %").arg(100.0 * share, 0, 'f', 1);
            }
            break;
        case SortRole:
            switch (index.column()) {
                case GflopsColumn:
                    return gflops ? *gflops : -1.0;
                case PeakShareColumn:
                    return gflops ? peakShare : -1.0;
                case NameColumn:
                    return name;
                case SecondColumn:
                    return rows_ == Rows::Nodes ? QVariant(second) : QVariant(secondNumber);
                case MsColumn:
                    return ms;
                case ShareColumn:
                    return share;
            }
            break;
        case Qt::TextAlignmentRole:
            if (index.column() >= MsColumn ||
                (rows_ == Rows::OpTypes && index.column() == SecondColumn))
                return int(Qt::AlignRight | Qt::AlignVCenter);
            break;
        case Qt::ToolTipRole:
            if (index.column() >= GflopsColumn && !gflops)
                return tr("No FLOPs counted for %1 (made by the optimizer, unknown shapes, or no "
                          "arithmetic)")
                    .arg(name);
            return tr("%1: %2 ms per run, %3 % of the profiled time")
                       .arg(name)
                       .arg(ms, 0, 'f', 3)
                       .arg(100.0 * share, 0, 'f', 2) +
                   (gflops ? tr("; %1 GFLOP/s achieved, %2 % of the peak")
                                 .arg(gflopsValue, 0, 'f', 2)
                                 .arg(100.0 * peakShare, 0, 'f', 1)
                           : QString());
    }
    return {};
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case NameColumn:
            return rows_ == Rows::Nodes ? tr("Node") : tr("Op type");
        case SecondColumn:
            return rows_ == Rows::Nodes ? tr("Op type") : tr("Nodes");
        case MsColumn:
            return tr("ms per run");
        case ShareColumn:
            return tr("Share");
        case GflopsColumn:
            return tr("GFLOP/s");
        case PeakShareColumn:
            return tr("% of peak");
    }
    return {};
}

}  // namespace onnxlens::widgets
