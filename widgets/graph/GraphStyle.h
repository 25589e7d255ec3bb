#pragma once
// How the graph looks: fonts, colours per operator category, and the sizes of nodes and group
// boxes measured with Qt's font metrics (these sizes go into the layout request, so the text
// drawn later fits the boxes Graphviz placed).
#include <QColor>
#include <QFont>
#include <QFontMetricsF>
#include <QSizeF>
#include <QString>

#include "onnxlens/model/ViewGraph.h"

namespace onnxlens::widgets {

struct GraphStyle {
    QFont titleFont;
    QFont rowFont;
    QFont labelFont;  // edge labels (tensor shapes)
    // Measured once: items and layout requests are built by the thousand.
    QFontMetricsF titleMetrics{QFont()};
    QFontMetricsF rowMetrics{QFont()};
    QFontMetricsF boldRowMetrics{QFont()};
    QFontMetricsF labelMetrics{QFont()};
    double padding = 6;
    double rowSpacing = 1;
    double groupHeader = 22;  // title bar of an expanded group
    double groupMargin = 10;
    double portSize = 6;
    QColor symbolicDimColour{0xc0, 0x39, 0x2b};
    QColor edgeColour{0x55, 0x5b, 0x66};
    QColor labelColour{0x44, 0x44, 0x44};
    QColor selectionColour{0xff, 0x9f, 0x1c};

    static const GraphStyle& standard();

    QColor headerColour(NodeCategory category) const;
    QColor headerTextColour(NodeCategory category) const;

    QSizeF nodeSize(const ViewNode& node) const;
    QSizeF collapsedGroupSize(const ViewGroup& group) const;
    QString collapsedGroupSubtitle(const ViewGroup& group) const;
    // Added to an expanded group's inner layout size to get its box.
    QSizeF expandedGroupPadding() const;
};

}  // namespace onnxlens::widgets
