#pragma once
// The ONNX backend test cases whose expected outputs are random draws (numpy's generator), which
// no other implementation can reproduce: the conformance runner skips them with this reason.
#include <string>
#include <vector>

namespace onnxlens::engine::ops {

const std::vector<std::string>& randomOutputTestCases();

}  // namespace onnxlens::engine::ops
