#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerTextOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
