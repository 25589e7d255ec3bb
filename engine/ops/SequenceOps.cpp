#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerSequenceOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
