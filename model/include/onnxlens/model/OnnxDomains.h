#pragma once
// Operator domains and opset versions: the one place that knows "" and "ai.onnx" name the same
// default domain.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <string_view>

namespace onnxlens {

// The domain of the operators the engine's optimizer writes (FusedConv, PackedMatMul...): their
// kernels are in engine/ops, their schemas of plain layouts in model/src/OnnxlensOpSchemas.cpp.
inline constexpr const char* kOnnxlensDomain = "com.onnxlens";

// True for the default ONNX domain, written "" or "ai.onnx".
inline bool isDefaultDomain(std::string_view domain) {
    return domain.empty() || domain == "ai.onnx";
}
inline bool isDefaultDomain(const onnx::NodeProto& node) { return isDefaultDomain(node.domain()); }

// A node of the default domain with this op type.
inline bool isOnnxOp(const onnx::NodeProto& node, std::string_view opType) {
    return isDefaultDomain(node.domain()) && node.op_type() == opType;
}

// "" for the default domain (the key kernels and opset maps use), else the domain itself.
inline std::string canonicalDomain(const std::string& domain) {
    return domain == "ai.onnx" ? std::string() : domain;
}

// "ai.onnx" for the default domain (what people read), else the domain itself.
inline std::string displayDomain(const std::string& domain) {
    return isDefaultDomain(domain) ? std::string("ai.onnx") : domain;
}

// Opset version per canonical domain as imported by the model. Models before IR version 3 have
// no default-domain import and mean opset 1.
std::map<std::string, int> opsetImports(const onnx::ModelProto& model);

// The version of `domain` the model imports, or `fallback` when it imports none.
int opsetVersion(const onnx::ModelProto& model, const std::string& domain, int fallback = 0);

// The default domain's opset (1 when the model imports none).
inline int defaultOpset(const onnx::ModelProto& model) { return opsetVersion(model, "", 1); }

}  // namespace onnxlens
