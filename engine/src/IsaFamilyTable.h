#pragma once
// The entry point of one per-ISA object of a portable build (engine/CMakeLists.txt generates its
// source): the operator families that object compiled, each with its register function. The
// entry is the only global symbol the object keeps; everything else in it is local to it.
#include <cstddef>

namespace onnxlens::engine {

class KernelRegistry;

struct IsaFamily {
    const char* name;                      // "Elementwise", as in OpFamilies.h
    void (*registerOps)(KernelRegistry&);  // that object's registerElementwiseOps
};

}  // namespace onnxlens::engine

// extern "C" const onnxlens::engine::IsaFamily* onnxlens_isa_families_<isa>(std::size_t* count);
#define ONNXLENS_ISA_ENTRY_NAME(isa) onnxlens_isa_families_##isa
