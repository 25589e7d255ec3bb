#include "onnxlens/model/ExternalData.h"

#include <charconv>
#include <cstring>
#include <optional>
#include <system_error>
#include <vector>

#include "ModelWalk.h"
#include "onnxlens/model/TensorTypes.h"

namespace onnxlens {

namespace {

namespace fs = std::filesystem;

std::optional<std::uint64_t> parseUnsigned(const std::string& text) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

bool isInside(const fs::path& file, const fs::path& directory) {
    auto f = file.begin();
    for (auto d = directory.begin(); d != directory.end(); ++d, ++f) {
        if (d->empty()) continue;  // trailing separator of the folder
        if (f == file.end() || *f != *d) return false;
    }
    return true;
}

}  // namespace

bool usesExternalData(const onnx::TensorProto& tensor) {
    return tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL;
}

Result<ExternalDataLocation> resolveExternalData(const onnx::TensorProto& tensor,
                                                 const fs::path& modelDirectory) {
    const std::string where = "tensor '" + tensor.name() + "'";
    std::string location;
    std::optional<std::uint64_t> offset, length;
    for (const auto& entry : tensor.external_data()) {
        if (entry.key() == "location") {
            location = entry.value();
        } else if (entry.key() == "offset" || entry.key() == "length") {
            auto value = parseUnsigned(entry.value());
            if (!value)
                return makeError(where, "external data " + entry.key() + " '" + entry.value() +
                                            "' is not a non-negative integer");
            (entry.key() == "offset" ? offset : length) = value;
        }
    }
    if (location.empty()) return makeError(where, "external data has no location");
    const fs::path relative(location);
    if (relative.is_absolute())
        return makeError(where,
                         "external data location '" + location +
                             "' is an absolute path; it must be relative to the model folder");
    for (const auto& part : relative)
        if (part == "..")
            return makeError(where, "external data location '" + location +
                                        "' leaves the model folder (contains '..')");
    std::error_code ec;
    const fs::path folder = fs::canonical(modelDirectory, ec);
    if (ec)
        return makeError(modelDirectory.string(),
                         "cannot resolve the model folder: " + ec.message());
    const fs::path file = fs::canonical(folder / relative, ec);
    if (ec)
        return makeError(
            where, "external data file '" + (folder / relative).string() + "' does not exist");
    if (!isInside(file, folder))
        return makeError(where, "external data location '" + location + "' leads to '" +
                                    file.string() + "', outside the model folder (symlink)");
    if (!fs::is_regular_file(file, ec))
        return makeError(where, "external data location '" + location + "' is not a regular file");
    const std::uint64_t size = fs::file_size(file, ec);
    if (ec) return makeError(file.string(), "cannot read the file size: " + ec.message());
    ExternalDataLocation resolved;
    resolved.file = file;
    resolved.offset = offset.value_or(0);
    if (resolved.offset > size)
        return makeError(where, "external data offset " + std::to_string(resolved.offset) +
                                    " is past the end of '" + location + "' (" +
                                    std::to_string(size) + " bytes)");
    resolved.length = length.value_or(size - resolved.offset);
    if (resolved.length > size - resolved.offset)
        return makeError(where, "external data offset " + std::to_string(resolved.offset) +
                                    " + length " + std::to_string(resolved.length) +
                                    " is past the end of '" + location + "' (" +
                                    std::to_string(size) + " bytes)");
    return resolved;
}

Status checkExternalDataLocations(const onnx::ModelProto& model, const fs::path& modelDirectory,
                                  const std::string& name) {
    std::optional<Error> first;
    detail::forEachTensor(model, [&](const onnx::TensorProto& tensor) {
        if (first || !usesExternalData(tensor)) return;
        auto resolved = resolveExternalData(tensor, modelDirectory);
        if (!resolved) first = makeError(name, resolved.error().message);
    });
    if (first) return *first;
    return Ok{};
}

Result<MappedExternalData> mapExternalData(const onnx::TensorProto& tensor,
                                           const fs::path& modelDirectory) {
    auto resolved = resolveExternalData(tensor, modelDirectory);
    if (!resolved) return resolved.error();
    const std::string where = "tensor '" + tensor.name() + "'";
    const std::size_t elementSize = elementTypeSize(tensor.data_type());
    auto count = elementCount(tensor);
    if (elementSize != 0 && count && rawDataSize(tensor.data_type(), *count) != resolved->length)
        return makeError(where, "external data in '" + resolved->file.filename().string() +
                                    "' is " + std::to_string(resolved->length) + " bytes, its " +
                                    elementTypeName(tensor.data_type()) + " dims " +
                                    dimsText(tensor) + " need " +
                                    std::to_string(rawDataSize(tensor.data_type(), *count)));
    auto mapping = MappedFile::open(resolved->file);
    if (!mapping) return mapping.error();
    // The file may have changed between the size check above and the mapping.
    if ((*mapping)->size() < resolved->offset + resolved->length)
        return makeError(where, "external data file '" + resolved->file.string() +
                                    "' is shorter than offset + length");
    return MappedExternalData{std::move(*mapping), resolved->offset, resolved->length};
}

Result<std::string> readExternalData(const onnx::TensorProto& tensor,
                                     const fs::path& modelDirectory) {
    auto mapped = mapExternalData(tensor, modelDirectory);
    if (!mapped) return mapped.error();
    if (mapped->length == 0) return std::string();
    std::string bytes(mapped->data(), mapped->length);
    if (auto st = mapped->mapping->checkUnchanged(); !st) return st.error();
    return bytes;
}

Status internalizeExternalData(onnx::ModelProto& model, const fs::path& modelDirectory) {
    std::vector<const onnx::TensorProto*> external;
    detail::forEachTensor(model, [&](const onnx::TensorProto& tensor) {
        if (usesExternalData(tensor)) external.push_back(&tensor);
    });
    for (const auto* found : external) {
        // The walk is read-only; the tensors belong to `model`, which we may modify.
        auto* tensor = const_cast<onnx::TensorProto*>(found);
        auto bytes = readExternalData(*tensor, modelDirectory);
        if (!bytes) return bytes.error();
        tensor->set_raw_data(std::move(bytes.value()));
        tensor->clear_external_data();
        tensor->clear_data_location();
    }
    return Ok{};
}

}  // namespace onnxlens
