#pragma once
// Tensor elements and indices as text for the Run and Compare panels' tables.
#include <QString>
#include <cstdint>
#include <vector>

#include "onnxlens/engine/Tensor.h"

namespace onnxlens::widgets {

// Element `flat` (row-major) of any dtype: numbers with 7 significant digits, bools as
// true/false, strings quoted, complex as a+bi.
QString elementText(const engine::Tensor& tensor, std::int64_t flat);
// "[0, 2, 5]" for a multi-index; the flat index unravelled against `shape` in the overload.
QString indexText(const std::vector<std::int64_t>& index);
QString indexText(std::int64_t flat, const engine::Shape& shape);

}  // namespace onnxlens::widgets
