#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerResizeOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
