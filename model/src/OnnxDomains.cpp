#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens {

std::map<std::string, int> opsetImports(const onnx::ModelProto& model) {
    std::map<std::string, int> opsets;
    for (const auto& imp : model.opset_import())
        opsets[canonicalDomain(imp.domain())] = static_cast<int>(imp.version());
    if (!opsets.count("") && model.ir_version() < 3) opsets[""] = 1;
    return opsets;
}

int opsetVersion(const onnx::ModelProto& model, const std::string& domain, int fallback) {
    const std::string wanted = canonicalDomain(domain);
    for (const auto& imp : model.opset_import())
        if (canonicalDomain(imp.domain()) == wanted) return static_cast<int>(imp.version());
    return fallback;
}

}  // namespace onnxlens
