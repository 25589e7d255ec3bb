#pragma once
// External data files memory-mapped read-only, so that multi-gigabyte weights are used in place:
// nothing is read at load, pages come in when a kernel first touches them, and every tensor,
// session and view of the same unchanged file shares one mapping (the last user unmaps it).
//
// A file truncated under a live mapping would kill the process with SIGBUS at the next touch of a
// page past the new end. Two defences, both here:
// - checkUnchanged() compares the file on disk with what was mapped (inode, size, mtime); the
//   engine calls it before every run, so a file replaced, rewritten or truncated between runs is
//   an error naming the file;
// - a process-wide SIGBUS handler covers the rest (a truncation during a run, or while a view
//   copies values out): a fault inside a registered mapping replaces that whole mapping with
//   zero pages, marks it faulted and lets the faulting instruction resume. The run then finishes
//   on zeros, and its caller, seeing faulted(), discards the results and reports the error.
//   Faults outside our mappings go to the handler installed before ours (or the default action).
#include <cstdint>
#include <filesystem>
#include <memory>

#include "onnxlens/model/Result.h"

namespace onnxlens {

class MappedFile {
  public:
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    // Maps the whole of `file`, or returns the live mapping of it when the file is unchanged
    // since (same inode, size and modification time) and that mapping has not faulted.
    static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& file);

    const std::filesystem::path& file() const { return file_; }
    const char* data() const { return static_cast<const char*>(data_); }  // null when empty
    std::uint64_t size() const { return size_; }

    // An error naming the file when it is no longer the file that was mapped (replaced,
    // truncated, rewritten) or when a read of the mapping faulted.
    Status checkUnchanged() const;
    // True once a read of the mapping hit a page the file no longer has (see above).
    bool faulted() const;
    // Reads the whole file into the mapping's page tables now (madvise MADV_POPULATE_READ, Linux
    // 5.14 and later), so that a first run does not stop at every page: for a session about to
    // use every weight. Does nothing, returning false, when the kernel lacks it, the file fails to
    // read, or the file is above `maxBytes` (a model larger than the memory it may keep).
    bool populate(std::uint64_t maxBytes) const;
    // The same for bytes [offset, offset + bytes) of the file (widened to whole pages): for a
    // session that reads some of the file's tensors whole and others a few rows at a time.
    bool populate(std::uint64_t offset, std::uint64_t bytes) const;

    // Live mappings and their bytes in the whole process (for the status bar and tests).
    static std::uint64_t mappedBytesInProcess();

  private:
    MappedFile() = default;
    std::filesystem::path file_;
    void* data_ = nullptr;
    std::uint64_t size_ = 0;
    std::uint64_t device_ = 0, inode_ = 0;
    std::int64_t mtimeNs_ = 0;
    int guardSlot_ = -1;  // index in the SIGBUS handler's table; -1: not guarded (table full)
};

}  // namespace onnxlens
