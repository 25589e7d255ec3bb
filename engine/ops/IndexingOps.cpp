#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerIndexingOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
