#pragma once
// How the window writes the cost model's figures: 4.09 G, 25.5 M, bytes as KB/MB/GB, and the
// one-paragraph summary a node's or a group's tooltip shows.
#include <QString>

#include "onnxlens/model/CostModel.h"

namespace onnxlens::widgets {

// (4.09e9, "MACs") -> "4.09 GMACs", (950, "MACs") -> "950 MACs", (2.55e7, "") -> "25.5 M";
// three significant digits.
QString siAmount(double value, const QString& unit = {});
// Bytes in the locale's data-size format ("97.49 MiB"), exact below 1 KiB.
QString byteSize(double bytes);
// "4.09 GMACs, 8.18 GFLOPs · 25.5 M params (97.49 MiB) · 12.1 MiB read, 8.0 MiB written ·
// 3.1 FLOPs/byte", the parts without a figure left out.
QString costSummary(const CostFigures& figures);

}  // namespace onnxlens::widgets
