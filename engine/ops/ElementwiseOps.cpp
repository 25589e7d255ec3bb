#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerElementwiseOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
