#pragma once
// Reading a node's attributes by name, with a fallback when the node does not set one: the one
// copy the cost model, the shape-inference guard, the quantizer and the optimizer passes share.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onnxlens {

inline const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node,
                                                 const std::string& name) {
    for (const auto& a : node.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}
inline std::int64_t intAttribute(const onnx::NodeProto& node, const std::string& name,
                                 std::int64_t fallback) {
    const auto* a = findAttribute(node, name);
    return a ? a->i() : fallback;
}
inline float floatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
    const auto* a = findAttribute(node, name);
    return a ? a->f() : fallback;
}
inline std::string stringAttribute(const onnx::NodeProto& node, const std::string& name,
                                   const std::string& fallback) {
    const auto* a = findAttribute(node, name);
    return a ? a->s() : fallback;
}
inline std::vector<std::int64_t> intsAttribute(const onnx::NodeProto& node,
                                               const std::string& name) {
    const auto* a = findAttribute(node, name);
    return a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end())
             : std::vector<std::int64_t>{};
}

}  // namespace onnxlens
