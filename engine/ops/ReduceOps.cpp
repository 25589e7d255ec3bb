#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerReduceOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
