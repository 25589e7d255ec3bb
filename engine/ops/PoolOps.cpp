#include "OpFamilies.h"

namespace onnxlens::engine::ops {

void registerPoolOps(KernelRegistry& registry) { (void)registry; }

}  // namespace onnxlens::engine::ops
