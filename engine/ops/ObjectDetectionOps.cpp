#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerObjectDetectionOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
