#include "onnxlens/model/ModelWriter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <system_error>
#include <vector>

#include "ModelWalk.h"
#include "onnxlens/model/ExternalData.h"

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

}  // namespace

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
    const bool external =
        options.forceExternalData || model.ByteSizeLong() > options.externalDataThreshold;
    std::unique_ptr<TemporaryFile> dataTemp;
    fs::path dataFile;
    if (external) {
        dataFile = fs::path(file).replace_filename(file.filename().string() + ".data");
        auto temp = TemporaryFile::createBeside(dataFile);
        if (!temp) return temp.error();
        dataTemp = std::move(*temp);
        std::uint64_t offset = 0;
        std::vector<onnx::TensorProto*> moved;
        detail::forEachTensor(model, [&](const onnx::TensorProto& found) {
            if (found.raw_data().size() >= options.externalTensorMinBytes &&
                !usesExternalData(found))
                moved.push_back(
                    const_cast<onnx::TensorProto*>(&found));  // the model is ours to change
        });
        static const char kZeros[64] = {};
        for (auto* tensor : moved) {
            // Offsets aligned to 64 bytes, so readers may map tensors directly.
            const std::uint64_t padding = (64 - offset % 64) % 64;
            if (auto st = dataTemp->write(kZeros, padding, dataFile); !st) return st.error();
            offset += padding;
            const std::string& bytes = tensor->raw_data();
            if (auto st = dataTemp->write(bytes.data(), bytes.size(), dataFile); !st)
                return st.error();
            const std::uint64_t length = bytes.size();
            tensor->clear_raw_data();
            tensor->set_data_location(onnx::TensorProto::EXTERNAL);
            tensor->clear_external_data();
            setExternalEntry(*tensor, "location", dataFile.filename().string());
            setExternalEntry(*tensor, "offset", std::to_string(offset));
            setExternalEntry(*tensor, "length", std::to_string(length));
            offset += length;
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
