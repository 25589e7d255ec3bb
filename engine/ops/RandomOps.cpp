#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerRandomOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
