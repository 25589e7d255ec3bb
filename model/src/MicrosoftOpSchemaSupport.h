#pragma once
// What the com.microsoft schema files share (MicrosoftOpSchemas*.cpp): the schema shell, type
// lists onnx 1.12 can express, and shape-inference helpers that never read past a shape (a node
// with a hostile rank or attribute gets no output shape, or an ordinary inference error).
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace onnxlens::ms {

using Dim = onnx::TensorShapeProto_Dimension;
using Dims = std::vector<Dim>;

// A com.microsoft schema at version 1 (or the default-domain extension placeholder's).
onnx::OpSchema schema(const char* name, const char* domain, int line);

// Type lists (only the element types the linked onnx library knows).
const std::vector<std::string>& floatTypes();        // float, float16, bfloat16
const std::vector<std::string>& floatTypesDouble();  // plus double
const std::vector<std::string>& int8Types();         // int8, uint8

Dim known(std::int64_t value);
Dim unknown();
// a + b: a number when both are, "a + b" when both are named, else unknown.
Dim sum(const Dim& a, const Dim& b);
// A dim times / divided by a positive number (unknown when not exact).
Dim times(const Dim& d, std::int64_t k);
Dim dividedBy(const Dim& d, std::int64_t k);

// The input's shape when its type and rank are known (and, with rank >= 0, of that rank).
std::optional<Dims> shapeOf(onnx::InferenceContext& ctx, std::size_t input, int rank = -1);
// The input's element type, 0 when unknown or absent.
int elemTypeOf(onnx::InferenceContext& ctx, std::size_t input);
// Whether the node has that output (named).
bool hasOutput(onnx::InferenceContext& ctx, std::size_t output);
// Sets an output's element type (when elemType != 0) and, when given, its shape.
void setOutput(onnx::InferenceContext& ctx, std::size_t output, int elemType,
               const std::optional<Dims>& dims);
std::int64_t intAttribute(onnx::InferenceContext& ctx, const char* name, std::int64_t fallback);
// The values of a small constant int input (initializer), nullopt otherwise.
std::optional<std::vector<std::int64_t>> constantInts(onnx::InferenceContext& ctx,
                                                      std::size_t input);

// Output 0 as the default-domain operator `op` (at `version`) infers it: FusedConv and FusedGemm
// take Conv's and Gemm's attributes and first inputs unchanged.
onnx::InferenceFunction inferAs(const char* op, int version);
// Output 0 is input 0 (element type and shape); extra outputs listed get the same.
void sameAsFirstInput(onnx::InferenceContext& ctx);

// Schemas that com.onnxlens shares with com.microsoft (the optimizer's operators of the same
// name and inputs), built for either domain; the caller registers them.
onnx::OpSchema geluSchema(const char* domain);
onnx::OpSchema quickGeluSchema(const char* domain);
onnx::OpSchema fusedConvSchema(const char* domain);
onnx::OpSchema attentionSchema(const char* domain);
onnx::OpSchema matMulIntegerToFloatSchema(const char* domain);

// Register the schemas of one job (MicrosoftOpSchemasX.cpp).
void registerMicrosoftLayerSchemas();
void registerMicrosoftAttentionSchemas();
void registerMicrosoftQuantizationSchemas();
// The com.onnxlens operators of the engine's optimizer that keep plain layouts
// (OnnxlensOpSchemas.cpp).
void registerOnnxlensOptimizerSchemas();

}  // namespace onnxlens::ms
