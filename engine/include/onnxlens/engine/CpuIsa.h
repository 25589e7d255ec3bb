#pragma once
// Run-time choice of the instruction set of the engine's own kernels (issue 31, part 4).
//
// A portable build (the `portable` preset, ONNXLENS_NATIVE=OFF) compiles the engine for a baseline
// (x86-64-v2) and compiles the hot operator families a second and third time, as per-ISA objects
// (-mavx2 -mfma; -mavx512f/bw/vl/dq), each object's inline and template code made local to it (see
// engine/CMakeLists.txt), so nothing compiled for AVX-512 can be reached from the baseline's code.
// Once per process the engine picks the best of those objects that this CPU runs and registers
// their kernels in KernelRegistry::global(); oneDNN dispatches on its own. A native build
// (-march=native) has no per-ISA objects and reports that.
#include <string>
#include <vector>

#include "onnxlens/engine/KernelRegistry.h"

namespace onnxlens::engine {

enum class CpuIsa {
    Baseline,    // the build's own -march (x86-64-v2 in a portable build)
    Avx2,        // AVX2 + FMA (Haswell, Zen)
    Avx512,      // AVX-512 F, BW, VL and DQ (Skylake-SP, Ice Lake, Zen 4)
    Avx512Vnni,  // the above and AVX512-VNNI (Cascade Lake and later, Zen 4)
};

// "AVX2+FMA", "AVX-512", "AVX-512+VNNI"; the baseline's name is the build's -march
// ("x86-64-v2", "native").
std::string cpuIsaName(CpuIsa isa);

// Whether this CPU (and its operating system: AVX state saved) runs code of that ISA.
bool cpuSupports(CpuIsa isa);

// The ISAs this build has kernels for: Baseline first, then its per-ISA objects, ascending.
std::vector<CpuIsa> builtCpuIsas();

// The operator families compiled for an ISA ("Elementwise", "MatMul", ...): empty for Baseline
// (every family), for an ISA this build has no object for and for one this CPU does not run.
std::vector<std::string> cpuIsaFamilies(CpuIsa isa);

// The ISA the engine's kernels use in this process: the best built one the CPU supports, chosen
// once. The environment variable ONNXLENS_CPU_ISA (baseline, avx2, avx512, avx512vnni) caps it
// (to compare the kernels on one machine); it never raises it above what the CPU supports.
CpuIsa kernelCpuIsa();

// What --version and Help > About print, e.g.
// "AVX2+FMA (built for x86-64-v2, dispatching AVX2+FMA/AVX-512/AVX-512+VNNI)".
std::string kernelIsaSummary();

// A registry with every operator family, the dispatched families taken from the object of `isa`
// (or the best object below it that has the family). Throws EngineError when the CPU does not
// support `isa` or the build has no kernels for it. KernelRegistry::global() is
// makeKernelRegistry(kernelCpuIsa()); tests build others to compare the ISAs' kernels.
KernelRegistry makeKernelRegistry(CpuIsa isa);

}  // namespace onnxlens::engine
