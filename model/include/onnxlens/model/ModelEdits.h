#pragma once
// Edits of a loaded model: one value type per edit (ModelEdit) and one function applying it. The
// CLI's `edit` command, the edit scripts (workflows/EditScript.h) and the window's Edit menu and
// Undo stack share them. Every edit is transactional: it is checked against the model (names,
// schema, shapes) before anything changes, and on any error the model is left exactly as it was;
// the error names the edit ("rename 'x' -> 'y': the name 'y' is already used by ...").
//
// The edits:
//   set-dim             an input's or output's dim fixed (value "N", N > 0) or symbolic ("batch")
//   make-batch-dynamic  dim 0 of every input and output that share the exported batch made
//                       symbolic, and the Reshape/Expand/ConstantOfShape/Tile shape constants that
//                       bake that batch repaired (see makeBatchDynamic below)
//   rename              a tensor (input, output, initializer, node output; every reference, in
//                       subgraphs too) or a node; a name already used is an error
//   add-output          any tensor as a graph output, typed by shape inference
//   remove-output       a graph output dropped (the nodes feeding only it stay: prune removes them)
//   prune               nodes whose outputs nothing reads and unused initializers removed
//   extract             the subgraph between the given inputs and outputs
//   (onnx.utils.extract_model) delete-node         a node removed: bypassed when one data input has
//   its output's type and
//                       shape (readers of the output read that input), else cut and pruned
//   set-attr            a node's attribute set, checked against the operator's schema
//   set-initializer     an initializer's data replaced from a .npy or .pb file (same type, shape)
//   metadata            a metadata_props entry, or the model's doc_string / producer fields
//   opset               the default domain's opset converted (onnx's version converter)
// Removing dead nodes after an edit is the caller's choice (prune), except for extract and a
// delete-node that cuts, whose meaning includes it.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onnxlens/model/Result.h"

namespace onnxlens {

enum class ModelEditKind {
    SetDim,
    MakeBatchDynamic,
    Rename,
    AddOutput,
    RemoveOutput,
    Prune,
    Extract,
    DeleteNode,
    SetAttribute,
    SetInitializer,
    SetMetadata,
    ConvertOpset,
};

// What a rename names: a tensor (value) or a node. Auto: the tensor when a value of that name
// exists, else the node (exports often name a node and a tensor alike; Auto then renames the
// tensor).
enum class RenameTarget { Auto, Tensor, Node };

// One edit. Which fields count depends on `kind` (the factories below say); the others stay empty.
struct ModelEdit {
    ModelEditKind kind = ModelEditKind::Prune;
    // set-dim: the input or output; make-batch-dynamic: unused; rename: the old name;
    // add-output / remove-output: the tensor; delete-node / set-attr: the node (its name, or for an
    // unnamed node profileNameOf(node): "Relu(relu_out)"); set-initializer: the initializer;
    // metadata: the key (see setMetadata).
    std::string name;
    // set-dim: "N" (a positive number) or a symbol; make-batch-dynamic: the symbol; rename: the new
    // name; set-attr: the value as text (see setAttribute); metadata: the value.
    std::string value;
    std::int64_t axis = 0;  // set-dim: the axis (negative counts from the end)
    std::string attribute;  // set-attr: the attribute's name
    RenameTarget renameTarget = RenameTarget::Auto;
    std::vector<std::string> inputs, outputs;  // extract
    // set-initializer: the file (.npy or .pb, by extension), read when the edit is applied, or the
    // tensor itself (the window's, already read); `tensor` wins when set.
    std::filesystem::path file;
    std::shared_ptr<const onnx::TensorProto> tensor;
    int opset = 0;  // opset: the target version of the default domain

    // One line for people: "set dim 0 of input 'x' to batch", "rename tensor 'a' to 'b'". What
    // `edit --dry-run` prints and the window's Undo/Redo show.
    std::string describe() const;
    // The edit's kind as the scripts and the CLI spell it: "set-dim", "rename", ...
    std::string kindName() const;

    bool operator==(const ModelEdit&) const;
};

// The spellings of kindName(), and back (false for an unknown name).
std::string modelEditKindName(ModelEditKind kind);
bool parseModelEditKind(const std::string& name, ModelEditKind& kind);

// Factories (the fields above filled for one kind).
ModelEdit setDimEdit(const std::string& tensor, std::int64_t axis, const std::string& value);
ModelEdit makeBatchDynamicEdit(const std::string& symbol = "batch");
ModelEdit renameEdit(const std::string& from, const std::string& to,
                     RenameTarget target = RenameTarget::Auto);
ModelEdit addOutputEdit(const std::string& tensor);
ModelEdit removeOutputEdit(const std::string& output);
ModelEdit pruneEdit();
ModelEdit extractEdit(std::vector<std::string> inputs, std::vector<std::string> outputs);
ModelEdit deleteNodeEdit(const std::string& node);
// `value` as text, read by the attribute's schema type: INT "3", FLOAT "0.5", STRING "abc",
// INTS / FLOATS "[1,2,3]" or "1,2,3", STRINGS "[a,b]"; TENSOR as a .npy/.pb file path.
ModelEdit setAttributeEdit(const std::string& node, const std::string& attribute,
                           const std::string& value);
ModelEdit setInitializerEdit(const std::string& initializer, const std::filesystem::path& file);
ModelEdit setInitializerEdit(const std::string& initializer,
                             std::shared_ptr<const onnx::TensorProto> tensor);
// Keys "doc_string", "producer_name", "producer_version", "domain" and "graph_doc_string" set those
// fields of the model; any other key a metadata_props entry (an empty value removes the entry).
ModelEdit setMetadataEdit(const std::string& key, const std::string& value);
ModelEdit convertOpsetEdit(int opset);

// What an edit did, for reports (`edit --json`, the window's status bar).
struct ModelEditReport {
    std::string description;           // ModelEdit::describe()
    std::vector<std::string> changes;  // one line per change made ("Reshape '/Reshape' shape ...")
    int nodesRemoved = 0, nodesAdded = 0, initializersRemoved = 0;
};

struct ModelEditOptions {
    // Where set-initializer's relative file and the model's external data are resolved.
    std::filesystem::path baseDirectory;
    // A further check of a node whose attribute set-attr changed, after the schema's: the
    // engine's kernel constructor (workflows' checkNodeWithEngineKernel), which knows the limits
    // schemas give only in prose (num_heads 0, a block_size that is not a power of two). An error
    // refuses the edit. Empty: the schema's checks only.
    std::function<Status(const onnx::ModelProto& model, const onnx::NodeProto& node)> checkNode;
};

// Applies one edit. On error the model is unchanged and the message names the edit.
Status applyModelEdit(onnx::ModelProto& model, const ModelEdit& edit,
                      const ModelEditOptions& options = {}, ModelEditReport* report = nullptr);

// Checks an edit against the model without changing it (what --dry-run and the window's menus
// use): the error applyModelEdit would give, or Ok with the report of what it would change.
// Costs a structural copy of the model (weights not copied, see StructuralCopy.h).
Status previewModelEdit(const onnx::ModelProto& model, const ModelEdit& edit,
                        const ModelEditOptions& options = {}, ModelEditReport* report = nullptr);

// The constants make-batch-dynamic repairs, for reports and the dynamic-axes check: shape inputs
// of Reshape, Expand, ConstantOfShape and Tile whose element 0 is the exported batch `batch`, on a
// path from a batched input. One entry per node: "Reshape '/Reshape' shape [1, -1]".
struct BakedBatchConstant {
    std::string node;  // profileNameOf(node)
    std::string opType;
    std::string constant;  // the shape input's name
    std::vector<std::int64_t> values;
    std::string describe() const;
};
// The exported batch: dim 0 shared by every input whose dim 0 is fixed (0 when the inputs
// disagree or none has a fixed dim 0).
std::int64_t exportedBatch(const onnx::ModelProto& model);
std::vector<BakedBatchConstant> findBakedBatchConstants(const onnx::ModelProto& model,
                                                        std::int64_t batch);

}  // namespace onnxlens
