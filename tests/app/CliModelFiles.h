#pragma once
// Small model files for the CLI tests of `info` and `check`, written into a scratch folder.
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace onnxlens::testing {

class CliScratchDir {
  public:
    CliScratchDir() {
        static int counter = 0;
        path_ =
            std::filesystem::temp_directory_path() /
            ("onnxlens-cli-model-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::create_directories(path_);
    }
    ~CliScratchDir() { std::filesystem::remove_all(path_); }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  private:
    std::filesystem::path path_;
};

inline void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// Y = Relu(X): X float32 [batch, ?, 3] (a symbol, an unknown dim, a number), Y unranked
// float32; plus a bfloat16 input `scale` of shape [1] that is also unused.
inline onnx::ModelProto reluModel() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("cli-tests");
    model.set_producer_version("0.1");
    auto* opset = model.add_opset_import();
    opset->set_version(15);
    auto* graph = model.mutable_graph();
    graph->set_name("relu");
    auto* x = graph->add_input();
    x->set_name("X");
    auto* tensor = x->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_param("batch");
    tensor->mutable_shape()->add_dim();
    tensor->mutable_shape()->add_dim()->set_dim_value(3);
    auto* scale = graph->add_input();
    scale->set_name("scale");
    scale->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BFLOAT16);
    scale->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
    auto* node = graph->add_node();
    node->set_op_type("Relu");
    node->set_name("relu_node");
    node->add_input("X");
    node->add_output("Y");
    auto* y = graph->add_output();
    y->set_name("Y");
    y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    return model;
}

inline std::filesystem::path writeModel(const CliScratchDir& dir, const std::string& name,
                                        const onnx::ModelProto& model) {
    auto path = dir / name;
    std::string bytes;
    model.SerializeToString(&bytes);
    writeBytes(path, bytes);
    return path;
}

inline std::filesystem::path sampleModel(const std::string& name) {
    return std::filesystem::path(ONNXLENS_SOURCE_DIR) / "resources" / "samples" / name /
           "model.onnx";
}

}  // namespace onnxlens::testing
