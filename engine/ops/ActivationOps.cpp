#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerActivationOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
