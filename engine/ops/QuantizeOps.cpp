#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerQuantizeOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
