#pragma once
// Shorthands for the tests of the numeric operator families (reduce, normalization, matrix
// products, losses, optimizers, text) on top of OpTestHarness.h.
#include <string>
#include <utility>
#include <vector>

#include "OpTestHarness.h"

namespace onnxlens::testing {

inline Tensor floats(Shape shape, std::vector<float> values) {
    return makeTensor<float>(std::move(shape), std::move(values));
}

// A one-node spec with every member set (no attributes yet).
inline OneNodeSpec nodeSpec(std::string opType, int opset, std::vector<Value> inputs,
                            int outputCount = 1, std::string domain = "") {
    OneNodeSpec spec;
    spec.opType = std::move(opType);
    spec.domain = std::move(domain);
    spec.opset = opset;
    spec.inputs = std::move(inputs);
    spec.outputCount = outputCount;
    return spec;
}

}  // namespace onnxlens::testing
