#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerNormalizationOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
