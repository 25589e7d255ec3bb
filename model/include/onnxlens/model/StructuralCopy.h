#pragma once
// Copies of a model without its weights: what the checker, shape inference, the optimized-graph
// view and the CLI read besides an engine session, without a second copy of a large model's bytes.
#include <onnx/onnx_pb.h>

#include <cstddef>

namespace onnxlens {

// Copies everything of `model` but its graph into `copy`: IR version, opsets, producer, domain,
// model version, doc string, metadata, functions and training info.
void copyModelFieldsButGraph(const onnx::ModelProto& model, onnx::ModelProto& copy);

// A copy of the model whose large tensors (more than `maxKeptBytes` of data, inline or external)
// keep name, type and dims but hold one element of zero raw_data: what the checker and shape
// inference need, without doubling the memory of a large model. Small tensors (shape inputs such as
// Reshape's target) keep their data so shape inference can read them.
onnx::ModelProto copyWithoutBulkData(const onnx::ModelProto& model,
                                     std::size_t maxKeptBytes = 4096);

// A copy in which every initializer of the main graph keeps only its name, type and dims (no data,
// no placeholder, no external reference): the model's structure beside a session that holds the
// weights. The initializers are swapped out while the rest is copied, so no weight byte is copied.
onnx::ModelProto copyStructure(onnx::ModelProto& model);

}  // namespace onnxlens
