#include "widgets/panels/ProfileTableModel.h"

#include <algorithm>

namespace onnxlens::widgets {

ProfileTableModel::ProfileTableModel(Rows rows, QObject* parent)
    : QAbstractTableModel(parent), rows_(rows) {}

void ProfileTableModel::setResult(std::shared_ptr<const engine::BenchmarkResult> result) {
    beginResetModel();
    result_ = std::move(result);
    endResetModel();
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
    switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
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
            return tr("%1: %2 ms per run, %3 % of the profiled time")
                .arg(name)
                .arg(ms, 0, 'f', 3)
                .arg(100.0 * share, 0, 'f', 2);
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
    }
    return {};
}

}  // namespace onnxlens::widgets
