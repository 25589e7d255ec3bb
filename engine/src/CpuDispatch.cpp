#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdlib>
#include <cstring>
#include <iterator>

#include "IsaFamilyTable.h"
#include "OpFamilies.h"
#include "onnxlens/engine/CpuIsa.h"
#include "onnxlens/engine/EngineError.h"

// engine/CMakeLists.txt defines, on this file only: ONNXLENS_ISA_BASELINE (the build's -march),
// ONNXLENS_ISA_NATIVE (a -march=native build: no per-ISA objects), and ONNXLENS_ISA_HAVE_<ISA>
// for each per-ISA object linked in.
#ifndef ONNXLENS_ISA_BASELINE
#define ONNXLENS_ISA_BASELINE "default"
#endif

#define ONNXLENS_DECLARE_ISA_ENTRY(isa) \
    extern "C" const onnxlens::engine::IsaFamily* ONNXLENS_ISA_ENTRY_NAME(isa)(std::size_t * count);
#ifdef ONNXLENS_ISA_HAVE_AVX2
ONNXLENS_DECLARE_ISA_ENTRY(avx2)
#endif
#ifdef ONNXLENS_ISA_HAVE_AVX512
ONNXLENS_DECLARE_ISA_ENTRY(avx512)
#endif
#ifdef ONNXLENS_ISA_HAVE_AVX512VNNI
ONNXLENS_DECLARE_ISA_ENTRY(avx512vnni)
#endif
#undef ONNXLENS_DECLARE_ISA_ENTRY

namespace onnxlens::engine {

namespace {

struct FamilyTable {
    const IsaFamily* families = nullptr;
    std::size_t count = 0;
};

// The families of the object built for `isa` (none for Baseline or an ISA not built). The entry is
// compiled for the baseline (engine/CMakeLists.txt), but it is still called only for an ISA this
// CPU runs: everything it points at is that ISA's code.
FamilyTable familyTable(CpuIsa isa) {
    FamilyTable table;
    if (!cpuSupports(isa)) return table;
    switch (isa) {
#ifdef ONNXLENS_ISA_HAVE_AVX2
        case CpuIsa::Avx2:
            table.families = ONNXLENS_ISA_ENTRY_NAME(avx2)(&table.count);
            break;
#endif
#ifdef ONNXLENS_ISA_HAVE_AVX512
        case CpuIsa::Avx512:
            table.families = ONNXLENS_ISA_ENTRY_NAME(avx512)(&table.count);
            break;
#endif
#ifdef ONNXLENS_ISA_HAVE_AVX512VNNI
        case CpuIsa::Avx512Vnni:
            table.families = ONNXLENS_ISA_ENTRY_NAME(avx512vnni)(&table.count);
            break;
#endif
        default:
            break;
    }
    return table;
}

constexpr CpuIsa kAllIsas[] = {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Vnni};

bool isBuilt(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::Baseline:
            return true;
        case CpuIsa::Avx2:
#ifdef ONNXLENS_ISA_HAVE_AVX2
            return true;
#else
            return false;
#endif
        case CpuIsa::Avx512:
#ifdef ONNXLENS_ISA_HAVE_AVX512
            return true;
#else
            return false;
#endif
        case CpuIsa::Avx512Vnni:
#ifdef ONNXLENS_ISA_HAVE_AVX512VNNI
            return true;
#else
            return false;
#endif
    }
    return false;
}

// ONNXLENS_CPU_ISA's cap, or the highest ISA when unset or unknown.
CpuIsa environmentCap() {
    const char* value = std::getenv("ONNXLENS_CPU_ISA");
    if (!value) return CpuIsa::Avx512Vnni;
    for (CpuIsa isa : kAllIsas) {
        static constexpr const char* kNames[] = {"baseline", "avx2", "avx512", "avx512vnni"};
        if (std::strcmp(value, kNames[static_cast<int>(isa)]) == 0) return isa;
    }
    return CpuIsa::Avx512Vnni;
}

}  // namespace

std::string cpuIsaName(CpuIsa isa) {
    switch (isa) {
        case CpuIsa::Baseline:
#ifdef ONNXLENS_ISA_NATIVE
            return "native";
#else
            return ONNXLENS_ISA_BASELINE;
#endif
        case CpuIsa::Avx2:
            return "AVX2+FMA";
        case CpuIsa::Avx512:
            return "AVX-512";
        case CpuIsa::Avx512Vnni:
            return "AVX-512+VNNI";
    }
    return "unknown";
}

bool cpuSupports(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
    // libgcc's feature bits include the operating system's support (XCR0) for YMM and ZMM state.
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know it.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                        __builtin_cpu_supports("avx512dq");
    switch (isa) {
        case CpuIsa::Baseline:
            return true;
        case CpuIsa::Avx2:
            return avx2;
        case CpuIsa::Avx512:
            return avx512;
        case CpuIsa::Avx512Vnni:
            return avx512 && __builtin_cpu_supports("avx512vnni");
    }
    return false;
#else
    return isa == CpuIsa::Baseline;
#endif
}

std::vector<CpuIsa> builtCpuIsas() {
    std::vector<CpuIsa> out;
    for (CpuIsa isa : kAllIsas)
        if (isBuilt(isa)) out.push_back(isa);
    return out;
}

std::vector<std::string> cpuIsaFamilies(CpuIsa isa) {
    // Only an ISA this CPU runs: its table is read through its own object.
    const FamilyTable table = familyTable(isa);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < table.count; ++i) out.emplace_back(table.families[i].name);
    return out;
}

CpuIsa kernelCpuIsa() {
    static const CpuIsa chosen = [] {
        const CpuIsa cap = environmentCap();
        CpuIsa best = CpuIsa::Baseline;
        for (CpuIsa isa : kAllIsas)
            if (isa <= cap && isBuilt(isa) && cpuSupports(isa)) best = isa;
        return best;
    }();
    return chosen;
}

std::string kernelIsaSummary() {
#ifdef ONNXLENS_ISA_NATIVE
    return "native (built with -march=native, no run-time dispatch)";
#else
    std::string dispatching;
    for (CpuIsa isa : builtCpuIsas()) {
        if (isa == CpuIsa::Baseline) continue;
        dispatching += (dispatching.empty() ? "" : "/") + cpuIsaName(isa);
    }
    std::string text = (kernelCpuIsa() == CpuIsa::Baseline ? std::string("baseline")
                                                           : cpuIsaName(kernelCpuIsa())) +
                       " (built for " + cpuIsaName(CpuIsa::Baseline);
    text += dispatching.empty() ? ", no run-time dispatch)" : ", dispatching " + dispatching + ")";
    return text;
#endif
}

KernelRegistry makeKernelRegistry(CpuIsa isa) {
    if (!isBuilt(isa)) throw EngineError("this build has no kernels for " + cpuIsaName(isa));
    if (!cpuSupports(isa))
        throw EngineError("this CPU does not support " + cpuIsaName(isa) + " kernels");
    // The objects to take families from, best first: `isa`'s, then those below it.
    std::vector<FamilyTable> tables;
    for (auto it = std::rbegin(kAllIsas); it != std::rend(kAllIsas); ++it)
        if (*it <= isa && *it != CpuIsa::Baseline) tables.push_back(familyTable(*it));
    const auto dispatched = [&](const char* family) -> void (*)(KernelRegistry&) {
        for (const FamilyTable& table : tables)
            for (std::size_t i = 0; i < table.count; ++i)
                if (std::strcmp(table.families[i].name, family) == 0)
                    return table.families[i].registerOps;
        return nullptr;
    };
    KernelRegistry registry;
    // In OpFamilies.h's order (a later family may override an earlier one's entry).
#define ONNXLENS_REGISTER_FAMILY(F)         \
    if (auto* registerOps = dispatched(#F)) \
        registerOps(registry);              \
    else                                    \
        ops::register##F##Ops(registry);
    ONNXLENS_OP_FAMILIES(ONNXLENS_REGISTER_FAMILY)
#undef ONNXLENS_REGISTER_FAMILY
    return registry;
}

}  // namespace onnxlens::engine
