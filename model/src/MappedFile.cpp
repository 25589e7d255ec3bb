#include "onnxlens/model/MappedFile.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace onnxlens {

namespace {

namespace fs = std::filesystem;

// The SIGBUS handler's view of the live mappings: a fixed table it can read without locks.
struct GuardSlot {
    std::atomic<bool> used{false};
    std::atomic<std::uintptr_t> begin{0};  // 0: free (published last, cleared first)
    std::atomic<std::uint64_t> length{0};
    std::atomic<bool> faulted{false};
};
constexpr int kGuardSlots = 4096;
std::array<GuardSlot, kGuardSlots> guardSlots;
struct sigaction previousSigbusAction;
std::atomic<std::uint64_t> liveMappedBytes{0};

void onSigbus(int signal, siginfo_t* info, void* context) {
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (auto& slot : guardSlots) {
        const std::uintptr_t begin = slot.begin.load(std::memory_order_acquire);
        if (begin == 0 || address < begin || address - begin >= slot.length.load()) continue;
        // Zero pages over the whole mapping: the faulting read resumes, and so does every later
        // read of this file's tensors, until the caller sees faulted() and drops the results.
        void* replaced = ::mmap(reinterpret_cast<void*>(begin), slot.length.load(), PROT_READ,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (replaced != MAP_FAILED) {
            slot.faulted.store(true);
            return;
        }
        break;
    }
    if ((previousSigbusAction.sa_flags & SA_SIGINFO) && previousSigbusAction.sa_sigaction) {
        previousSigbusAction.sa_sigaction(signal, info, context);
    } else if (previousSigbusAction.sa_handler != SIG_DFL &&
               previousSigbusAction.sa_handler != SIG_IGN) {
        previousSigbusAction.sa_handler(signal);
    } else {
        // Not ours: the default action, taken when the faulting instruction runs again.
        struct sigaction fallback {};
        fallback.sa_handler = SIG_DFL;
        ::sigaction(SIGBUS, &fallback, nullptr);
    }
}

void installSigbusGuard() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_sigaction = onSigbus;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &previousSigbusAction);
    });
}

int claimGuardSlot(const void* data, std::uint64_t length) {
    for (int i = 0; i < kGuardSlots; ++i) {
        bool expected = false;
        if (!guardSlots[i].used.compare_exchange_strong(expected, true)) continue;
        guardSlots[i].faulted.store(false);
        guardSlots[i].length.store(length);
        guardSlots[i].begin.store(reinterpret_cast<std::uintptr_t>(data),
                                  std::memory_order_release);
        return i;
    }
    return -1;
}

std::int64_t modificationTimeNs(const struct stat& st) {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::mutex registryMutex;
std::map<fs::path, std::weak_ptr<const MappedFile>>& registry() {
    static std::map<fs::path, std::weak_ptr<const MappedFile>> live;
    return live;
}

}  // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const fs::path& file) {
    const std::string where = file.string();
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return makeError(where, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int error = errno;
        ::close(fd);
        return makeError(where, std::string("cannot read its size: ") + std::strerror(error));
    }
    std::lock_guard lock(registryMutex);
    auto& live = registry();
    std::erase_if(live, [](const auto& entry) { return entry.second.expired(); });
    if (auto it = live.find(file); it != live.end()) {
        if (auto existing = it->second.lock()) {
            if (existing->device_ == static_cast<std::uint64_t>(st.st_dev) &&
                existing->inode_ == static_cast<std::uint64_t>(st.st_ino) &&
                existing->size_ == static_cast<std::uint64_t>(st.st_size) &&
                existing->mtimeNs_ == modificationTimeNs(st) && !existing->faulted()) {
                ::close(fd);
                return existing;
            }
        }
    }
    std::shared_ptr<MappedFile> mapped(new MappedFile());
    mapped->file_ = file;
    mapped->size_ = static_cast<std::uint64_t>(st.st_size);
    mapped->device_ = static_cast<std::uint64_t>(st.st_dev);
    mapped->inode_ = static_cast<std::uint64_t>(st.st_ino);
    mapped->mtimeNs_ = modificationTimeNs(st);
    if (mapped->size_ > 0) {
        installSigbusGuard();
        void* data = ::mmap(nullptr, mapped->size_, PROT_READ, MAP_PRIVATE, fd, 0);
        const int error = errno;
        ::close(fd);
        if (data == MAP_FAILED)
            return makeError(where, std::string("cannot memory-map: ") + std::strerror(error));
        mapped->data_ = data;
        mapped->guardSlot_ = claimGuardSlot(data, mapped->size_);
        liveMappedBytes += mapped->size_;
    } else {
        ::close(fd);
    }
    live[file] = mapped;
    return std::shared_ptr<const MappedFile>(std::move(mapped));
}

MappedFile::~MappedFile() {
    if (!data_) return;
    if (guardSlot_ >= 0) {
        auto& slot = guardSlots[guardSlot_];
        slot.begin.store(0, std::memory_order_release);
        slot.used.store(false);
    }
    ::munmap(data_, size_);
    liveMappedBytes -= size_;
    // The registry's expired entry is dropped by the next open(): locking here could deadlock
    // when open() itself releases the last reference.
}

namespace {

bool populatePages(void* begin, std::uint64_t bytes) {
#ifdef MADV_POPULATE_READ
    constexpr int kPopulateRead = MADV_POPULATE_READ;
#else
    constexpr int kPopulateRead = 22;  // Linux 5.14's value, for older C library headers
#endif
    return ::madvise(begin, bytes, kPopulateRead) == 0;
}

}  // namespace

bool MappedFile::populate(std::uint64_t maxBytes) const {
    if (!data_ || size_ > maxBytes || faulted()) return false;
    return populatePages(data_, size_);
}

bool MappedFile::populate(std::uint64_t offset, std::uint64_t bytes) const {
    if (!data_ || faulted() || offset >= size_ || bytes == 0) return false;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t end = offset + std::min(bytes, size_ - offset);
    const std::uint64_t first = offset / page * page;  // the mapping starts on a page
    return populatePages(static_cast<char*>(data_) + first, end - first);
}

bool MappedFile::faulted() const {
    return guardSlot_ >= 0 && guardSlots[guardSlot_].faulted.load();
}

Status MappedFile::checkUnchanged() const {
    const std::string where = file_.string();
    const std::string reload = "; reload the model";
    if (faulted())
        return makeError(where, "was truncated while in use (a read past its new end)" + reload);
    struct stat st {};
    if (::stat(file_.c_str(), &st) != 0)
        return makeError(where, "no longer exists since the model was loaded" + reload);
    if (static_cast<std::uint64_t>(st.st_dev) != device_ ||
        static_cast<std::uint64_t>(st.st_ino) != inode_)
        return makeError(where, "was replaced by another file since the model was loaded" + reload);
    if (static_cast<std::uint64_t>(st.st_size) < size_)
        return makeError(where, "was truncated from " + std::to_string(size_) + " to " +
                                    std::to_string(st.st_size) +
                                    " bytes since the model was loaded" + reload);
    if (static_cast<std::uint64_t>(st.st_size) != size_ || modificationTimeNs(st) != mtimeNs_)
        return makeError(where, "was modified since the model was loaded" + reload);
    return Ok{};
}

std::uint64_t MappedFile::mappedBytesInProcess() { return liveMappedBytes.load(); }

}  // namespace onnxlens
