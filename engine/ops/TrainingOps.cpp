#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerTrainingOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
