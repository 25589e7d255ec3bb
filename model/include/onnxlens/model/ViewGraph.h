#pragma once
// The graph as the inspector draws it: operators as nodes, initializers and Constant nodes folded
// into their consumers as rows, graph inputs/outputs as their own nodes, edges carrying the
// tensor type from onnx shape inference, and a hierarchy of groups: name scopes taken from node
// names (`/encoder/layer.0/attention/MatMul`), If/Loop/Scan bodies and model-local functions.
//
// Each group has a "level": its direct children (nodes and groups) plus ports for the tensors
// entering and leaving it, with the edges between them. A level is laid out on its own, so
// expanding a group needs only that group's level laid out (and its ancestors resized).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "onnxlens/model/Result.h"
#include "onnxlens/model/ShapeInference.h"

namespace onnxlens {

// elementTypeName() is in TensorTypes.h.

// Families of operators, for colouring nodes the way people know from Netron.
enum class NodeCategory {
    Other,
    Layer,          // Conv, Gemm, MatMul, LSTM...
    Activation,     // Relu, Sigmoid, Softmax...
    Pool,           // MaxPool, AveragePool...
    Normalization,  // BatchNormalization, LayerNormalization...
    Dropout,
    Shape,       // Reshape, Transpose, Flatten...
    Tensor,      // Concat, Gather, Slice...
    Arithmetic,  // Add, Mul, Sqrt...
    Logic,       // Equal, Where, Not...
    Control,     // If, Loop, Scan
    Quantization,
    ClassicalMl,  // every ai.onnx.ml operator (scalers, trees, SVMs, encoders, ZipMap)
    Input,
    Output,
};
NodeCategory categoryOfOperator(std::string_view opType, std::string_view domain);
const char* categoryName(NodeCategory category);

struct ViewDim {
    std::int64_t value = -1;  // >= 0 when known
    std::string symbol;       // dim_param (dynamic axis)
    bool isSymbolic() const { return !symbol.empty(); }
    bool isKnown() const { return value >= 0; }
    std::string text() const;  // "64", "batch", "?"
};

struct ViewTensorType {
    std::int32_t elementType = 0;  // onnx::TensorProto::DataType, 0 unknown
    bool hasShape = false;
    std::vector<ViewDim> dims;
    bool hasSymbolicDim() const;
    std::string shapeText() const;  // "1x3x224x224", "batchx128", "scalar", "?"
    std::string text() const;       // "float32[1x3x224x224]"
};
ViewTensorType tensorTypeOf(const onnx::TypeProto& type);
ViewTensorType tensorTypeOf(const onnx::TensorProto& tensor);

// One row under a node's title: an attribute (`kernel_shape = 3x3`), a folded initializer or
// Constant (`W <64x3x7x7>`), or a stub: a tensor read by many nodes far apart (an attention
// mask) drawn as a labelled row at each distant reader instead of an edge across the graph.
struct ViewRow {
    enum class Kind { Attribute, Initializer, Constant, Stub } kind = Kind::Attribute;
    std::string label;  // attribute name, or the schema's input name ("W", "B")
    std::string text;   // "3x3", "<64x3x7x7>", "= [0, -1]", "← Add_1"
    int tensor = -1;    // folded and stub rows: index into ViewGraph::tensors
};

struct ViewNode {
    enum class Kind { Operator, Input, Output } kind = Kind::Operator;
    std::string name;    // as in the file (may be empty)
    std::string opType;  // inputs/outputs: "Input"/"Output"
    std::string domain;
    NodeCategory category = NodeCategory::Other;
    int group = 0;
    const onnx::NodeProto* proto = nullptr;  // operators; points into ViewGraph::model
    std::vector<int> inputs;                 // tensor per positional input, -1 for an omitted one
    std::vector<int> outputs;
    std::vector<ViewRow> rows;
    std::string title() const;  // op type, or the tensor name for inputs/outputs
};

struct ViewUnitRef {
    enum class Kind { Node, Group, InPort, OutPort } kind = Kind::Node;
    int index = 0;  // node, group, or tensor (ports)
    bool operator==(const ViewUnitRef&) const = default;
    bool operator<(const ViewUnitRef& o) const {
        return kind != o.kind ? kind < o.kind : index < o.index;
    }
    std::string id() const;  // stable id for layout requests: "n12", "g3", "i40", "o41"
};

struct ViewGroup {
    // Range: a run of consecutive operators of a level too large to lay out at once (a flat
    // model of thousands of nodes), so that dot never sees more than a few hundred boxes.
    // Repeat: a run of sibling groups built alike (layers.0 ... layers.95), drawn collapsed as
    // one "x96" box (ViewGraphOptions::foldRepeats).
    enum class Kind { Root, Scope, Subgraph, Function, Range, Repeat } kind = Kind::Root;
    std::string path;   // unique: "/encoder/layer.0", "/If_0.then_branch"
    std::string title;  // "layer.0", "then_branch", the function's name
    int parent = -1;
    int depth = 0;
    std::vector<ViewUnitRef> children;       // nodes and groups, in model order
    int nodeCount = 0;                       // operators inside, at any depth
    int repeats = 0;                         // Repeat: how many alike groups it holds
    const onnx::NodeProto* owner = nullptr;  // the If/Loop/Scan or function-call node
};

struct ViewTensor {
    std::string name;  // as in the file
    ViewTensorType type;
    int producer = -1;  // node index; -1 for initializers and folded constants
    std::vector<int> consumers;
    const onnx::TensorProto* initializer = nullptr;  // initializer or Constant value
    bool folded = false;                             // drawn as a row, not an edge
    // Read by nodes in many groups: drawn as a stub row at readers outside the producer's group.
    bool stub = false;
};

struct ViewEdge {
    int tensor = -1;
    int from = -1;  // node indices
    int to = -1;
};

struct LevelEdge {
    int tail = -1;  // unit indices in LevelGraph::units
    int head = -1;
    int tensor = -1;
    bool labelled = false;  // the segment of a tensor's route that carries its shape label
};

struct LevelGraph {
    std::vector<ViewUnitRef> units;  // children first (model order), then in- and out-ports
    std::vector<LevelEdge> edges;
};

struct ViewGraph {
    std::shared_ptr<const onnx::ModelProto> model;     // original (initializer data)
    std::shared_ptr<const onnx::ModelProto> inferred;  // shape-inferred copy (node protos)
    std::vector<ViewNode> nodes;
    std::vector<ViewGroup> groups;  // [0] is the root; not ordered parents-first (see Range)
    std::vector<ViewTensor> tensors;
    std::vector<ViewEdge> edges;
    std::vector<LevelGraph> levels;              // one per group
    std::map<std::string, std::int64_t> opsets;  // domain ("" for ai.onnx) -> version
    std::string shapeInferenceError;             // empty when inference succeeded
    int operatorCount = 0;

    int opsetOf(const std::string& domain) const;
    bool isAncestor(int group, int descendant) const;  // group == descendant counts
    int lowestCommonAncestor(int a, int b) const;
    std::vector<int> groupChain(int group) const;  // the group and its ancestors up to the root
    // Index of the node with this name, or of the node producing/consuming this tensor; -1.
    int findNodeByName(const std::string& name) const;
};

struct ViewGraphOptions {
    bool inferShapes = true;
    // The model's shape inference when it already ran for this model state (LoadedModel::shapes):
    // used instead of inferring again.
    std::shared_ptr<const InferredShapes> shapes;
    int maxFunctionDepth = 8;
    int maxSubgraphDepth = 64;
    int maxLevelUnits = 300;  // a level with more children is split into Range groups
    int rangeSize = 150;      // operators per Range group
    // Constant nodes and Identity/Cast/Unsqueeze/Squeeze/Reshape nodes whose inputs are all
    // constant (PyTorch's weight-sharing Identity nodes, shape constants) become rows of the
    // nodes reading them; false draws them as nodes.
    bool foldConstants = true;
    // A tensor read in at least this many groups besides its producer's is drawn as stubs at
    // those readers (0: never).
    int stubReaderGroups = 3;
    // Files without name scopes: a run of at least three repeats of this many operators or
    // more becomes groups block.0, block.1, ... (see groupRepeatedBlocks in ViewGraph.cpp).
    int minBlockOperators = 8;
    // Runs of at least three sibling groups built alike become one Repeat group ("x96").
    bool foldRepeats = false;
    // Graph inputs and outputs of a family at least this large (names alike but for their
    // numbers: past_key_values.3.key, present.3.value) are drawn inside the group of the layer
    // that reads or writes them, not in one row across the whole graph (a decoder's key-value
    // cache); 0: never.
    int homeIoFamilySize = 4;
};

Result<ViewGraph> buildViewGraph(std::shared_ptr<const onnx::ModelProto> model,
                                 const ViewGraphOptions& options = {});

// Short text of an attribute value for node rows and panels ("3x3", "0.5", "\"NOTSET\"",
// "<tensor float32[64]>", "<graph>").
std::string attributeValueText(const onnx::AttributeProto& attribute, std::size_t maxLength = 40);

}  // namespace onnxlens
