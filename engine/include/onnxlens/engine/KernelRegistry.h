#pragma once
// Kernels keyed by (domain, op type, opset range), resolved against the model's opset imports.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "onnxlens/engine/Kernel.h"
#include "onnxlens/model/OnnxDomains.h"

namespace onnxlens::engine {

using KernelFactory = std::function<std::unique_ptr<Kernel>(const NodeInfo&)>;

inline constexpr int kLatestOpset = 1 << 20;

class KernelRegistry {
  public:
    // The registry with every operator family of engine/ops registered.
    static const KernelRegistry& global();

    // domain: "" (or "ai.onnx") for the default domain. Versions are inclusive.
    void add(const std::string& domain, const std::string& opType, int sinceVersion,
             int untilVersion, KernelFactory factory);
    // Shorthand for kernels whose constructor takes (const NodeInfo&).
    template <class K>
    void add(const std::string& opType, int sinceVersion = 1, int untilVersion = kLatestOpset,
             const std::string& domain = "") {
        add(domain, opType, sinceVersion, untilVersion,
            [](const NodeInfo& node) -> std::unique_ptr<Kernel> {
                return std::make_unique<K>(node);
            });
    }

    // The factory for an op at the given opset version of its domain, or null.
    const KernelFactory* find(const std::string& domain, const std::string& opType,
                              int opsetVersion) const;

    struct Entry {
        std::string domain, opType;
        int sinceVersion, untilVersion;
    };
    std::vector<Entry> entries() const;

  private:
    struct Range {
        int since, until;
        KernelFactory factory;
    };
    std::map<std::pair<std::string, std::string>, std::vector<Range>> kernels_;
};

using onnxlens::canonicalDomain;  // "ai.onnx" -> "" (OnnxDomains.h)

}  // namespace onnxlens::engine
