#include "SharedWeights.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "onnxlens/model/ExternalData.h"

namespace onnxlens::engine {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFileName = "weights.bin";
constexpr std::uint64_t kAlignment = 64;  // the engine uses mapped bytes in place when aligned

bool tensorExternal(const onnx::TensorProto& t) { return usesExternalData(t); }

bool graphHasExternalData(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer())
        if (tensorExternal(t)) return true;
    for (const auto& s : g.sparse_initializer())
        if (tensorExternal(s.values()) || tensorExternal(s.indices())) return true;
    for (const auto& n : g.node())
        for (const auto& a : n.attribute()) {
            if (a.has_t() && tensorExternal(a.t())) return true;
            for (const auto& t : a.tensors())
                if (tensorExternal(t)) return true;
            if (a.has_g() && graphHasExternalData(a.g())) return true;
            for (const auto& sub : a.graphs())
                if (graphHasExternalData(sub)) return true;
        }
    return false;
}

// The model without its main graph's initializers (added one by one by the caller).
onnx::ModelProto withoutInitializers(const onnx::ModelProto& m) {
    onnx::ModelProto c;
    c.set_ir_version(m.ir_version());
    *c.mutable_opset_import() = m.opset_import();
    c.set_producer_name(m.producer_name());
    c.set_producer_version(m.producer_version());
    c.set_domain(m.domain());
    c.set_model_version(m.model_version());
    c.set_doc_string(m.doc_string());
    *c.mutable_metadata_props() = m.metadata_props();
    *c.mutable_training_info() = m.training_info();
    *c.mutable_functions() = m.functions();
    const auto& g = m.graph();
    auto* cg = c.mutable_graph();
    *cg->mutable_node() = g.node();
    cg->set_name(g.name());
    *cg->mutable_sparse_initializer() = g.sparse_initializer();
    cg->set_doc_string(g.doc_string());
    *cg->mutable_input() = g.input();
    *cg->mutable_output() = g.output();
    *cg->mutable_value_info() = g.value_info();
    *cg->mutable_quantization_annotation() = g.quantization_annotation();
    return c;
}

void pointAt(onnx::TensorProto& t, std::uint64_t offset, std::uint64_t length) {
    std::string().swap(*t.mutable_raw_data());  // frees the bytes (clear would keep them)
    t.clear_raw_data();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", kFileName},
                                     {"offset", std::to_string(offset)},
                                     {"length", std::to_string(length)}}) {
        auto* entry = t.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
    }
}

bool candidate(const onnx::TensorProto& t) {
    return !tensorExternal(t) && t.data_type() != onnx::TensorProto::STRING &&
           t.raw_data().size() >= SharedWeights::kMinBytes;
}

}  // namespace

std::unique_ptr<SharedWeights> SharedWeights::create() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec) return nullptr;
    static int counter = 0;
    for (int attempt = 0; attempt < 16; ++attempt) {
        const fs::path dir = base / ("onnxlens-diff-weights-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(counter++));
        if (!fs::create_directory(dir, ec) || ec) continue;
        std::unique_ptr<SharedWeights> w(new SharedWeights);
        w->directory_ = dir;
        w->file_ = dir / kFileName;
        { const std::ofstream created(w->file_, std::ios::binary | std::ios::trunc); }
        if (!fs::is_regular_file(w->file_, ec)) return nullptr;  // the destructor removes dir
        return w;
    }
    return nullptr;
}

SharedWeights::~SharedWeights() {
    std::error_code ec;
    if (!directory_.empty()) fs::remove_all(directory_, ec);
}

bool SharedWeights::eligible(const onnx::ModelProto& model) {
    return !graphHasExternalData(model.graph());
}

bool SharedWeights::sameBytes(const Entry& entry, const std::string& bytes) const {
    if (bytes.size() != entry.length) return false;
    std::ifstream in(file_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(entry.offset));
    std::vector<char> chunk(1 << 20);
    for (std::uint64_t done = 0; done < entry.length;) {
        const std::uint64_t n = std::min<std::uint64_t>(chunk.size(), entry.length - done);
        if (!in.read(chunk.data(), static_cast<std::streamsize>(n))) return false;
        if (std::memcmp(chunk.data(), bytes.data() + done, n) != 0) return false;
        done += n;
    }
    return true;
}

std::shared_ptr<onnx::ModelProto> SharedWeights::addFirst(
    const std::shared_ptr<onnx::ModelProto>& model, bool exclusive) {
    return add(model, exclusive, true);
}

std::shared_ptr<onnx::ModelProto> SharedWeights::addSecond(
    const std::shared_ptr<onnx::ModelProto>& model, bool exclusive) {
    return add(model, exclusive, false);
}

std::shared_ptr<onnx::ModelProto> SharedWeights::add(const std::shared_ptr<onnx::ModelProto>& model,
                                                     bool exclusive, bool first) {
    std::shared_ptr<onnx::ModelProto> out =
        exclusive ? model : std::make_shared<onnx::ModelProto>(withoutInitializers(*model));
    std::ofstream file;
    // A write that fails (a full disk) stops the writing: the tensors written before it (flushed
    // each time) stay external, the rest stay inline.
    bool writable = false;
    if (first) {
        file.open(file_, std::ios::binary | std::ios::app);
        writable = static_cast<bool>(file);
    }
    const auto& graph = model->graph();
    for (int i = 0; i < graph.initializer_size(); ++i) {
        const auto& t = graph.initializer(i);
        const Entry* entry = nullptr;
        if (candidate(t)) {
            if (first && writable && !entries_.count(t.name())) {
                const std::uint64_t pad = (kAlignment - size_ % kAlignment) % kAlignment;
                static const char zeros[kAlignment] = {};
                file.write(zeros, static_cast<std::streamsize>(pad));
                file.write(t.raw_data().data(), static_cast<std::streamsize>(t.raw_data().size()));
                file.flush();
                if (file) {
                    Entry e{t.data_type(),
                            {t.dims().begin(), t.dims().end()},
                            size_ + pad,
                            t.raw_data().size()};
                    size_ += pad + e.length;
                    entry = &entries_.emplace(t.name(), std::move(e)).first->second;
                } else {
                    writable = false;
                }
            } else if (!first) {
                auto it = entries_.find(t.name());
                if (it != entries_.end() && it->second.dataType == t.data_type() &&
                    std::equal(t.dims().begin(), t.dims().end(), it->second.dims.begin(),
                               it->second.dims.end()) &&
                    sameBytes(it->second, t.raw_data())) {
                    entry = &it->second;
                    shared_ += entry->length;
                }
            }
        }
        if (exclusive) {
            if (entry)
                pointAt(*out->mutable_graph()->mutable_initializer(i), entry->offset,
                        entry->length);
        } else if (entry) {
            auto* c = out->mutable_graph()->add_initializer();
            c->set_name(t.name());
            c->set_data_type(t.data_type());
            *c->mutable_dims() = t.dims();
            pointAt(*c, entry->offset, entry->length);
        } else {
            *out->mutable_graph()->add_initializer() = t;
        }
    }
    return out;
}

}  // namespace onnxlens::engine
