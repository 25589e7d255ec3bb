#pragma once
// The optimizer's passes, in the order the driver (OptimizerDriver.cpp) runs them.
//
// Adding a pass: write `int myPass(PassContext&)` in a file of its job under engine/src/optimizer
// (read the graph through context.index(), shapes through context.shapes(); return the number of
// rewrites, 0 when nothing changed), declare it in Passes.h, say in GraphOptimizer.h what it
// does, and add one line to the table in PassTable.cpp:
//
//     {"my-pass", myPass, PassStage::Fusion, kNeedsShapes | kKeepsShapes},
//
// where the stage places it (cleanup passes repeat until nothing changes; fusion passes run once,
// in table order, after them) and the flags say whether it reads shapes and whether shapes inferred
// before it still hold after it (every value it leaves keeps its shape and it makes no value that a
// new inference would type; when unsure, leave kKeepsShapes out and the driver re-infers).
#include <string_view>
#include <vector>

#include "optimizer/PassContext.h"

namespace onnxlens::engine {

enum class PassStage {
    Cleanup,  // repeated, in table order, until a round changes nothing (at most a few rounds)
    Fusion,   // once each, in table order, after the cleanup rounds
};

enum PassFlags : unsigned {
    kNoFlags = 0,
    kNeedsShapes = 1u << 0,  // may read context.shapes()
    kKeepsShapes = 1u << 1,  // shape inference from before the pass still holds after it
};

struct OptimizerPass {
    std::string_view name;
    int (*run)(PassContext&);
    PassStage stage;
    unsigned flags;
    bool needsShapes() const { return (flags & kNeedsShapes) != 0; }
    bool keepsShapes() const { return (flags & kKeepsShapes) != 0; }
};

const std::vector<OptimizerPass>& optimizerPassTable();

}  // namespace onnxlens::engine
