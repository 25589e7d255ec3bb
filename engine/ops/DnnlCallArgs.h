#pragma once
// The arguments of one oneDNN primitive, made once and pointed at each call's buffers. Creating a
// dnnl::memory per argument and an std::unordered_map per call cost three to six heap blocks an
// argument inside and outside oneDNN (malloc and free were 4% of a run of MiniLM's 37 small
// products, 16 rows each); a kept memory object only takes the call's pointer
// (set_data_handle: no allocation, and the same zero padding of blocked layouts as creating the
// memory), and the call goes to oneDNN's C function with the arguments in an array on the stack.
//
// Not for concurrent calls: one DnnlCallArgs per primitive and caller (the kernels hold their
// oneDNN state under a mutex; a primitive run by several threads at once takes one each).
//
// Scratchpads: every primitive a kernel keeps is made with scratchpad_mode::user
// (userScratchpad()) and runs on the calling thread's scratchpad (addScratchpad). oneDNN's own
// (library) scratchpad is one buffer per creating thread, shared by the primitives made there: a
// primitive run or destroyed on another thread writes outside any buffer (oneDNN's documented
// limit). Sessions are made on one thread and run on others (the benchmark's worker, the GUI's
// engine process); with oneDNN's SSE4.1 kernels (an x86-64-v2 processor) the GEMM convolution's
// im2col buffer then crashed the process.
#ifdef ONNXLENS_WITH_DNNL

#include <array>
#include <cstddef>
#include <cstdint>
#include <dnnl.hpp>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "onnxlens/engine/EngineError.h"

namespace onnxlens::engine::ops {

// Primitive attributes for a primitive a kernel keeps: the scratchpad is the caller's.
inline dnnl::primitive_attr userScratchpad(dnnl::primitive_attr attr = {}) {
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

// The calling thread's scratchpad, at least `bytes` long: the largest any primitive run on this
// thread asked for (as oneDNN's per-thread one), 64-byte aligned. A primitive's call is over
// before the thread makes another, so one buffer serves all.
inline void* threadScratchpad(std::size_t bytes) {
    struct Buffer {
        struct Free {
            void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{64}); }
        };
        std::unique_ptr<std::byte[], Free> data;
        std::size_t size = 0;
    };
    thread_local Buffer buffer;
    if (bytes > buffer.size) {
        buffer.data.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64})));
        buffer.size = bytes;
    }
    return buffer.data.get();
}

class DnnlCallArgs {
  public:
    static constexpr std::size_t kMaxArgs = 8;

    DnnlCallArgs() = default;

    // Argument `arg` (DNNL_ARG_SRC...) of layout `desc`, pointed at no buffer until a call.
    void add(int arg, const dnnl::memory::desc& desc, const dnnl::engine& engine) {
        require(count_ < kMaxArgs, "internal: too many oneDNN arguments");
        slots_[count_++] = {arg, dnnl::memory(desc, engine, DNNL_MEMORY_NONE)};
    }

    // The scratchpad of a primitive made with userScratchpad() (its primitive_desc's
    // scratchpad_desc()): each call points it at the calling thread's (threadScratchpad).
    void addScratchpad(const dnnl::memory::desc& desc, const dnnl::engine& engine) {
        scratchpadBytes_ = desc.get_size();
        if (scratchpadBytes_ > 0) add(DNNL_ARG_SCRATCHPAD, desc, engine);
    }

    // Runs `primitive` on `stream` with each argument pointed at its buffer; `buffers` pairs an
    // argument added above with its pointer (arguments left out keep their last buffer; a null
    // pointer for an argument not added, an absent optional one, is passed over).
    void execute(const dnnl::primitive& primitive, const dnnl::stream& stream,
                 std::initializer_list<std::pair<int, const void*>> buffers) {
        for (const auto& [arg, data] : buffers) point(arg, data);
        if (scratchpadBytes_ > 0) point(DNNL_ARG_SCRATCHPAD, threadScratchpad(scratchpadBytes_));
        std::array<dnnl_exec_arg_t, kMaxArgs> args{};
        for (std::size_t i = 0; i < count_; ++i) args[i] = {slots_[i].arg, slots_[i].memory.get()};
        dnnl::error::wrap_c_api(dnnl_primitive_execute(primitive.get(), stream.get(),
                                                       static_cast<int>(count_), args.data()),
                                "could not execute a primitive");
    }

  private:
    struct Slot {
        int arg = 0;
        dnnl::memory memory;
    };

    void point(int arg, const void* data) {
        for (std::size_t i = 0; i < count_; ++i) {
            Slot& slot = slots_[i];
            if (slot.arg != arg) continue;
            // Every call, also for the same pointer: like creating the memory did, setting the
            // handle zero-pads a blocked layout's padded channels, which oneDNN's kernels read as
            // zeros (the buffer at an address may be a new tensor's).
            slot.memory.set_data_handle(const_cast<void*>(data));
            return;
        }
        if (data != nullptr)
            fail("internal: oneDNN argument " + std::to_string(arg) + " was not added");
    }

    std::array<Slot, kMaxArgs> slots_{};
    std::size_t count_ = 0;
    std::size_t scratchpadBytes_ = 0;
};

}  // namespace onnxlens::engine::ops

#endif
