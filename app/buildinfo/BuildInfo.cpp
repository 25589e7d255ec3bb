#include "buildinfo/BuildInfo.h"

#include <google/protobuf/stubs/common.h>

#include "BuildConfig.h"
#include "onnxlens/engine/CpuIsa.h"
#include "onnxlens/engine/ThreadPool.h"
#include "onnxlens/model/NewerOpsets.h"

#ifdef ONNXLENS_BUILDINFO_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace onnxlens::buildinfo {

namespace {

// The oneDNN library loaded at run time (it may differ from the headers the build saw).
std::string dnnlVersion() {
#ifdef ONNXLENS_BUILDINFO_DNNL
    const dnnl_version_t* v = dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) +
           (v->hash && *v->hash && std::string(v->hash) != "N/A" ? std::string(" (") + v->hash + ")"
                                                                 : "");
#else
    return "not used (Eigen kernels only)";
#endif
}

}  // namespace

std::string version() { return ONNXLENS_BUILD_VERSION; }

std::vector<std::pair<std::string, std::string>> components() {
    const std::string onnx =
        std::string(*ONNXLENS_BUILD_ONNX_VERSION ? ONNXLENS_BUILD_ONNX_VERSION : "unknown") +
        " (newest opset " + std::to_string(onnxLibraryOpset()) + ")";
    const std::string qt = *ONNXLENS_BUILD_QT_VERSION
                               ? std::string(ONNXLENS_BUILD_QT_VERSION) + " (the GUI's)"
                               : std::string("not built (no GUI in this build)");
    return {
        {"onnxlens", ONNXLENS_BUILD_VERSION},
        {"git revision", ONNXLENS_BUILD_GIT_REVISION},
        {"onnx", onnx},
        {"protobuf", google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION)},
        {"oneDNN", dnnlVersion()},
        {"Qt", qt},
        {"engine build", std::string(ONNXLENS_BUILD_FLAVOUR) + " (" + ONNXLENS_BUILD_TYPE + ")"},
        {"-march", ONNXLENS_BUILD_MARCH},
        // The instruction set of the engine's own kernels, chosen at run time in a portable build.
        {"kernels", engine::kernelIsaSummary()},
        // How the engine's idle threads wait (bounded spinning, ThreadPool.h).
        {"threads", engine::threadWaitSummary()},
        {"compiler", ONNXLENS_BUILD_COMPILER},
    };
}

std::string versionReport(const std::string& program) {
    std::string text = program + " " + version() + "\n";
    for (const auto& [label, value] : components()) text += "  " + label + ": " + value + "\n";
    return text;
}

}  // namespace onnxlens::buildinfo
