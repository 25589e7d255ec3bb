#include "onnxlens/model/ModelWriter.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <system_error>
#include <vector>

#include "ModelWalk.h"
#include "onnxlens/model/ExternalData.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

namespace fs = std::filesystem;

std::string errnoText(int error) { return std::strerror(error); }

// A temporary file beside the target, removed on destruction unless committed.
class TemporaryFile {
  public:
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;

    static Result<std::unique_ptr<TemporaryFile>> createBeside(const fs::path& target) {
        const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
        std::error_code ec;
        if (!fs::is_directory(folder, ec))
            return makeError(target.string(), "the folder " + folder.string() + " does not exist");
        std::string pattern =
            (folder / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
        std::vector<char> name(pattern.begin(), pattern.end());
        name.push_back('\0');
        int fd = ::mkstemp(name.data());
        if (fd < 0)
            return makeError(target.string(),
                             "cannot write in " + folder.string() + ": " + errnoText(errno));
        ::fchmod(fd, 0644);
        return std::unique_ptr<TemporaryFile>(new TemporaryFile(fd, fs::path(name.data())));
    }

    ~TemporaryFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(path_.c_str());
    }

    Status write(const char* data, std::size_t size, const fs::path& target) {
        while (size > 0) {
            const std::size_t chunk = std::min<std::size_t>(size, std::size_t{1} << 30);
            ssize_t n = ::write(fd_, data, chunk);
            if (n < 0) {
                if (errno == EINTR) continue;
                return makeError(target.string(), "write failed: " + errnoText(errno));
            }
            data += n;
            size -= static_cast<std::size_t>(n);
        }
        return Ok{};
    }

    // Flushes, closes and renames over `target`.
    Status commit(const fs::path& target) {
        if (::fsync(fd_) != 0)
            return makeError(target.string(), "write failed: " + errnoText(errno));
        int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0)
            return makeError(target.string(), "write failed: " + errnoText(errno));
        if (::rename(path_.c_str(), target.c_str()) != 0)
            return makeError(target.string(), "cannot replace: " + errnoText(errno));
        committed_ = true;
        return Ok{};
    }

    // Keeps the file but lets a later failure remove the renamed target.
    const fs::path& path() const { return path_; }

  private:
    TemporaryFile(int fd, fs::path path) : fd_(fd), path_(std::move(path)) {}
    int fd_;
    fs::path path_;
    bool committed_ = false;
};

void setExternalEntry(onnx::TensorProto& tensor, const std::string& key, const std::string& value) {
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
}

// Every tensor of the model that is still external, with its bytes in its file's mapping.
Result<std::vector<std::pair<onnx::TensorProto*, MappedExternalData>>> mapSourceTensors(
    onnx::ModelProto& model, const fs::path& sourceDirectory, const fs::path& target) {
    std::vector<std::pair<onnx::TensorProto*, MappedExternalData>> mapped;
    std::optional<Error> failure;
    detail::forEachTensor(model, [&](const onnx::TensorProto& found) {
        if (failure || !usesExternalData(found)) return;
        if (sourceDirectory.empty()) {
            failure = makeError(target.string(), "tensor '" + found.name() +
                                                     "' is external data, and no folder was "
                                                     "given to read it from");
            return;
        }
        auto data = mapExternalData(found, sourceDirectory);
        if (!data) {
            failure = data.error();
            return;
        }
        // The model is ours to change.
        mapped.emplace_back(const_cast<onnx::TensorProto*>(&found), std::move(*data));
    });
    if (failure) return *failure;
    return mapped;
}

// Drops the whole pages inside [data, data + size) of a read-only file mapping from this process.
void releasePages(const char* data, std::uint64_t size) {
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + size) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void pointAtDataFile(onnx::TensorProto& tensor, const std::string& location, std::uint64_t offset,
                     std::uint64_t length) {
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    tensor.clear_external_data();
    setExternalEntry(tensor, "location", location);
    setExternalEntry(tensor, "offset", std::to_string(offset));
    setExternalEntry(tensor, "length", std::to_string(length));
}

}  // namespace

std::uint64_t defaultExternalDataThreshold() {
    if (const char* text = std::getenv("ONNXLENS_TEST_EXTERNAL_DATA_THRESHOLD")) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end != text && *end == '\0') return value;
    }
    return (std::uint64_t{2} << 30) - (std::uint64_t{64} << 20);
}

Status writeFileAtomically(const fs::path& file, const std::string& bytes) {
    auto temp = TemporaryFile::createBeside(file);
    if (!temp) return temp.error();
    if (auto st = (*temp)->write(bytes.data(), bytes.size(), file); !st) return st;
    return (*temp)->commit(file);
}

Result<WrittenModel> writeModelFile(onnx::ModelProto& model, const fs::path& file,
                                    const ModelWriteOptions& options) {
    WrittenModel written;
    written.file = file;
    std::error_code ec;
    if (fs::is_directory(file, ec))
        return makeError(file.string(), "is a folder, not a model file");
    // A tensor that should hold elements but has neither data nor an external location would be
    // written as a model that cannot load (a tool that lost the bytes on the way): refused here,
    // before anything is written.
    std::string emptyTensor;
    detail::forEachTensor(model, [&](const onnx::TensorProto& t) {
        if (!emptyTensor.empty() || usesExternalData(t) || !t.raw_data().empty() ||
            t.float_data_size() || t.int32_data_size() || t.string_data_size() ||
            t.int64_data_size() || t.double_data_size() || t.uint64_data_size())
            return;
        if (elementCount(t).value_or(0) > 0) emptyTensor = t.name();
    });
    if (!emptyTensor.empty())
        return makeError(file.string(), "tensor '" + emptyTensor +
                                            "' has a shape but no data and no external location; "
                                            "nothing was written");
    auto sourceTensors = mapSourceTensors(model, options.sourceDirectory, file);
    if (!sourceTensors) return sourceTensors.error();
    std::uint64_t sourceBytes = 0;
    for (const auto& [tensor, data] : *sourceTensors) sourceBytes += data.length;
    const bool external = options.forceExternalData ||
                          model.ByteSizeLong() + sourceBytes > options.externalDataThreshold;
    if (!external) {
        // Small enough for one file: the external tensors become inline.
        for (auto& [tensor, data] : *sourceTensors) {
            std::string bytes(data.data(), data.length);
            if (auto st = data.mapping->checkUnchanged(); !st) return st.error();
            tensor->set_raw_data(std::move(bytes));
            tensor->clear_external_data();
            tensor->clear_data_location();
        }
        sourceTensors->clear();
    }
    std::unique_ptr<TemporaryFile> dataTemp;
    fs::path dataFile;
    if (external) {
        dataFile = fs::path(file).replace_filename(file.filename().string() + ".data");
        const std::string location = dataFile.filename().string();
        auto temp = TemporaryFile::createBeside(dataFile);
        if (!temp) return temp.error();
        dataTemp = std::move(*temp);
        std::uint64_t offset = 0;
        static const char kZeros[64] = {};
        // Offsets aligned to 64 bytes, so readers may map tensors directly.
        auto align = [&]() -> Status {
            const std::uint64_t padding = (64 - offset % 64) % 64;
            if (auto st = dataTemp->write(kZeros, padding, dataFile); !st) return st;
            offset += padding;
            return Ok{};
        };
        std::vector<onnx::TensorProto*> moved;
        detail::forEachTensor(model, [&](const onnx::TensorProto& found) {
            if (found.raw_data().size() >= options.externalTensorMinBytes &&
                !usesExternalData(found))
                moved.push_back(
                    const_cast<onnx::TensorProto*>(&found));  // the model is ours to change
        });
        for (auto* tensor : moved) {
            if (auto st = align(); !st) return st.error();
            const std::uint64_t length = tensor->raw_data().size();
            if (auto st = dataTemp->write(tensor->raw_data().data(), length, dataFile); !st)
                return st.error();
            // Frees the bytes now (clearing would keep the string's capacity).
            std::string().swap(*tensor->mutable_raw_data());
            tensor->clear_raw_data();
            pointAtDataFile(*tensor, location, offset, length);
            offset += length;
        }
        // Page cache to page cache: the source file's pages are read through its mapping, a
        // chunk at a time, and dropped from this process once written (they stay in the page
        // cache, and a session sharing the mapping faults them in again when it reads them).
        for (auto& [tensor, data] : *sourceTensors) {
            if (auto st = align(); !st) return st.error();
            constexpr std::uint64_t kChunk = std::uint64_t{64} << 20;
            for (std::uint64_t done = 0; done < data.length; done += kChunk) {
                const std::uint64_t size = std::min(kChunk, data.length - done);
                const char* chunk = data.data() + done;
                if (auto st = dataTemp->write(chunk, size, dataFile); !st) return st.error();
                releasePages(chunk, size);
            }
            if (auto st = data.mapping->checkUnchanged(); !st) return st.error();
            pointAtDataFile(*tensor, location, offset, data.length);
            offset += data.length;
        }
        written.externalDataFile = dataFile;
        written.externalBytes = offset;
    }
    std::string bytes;
    if (model.ByteSizeLong() > (std::uint64_t{2} << 30) - 1 || !model.SerializeToString(&bytes))
        return makeError(
            file.string(),
            "the model cannot be serialized (over 2 GB even without its large tensors?)");
    auto temp = TemporaryFile::createBeside(file);
    if (!temp) return temp.error();
    if (auto st = (*temp)->write(bytes.data(), bytes.size(), file); !st) return st.error();
    if (dataTemp)
        if (auto st = dataTemp->commit(dataFile); !st) return st.error();
    if (auto st = (*temp)->commit(file); !st) {
        if (dataTemp) ::unlink(dataFile.c_str());
        return st.error();
    }
    written.modelBytes = bytes.size();
    return written;
}

std::uint64_t modelBytesOnDisk(const onnx::ModelProto& model, const fs::path& file,
                               const fs::path& modelDirectory) {
    std::error_code ec;
    std::uint64_t total = fs::file_size(file, ec);
    if (ec) total = 0;
    std::set<fs::path> files;
    detail::forEachTensor(model, [&](const onnx::TensorProto& tensor) {
        if (!usesExternalData(tensor)) return;
        if (auto location = resolveExternalData(tensor, modelDirectory))
            files.insert(location->file);
    });
    for (const auto& f : files) {
        std::error_code sizeError;
        const auto size = fs::file_size(f, sizeError);
        if (!sizeError) total += size;
    }
    return total;
}

}  // namespace onnxlens
