#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerShapeManipulationOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
