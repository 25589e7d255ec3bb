#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerMatMulOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
