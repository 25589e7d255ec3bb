#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerConvOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
