#pragma once
// What the com.microsoft kernels (MsNormalizationOps.cpp, MsActivationOps.cpp) share: the domain
// name, the type a row is computed in, Eigen views of rows, and input checks whose errors name
// the operator and the input.
#include <Eigen/Core>
#include <string>
#include <type_traits>
#include <vector>

#include "onnxlens/engine/EngineError.h"
#include "onnxlens/engine/Kernel.h"

namespace onnxlens::engine::ops::ms {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";

// The type a row is computed in: double for double tensors, float for the others (float16 and
// bfloat16 rows are converted into a float row once).
template <class T>
using RowType = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
using ArrayOf = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using RowMap = Eigen::Map<ArrayOf<T>>;
template <class T>
using ConstRowMap = Eigen::Map<const ArrayOf<T>>;

inline const Tensor& requiredInput(const std::vector<const Value*>& inputs, std::size_t index,
                                   const std::string& op, const char* name) {
    const Tensor* t = optionalInputTensor(inputs, index);
    require(t != nullptr, [&] {
        return op + ": missing required input " + std::to_string(index) + " (" + name + ")";
    });
    return *t;
}

inline void requireFloatTensor(const Tensor& t, const std::string& op, const char* name) {
    require(isFloatingPoint(t.dtype()), [&] {
        return op + ": " + name + " must be a floating-point tensor, got " +
               dataTypeName(t.dtype());
    });
}

}  // namespace onnxlens::engine::ops::ms
