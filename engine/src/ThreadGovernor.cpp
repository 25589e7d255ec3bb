#include "ThreadGovernor.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace onnxlens::engine {

namespace {

// Closes a file descriptor on every path.
struct FileDescriptor {
    int fd;
    ~FileDescriptor() {
        if (fd >= 0) ::close(fd);
    }
};

// The second number of a schedstat line, "time on a CPU, time waiting, timeslices".
bool parseWaiting(const char* text, std::size_t size, std::int64_t& waiting) {
    const char* end = text + size;
    std::int64_t onCpu = 0;
    auto first = std::from_chars(text, end, onCpu);
    if (first.ec != std::errc() || first.ptr == end || *first.ptr != ' ') return false;
    return std::from_chars(first.ptr + 1, end, waiting).ec == std::errc();
}

std::int64_t steadyNanoseconds() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

bool adaptiveThreadsTurnedOff() {
    const char* adaptive = std::getenv("ONNXLENS_ADAPTIVE_THREADS");
    return adaptive && std::string(adaptive) == "0";
}

std::string reducedThreadsNote(std::int64_t reducedRuns, std::int64_t runs, int fewest,
                               int requested) {
    if (reducedRuns <= 0) return {};
    return (requested > 0 && fewest < requested - 1 ? "down to " : "") + std::to_string(fewest) +
           (fewest == 1 ? " thread" : " threads") + " in " + std::to_string(reducedRuns) + " of " +
           std::to_string(runs) + " runs: other programs kept the cores busy";
}

bool readThreadWaitTimes(ThreadWaitTimes& out) {
    out.clear();
    // Raw system calls into stack buffers: opendir and fopen would allocate (see ThreadUse.h).
    const FileDescriptor tasks{::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (tasks.fd < 0) return false;
    alignas(8) char entries[4096];
    for (;;) {
        const long got = ::syscall(SYS_getdents64, tasks.fd, entries, sizeof entries);
        if (got < 0) return false;
        if (got == 0) break;
        for (long offset = 0; offset < got;) {
            dirent64 entry;
            std::memcpy(&entry, entries + offset, offsetof(dirent64, d_name));
            const char* name = entries + offset + offsetof(dirent64, d_name);
            offset += entry.d_reclen;
            int tid = 0;
            const std::size_t length = ::strnlen(name, sizeof entry.d_name);
            if (std::from_chars(name, name + length, tid).ptr != name + length || tid <= 0)
                continue;  // "." and ".."
            if (out.size() == out.capacity()) continue;
            char path[64] = "/proc/self/task/";
            std::size_t at = std::strlen(path);
            if (at + length + sizeof "/schedstat" > sizeof path) continue;
            std::memcpy(path + at, name, length);
            std::memcpy(path + at + length, "/schedstat", sizeof "/schedstat");
            const FileDescriptor file{::open(path, O_RDONLY | O_CLOEXEC)};
            if (file.fd < 0) continue;  // the thread ended meanwhile
            char line[128];
            const ssize_t size = ::read(file.fd, line, sizeof line);
            std::int64_t waiting = 0;
            if (size <= 0 || !parseWaiting(line, static_cast<std::size_t>(size), waiting))
                return false;
            out.push_back({tid, waiting});
        }
    }
    std::sort(out.begin(), out.end(),
              [](const ThreadWait& x, const ThreadWait& y) { return x.tid < y.tid; });
    return !out.empty();
}

ThreadGovernor::ThreadGovernor(int requested, bool adapt, WaitReader reader, Clock clock)
    : adapt_(adapt && requested > 1 && reader),
      reader_(std::move(reader)),
      clock_(clock ? std::move(clock) : Clock(steadyNanoseconds)),
      current_(std::max(1, requested)),
      settled_(current_) {
    use_.requested = current_;
    use_.fewest = current_;
    windowStart_.reserve(kMostThreads);
    reading_.reserve(kMostThreads);
}

int ThreadGovernor::beginRun() {
    if (!adapt_) return current_;
    const std::int64_t now = clock_();
    if (lastRunEnd_ >= 0 && now - lastRunEnd_ > kStaleGapNs) windowOpen_ = false;
    if (!windowOpen_) {
        windowOpen_ = reader_(windowStart_);
        windowRunNs_ = 0;
        if (!windowOpen_) adapt_ = false;  // the kernel does not report waits: stay as we are
    }
    runStart_ = clock_();
    return current_;
}

void ThreadGovernor::endRun() {
    ++use_.runs;
    if (current_ < use_.requested) ++use_.reducedRuns;
    use_.fewest = std::min(use_.fewest, current_);
    if (!adapt_) return;
    const std::int64_t now = clock_();
    windowRunNs_ += std::max<std::int64_t>(0, now - runStart_);
    lastRunEnd_ = now;
    if (windowOpen_ && windowRunNs_ >= kWindowRunNs) closeWindow(now);
}

std::int64_t ThreadGovernor::longestWaitInWindow() const {
    // Both readings are in thread id order; a thread started in the window waited all of its
    // count in it.
    std::int64_t longest = 0;
    auto before = windowStart_.begin();
    for (const ThreadWait& now : reading_) {
        while (before != windowStart_.end() && before->tid < now.tid) ++before;
        const bool known = before != windowStart_.end() && before->tid == now.tid;
        longest = std::max(longest, now.waitedNs - (known ? before->waitedNs : 0));
    }
    return longest;
}

void ThreadGovernor::closeWindow(std::int64_t now) {
    if (!reader_(reading_)) {
        adapt_ = false;
        return;
    }
    const bool contended = static_cast<double>(longestWaitInWindow()) >
                           kContendedShare * static_cast<double>(windowRunNs_);
    std::swap(windowStart_, reading_);
    windowRunNs_ = 0;
    const bool probing = current_ > settled_;
    if (contended) {
        if (probing) {
            current_ = settled_;
            probeInterval_ = std::min(kLongestProbeNs, probeInterval_ * 2);
        } else if (current_ > 1) {
            current_ = std::max(1, current_ / 2);
            settled_ = current_;
            probeInterval_ = kFirstProbeNs;
        }
        probeAt_ = now + probeInterval_;
        return;
    }
    if (probing) {
        settled_ = current_;  // twice as many ran without waiting: keep them
        probeInterval_ = kFirstProbeNs;
        probeAt_ = now + probeInterval_;
    }
    if (current_ < use_.requested && now >= probeAt_)
        current_ = std::min(use_.requested, current_ * 2);
}

}  // namespace onnxlens::engine
