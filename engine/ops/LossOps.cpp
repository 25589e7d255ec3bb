#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerLossOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
