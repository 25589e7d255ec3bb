#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerCastOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
