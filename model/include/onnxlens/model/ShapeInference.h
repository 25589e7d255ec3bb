#pragma once
// onnx shape inference, run once per model state and shared: the summary, the view graph, the
// optimizer's passes and the engine's compiler read the same result instead of each inferring
// on a copy of its own.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxlens/model/Result.h"

namespace onnxlens {

// onnx's shape inference functions trust what the checker verifies node by node (required
// attributes present, attribute types, input and output counts) and crash on nodes that break
// it (onnx 1.12's Scan inference dereferences a missing num_scan_inputs). Every caller of
// onnx::shape_inference runs this first, on the nodes of every graph, subgraph and local
// function, and skips inference when it returns the first offending node.
Status checkNodesAgainstSchemas(const onnx::ModelProto& model);

// One dim of an inferred shape.
struct InferredDim {
    std::int64_t value = -1;  // -1: symbolic (see symbol)
    std::string symbol;
    bool operator==(const InferredDim&) const = default;
};

// The result of one onnx shape inference of one model state, on a copy without bulk data
// (copyWithoutBulkData). Immutable once made; share it through std::shared_ptr.
class InferredShapes {
  public:
    // The inferred copy: value_info filled where inference could (node protos, small tensors).
    const onnx::ModelProto& model() const { return *model_; }
    std::shared_ptr<const onnx::ModelProto> modelPointer() const { return model_; }

    // onnx's strict inference finished without an error (ShapeInferenceAnyOpset.h).
    bool ok() const { return ok_; }
    // The first error when not ok ("skipped: ..." when a node breaks its schema and nothing was
    // inferred).
    const std::string& message() const { return message_; }
    bool skipped() const { return skipped_; }
    std::int64_t valuesShapedByOnnxlens() const { return valuesShapedByOnnxlens_; }
    std::int64_t valuesShapedBySymbolicPropagation() const {
        return valuesShapedBySymbolicPropagation_;
    }

    // The type of a value of any graph (main graph names win over subgraph ones), initializers
    // included; null when inference did not type it.
    const onnx::TypeProto* typeOf(const std::string& name) const;
    // A tensor value's dims when its rank and every dim (a number or a named symbol) are known.
    std::optional<std::vector<InferredDim>> dimsOf(const std::string& name) const;
    // A tensor value's dims when they are all numbers.
    std::optional<std::vector<std::int64_t>> staticDimsOf(const std::string& name) const;

  private:
    friend std::shared_ptr<const InferredShapes> inferShapes(const onnx::ModelProto& model);
    std::shared_ptr<const onnx::ModelProto> model_;
    bool ok_ = false, skipped_ = false;
    std::string message_;
    std::int64_t valuesShapedByOnnxlens_ = 0;
    std::int64_t valuesShapedBySymbolicPropagation_ = 0;
    std::unordered_map<std::string, onnx::TypeProto> types_;
};

// Runs shape inference (inferShapesAnyOpset: onnx's, and onnxlens's rules for newer opsets) on a
// weights-free copy of `model`.
std::shared_ptr<const InferredShapes> inferShapes(const onnx::ModelProto& model);

// How many model states were inferred (inferShapes calls) in this process: for the tests that
// check the caching.
std::uint64_t shapeInferenceRunCount();

// The shape inference of one model state, computed on first use and shared by every later reader,
// from any thread. Whoever changes the model calls invalidate() (or makes a new cache).
class ShapeInferenceCache {
  public:
    std::shared_ptr<const InferredShapes> get(const onnx::ModelProto& model);
    // The result when already computed, else null.
    std::shared_ptr<const InferredShapes> peek() const;
    void invalidate();

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<const InferredShapes> shapes_;
};

}  // namespace onnxlens
