#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerControlFlowOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
