#include "widgets/graph/GraphStyle.h"

#include <QFontMetricsF>
#include <algorithm>

namespace onnxlens::widgets {

const GraphStyle& GraphStyle::standard() {
    static const GraphStyle style = [] {
        GraphStyle s;
        s.titleFont = QFont(QStringLiteral("Sans Serif"), 9);
        s.titleFont.setBold(true);
        s.rowFont = QFont(QStringLiteral("Sans Serif"), 8);
        s.labelFont = QFont(QStringLiteral("Sans Serif"), 7);
        QFont boldRow = s.rowFont;
        boldRow.setBold(true);
        s.titleMetrics = QFontMetricsF(s.titleFont);
        s.rowMetrics = QFontMetricsF(s.rowFont);
        s.boldRowMetrics = QFontMetricsF(boldRow);
        s.labelMetrics = QFontMetricsF(s.labelFont);
        return s;
    }();
    return style;
}

QColor GraphStyle::headerColour(NodeCategory category) const {
    switch (category) {
        case NodeCategory::Layer:
            return {0x2f, 0x5d, 0x8a};
        case NodeCategory::Activation:
            return {0x8b, 0x2e, 0x24};
        case NodeCategory::Pool:
            return {0x2e, 0x6b, 0x3c};
        case NodeCategory::Normalization:
            return {0x2d, 0x5c, 0x55};
        case NodeCategory::Dropout:
            return {0x4b, 0x4d, 0x7d};
        case NodeCategory::Shape:
            return {0x6e, 0x52, 0x45};
        case NodeCategory::Tensor:
            return {0x5a, 0x45, 0x3d};
        case NodeCategory::Arithmetic:
            return {0x3f, 0x3f, 0x46};
        case NodeCategory::Logic:
            return {0x5b, 0x3b, 0x6b};
        case NodeCategory::Control:
            return {0x7a, 0x5c, 0x10};
        case NodeCategory::Quantization:
            return {0x70, 0x3a, 0x10};
        case NodeCategory::ClassicalMl:
            return {0x1f, 0x6f, 0x8b};
        case NodeCategory::Input:
            return {0xe8, 0xf1, 0xfb};
        case NodeCategory::Output:
            return {0xfb, 0xee, 0xe6};
        default:
            return {0x22, 0x22, 0x22};
    }
}

QColor GraphStyle::headerTextColour(NodeCategory category) const {
    return (category == NodeCategory::Input || category == NodeCategory::Output)
               ? QColor(0x20, 0x20, 0x20)
               : QColor(Qt::white);
}

QSizeF GraphStyle::nodeSize(const ViewNode& node) const {
    const QFontMetricsF& title = titleMetrics;
    const QFontMetricsF& row = rowMetrics;
    double width = title.horizontalAdvance(QString::fromStdString(node.title())) + 2 * padding;
    double height = title.height() + 2 * padding;
    if (node.kind != ViewNode::Kind::Operator) return {std::max(width, 48.0), height};
    const QFontMetricsF& boldRow = boldRowMetrics;
    for (const auto& r : node.rows) {
        // Folded tensors' labels are drawn bold, attributes' plain (see GraphNodeItem).
        const QString label = QString::fromStdString(r.label) + QLatin1Char(' ');
        double labelWidth = r.kind == ViewRow::Kind::Attribute ? row.horizontalAdvance(label)
                                                               : boldRow.horizontalAdvance(label);
        double rowWidth = labelWidth + row.horizontalAdvance(QString::fromStdString(r.text));
        width = std::max(width, rowWidth + 2 * padding + 2);
        height += row.height() + rowSpacing;
    }
    if (!node.rows.empty()) height += padding / 2;
    return {std::max(width, 48.0), height};
}

QString GraphStyle::collapsedGroupSubtitle(const ViewGroup& group) const {
    if (group.kind == ViewGroup::Kind::Repeat)
        return QStringLiteral("\u00d7%1 alike, %2 nodes").arg(group.repeats).arg(group.nodeCount);
    return QStringLiteral("%1 nodes").arg(group.nodeCount);
}

QSizeF GraphStyle::collapsedGroupSize(const ViewGroup& group) const {
    const QFontMetricsF& title = titleMetrics;
    const QFontMetricsF& row = rowMetrics;
    double width = std::max(title.horizontalAdvance(QString::fromStdString(group.title)) + 24,
                            row.horizontalAdvance(collapsedGroupSubtitle(group))) +
                   2 * padding;
    double height = title.height() + row.height() + 3 * padding;
    return {std::max(width, 64.0), height};
}

QSizeF GraphStyle::expandedGroupPadding() const {
    return {2 * groupMargin, groupHeader + 2 * groupMargin};
}

}  // namespace onnxlens::widgets
