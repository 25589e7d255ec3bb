#pragma once
// Who produces and who reads each value of one graph: the index every optimizer pass, the
// layout pass and the compiler's ordering share. Built once per graph state; any rewrite of the
// graph makes it stale (the optimizer's driver rebuilds it after a pass that changed something).
#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace onnxlens {

class GraphIndex {
  public:
    explicit GraphIndex(const onnx::GraphProto& graph);

    const onnx::GraphProto& graph() const { return *graph_; }
    const onnx::NodeProto& node(int i) const { return graph_->node(i); }

    // The node (index into graph().node()) producing `value`, or -1 (graph input, initializer,
    // outer-scope name or unknown).
    int producer(const std::string& value) const;
    // The nodes of this graph reading `value`, once per read (a node reading it twice is listed
    // twice), in node order.
    const std::vector<int>& consumers(const std::string& value) const;
    // True when a node inside a subgraph of this graph reads `value` (as an outer-scope name) or a
    // subgraph's output is named `value`.
    bool readInSubgraph(const std::string& value) const { return subgraphReads_.count(value) > 0; }
    bool isGraphOutput(const std::string& value) const { return graphOutputs_.count(value) > 0; }
    bool isGraphInput(const std::string& value) const { return graphInputs_.count(value) > 0; }
    // Every read of `value`: node inputs, subgraph reads and graph outputs.
    int readCount(const std::string& value) const;

    // The node reading `value` when that is its only read anywhere, else -1.
    int soleConsumer(const std::string& value) const;
    // The node producing `value` when one node of this graph is its only reader, else -1: a
    // value a rewrite may make disappear.
    int exclusiveProducer(const std::string& value) const;
    // How many nodes of this graph read `value` when nothing else does (no graph output, no
    // subgraph read), else -1.
    int exclusiveConsumerCount(const std::string& value) const;

    // An initializer that is not also a graph input (those can be overridden at run time), or
    // null.
    const onnx::TensorProto* constantInitializer(const std::string& name) const;
    // A constant's tensor: a constant initializer or the `value` of the default-domain Constant
    // node producing it; null otherwise.
    const onnx::TensorProto* constant(const std::string& name) const;

  private:
    void noteSubgraphReads(const onnx::GraphProto& subgraph);

    const onnx::GraphProto* graph_;
    std::unordered_map<std::string, int> producer_;
    std::unordered_map<std::string, std::vector<int>> consumers_;
    std::unordered_map<std::string, int> subgraphReads_;
    std::unordered_map<std::string, int> graphOutputs_;
    std::unordered_set<std::string> graphInputs_;
    std::unordered_map<std::string, const onnx::TensorProto*> constantInitializers_;
};

// True when a node holds a graph attribute (If/Loop/Scan bodies).
bool hasSubgraph(const onnx::NodeProto& node);

}  // namespace onnxlens
