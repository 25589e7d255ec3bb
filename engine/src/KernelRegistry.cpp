#include "onnxlens/engine/KernelRegistry.h"

#include "onnxlens/engine/CpuIsa.h"

namespace onnxlens::engine {

const KernelRegistry& KernelRegistry::global() {
    // Every family of OpFamilies.h; in a portable build the hot ones from the per-ISA object this
    // CPU runs best (CpuDispatch.cpp).
    static const KernelRegistry registry = makeKernelRegistry(kernelCpuIsa());
    return registry;
}

void KernelRegistry::add(const std::string& domain, const std::string& opType, int sinceVersion,
                         int untilVersion, KernelFactory factory) {
    kernels_[{canonicalDomain(domain), opType}].push_back(
        Range{sinceVersion, untilVersion, std::move(factory)});
}

const KernelFactory* KernelRegistry::find(const std::string& domain, const std::string& opType,
                                          int opsetVersion) const {
    auto it = kernels_.find({canonicalDomain(domain), opType});
    if (it == kernels_.end()) return nullptr;
    // The latest-registered matching range wins, so a family may override a generic entry.
    for (auto r = it->second.rbegin(); r != it->second.rend(); ++r)
        if (opsetVersion >= r->since && opsetVersion <= r->until) return &r->factory;
    return nullptr;
}

std::vector<KernelRegistry::Entry> KernelRegistry::entries() const {
    std::vector<Entry> out;
    for (const auto& [key, ranges] : kernels_)
        for (const auto& r : ranges) out.push_back({key.first, key.second, r.since, r.until});
    return out;
}

}  // namespace onnxlens::engine
