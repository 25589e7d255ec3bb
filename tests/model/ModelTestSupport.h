#pragma once
// Helpers for the model-library tests: scratch folders and small hand-built models.
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace onnxlens::testing {

// A fresh folder under the temp dir, removed at the end of the test.
class ScratchDir {
  public:
    ScratchDir() {
        static int counter = 0;
        path_ =
            std::filesystem::temp_directory_path() /
            ("onnxlens-model-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() { std::filesystem::remove_all(path_); }
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  private:
    std::filesystem::path path_;
};

inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void setTensorType(onnx::ValueInfoProto* info, int elemType,
                          const std::vector<std::string>& dims) {
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elemType);
    auto* shape = tensor->mutable_shape();
    for (const auto& d : dims) {
        auto* dim = shape->add_dim();
        if (d == "?") continue;
        if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])) != 0))
            dim->set_dim_value(std::stoll(d));
        else
            dim->set_dim_param(d);
    }
}

inline onnx::NodeProto* addNode(onnx::GraphProto& graph, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs,
                                const std::string& name = "") {
    auto* node = graph.add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (const auto& i : inputs) node->add_input(i);
    for (const auto& o : outputs) node->add_output(o);
    return node;
}

inline onnx::TensorProto floatTensor(const std::string& name, const std::vector<std::int64_t>& dims,
                                     const std::vector<float>& values) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t.add_dims(d);
    t.set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return t;
}

// y = Relu(Add(x, bias)) with x: float [N, 4], bias an initializer of 4 floats; opset 13.
inline onnx::ModelProto addReluModel() {
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.set_producer_name("onnxlens-tests");
    model.set_producer_version("1");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    auto& graph = *model.mutable_graph();
    graph.set_name("add_relu");
    setTensorType(graph.add_input(), onnx::TensorProto::FLOAT, {"N", "4"});
    *graph.add_initializer() = floatTensor("bias", {4}, {1, 2, 3, 4});
    addNode(graph, "Add", {"x", "bias"}, {"sum"}, "add");
    addNode(graph, "Relu", {"sum"}, {"y"}, "relu");
    graph.mutable_input(0)->set_name("x");
    setTensorType(graph.add_output(), onnx::TensorProto::FLOAT, {"N", "4"});
    graph.mutable_output(0)->set_name("y");
    return model;
}

inline std::string serialize(const onnx::ModelProto& model) {
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

}  // namespace onnxlens::testing
