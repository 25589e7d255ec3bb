#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerSignalOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
