#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerRecurrentOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
