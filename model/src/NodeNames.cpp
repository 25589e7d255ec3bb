#include "onnxlens/model/NodeNames.h"

namespace onnxlens {

std::string profileNameOf(const onnx::NodeProto& node) {
    if (!node.name().empty()) return node.name();
    for (const auto& output : node.output())
        if (!output.empty()) return node.op_type() + "(" + output + ")";
    return node.op_type();
}

}  // namespace onnxlens
