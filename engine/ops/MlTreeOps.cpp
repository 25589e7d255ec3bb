// ai.onnx.ml tree ensembles: TreeEnsembleClassifier and TreeEnsembleRegressor (opsets 1-3,
// thresholds and weights as floats or, in opset 3, as float/double tensors).
//
// The trees are flattened at compile time into one array of 16-byte nodes per threshold type
// (float for float/int features, double for double features): a branch holds its threshold,
// feature and both child indices; a leaf (feature -1) holds the range of its weights. Float
// thresholds derived from double ones are rounded toward the side that keeps every float
// comparison identical to the double comparison. Rows run in parallel when there are enough
// of them; a small batch (one row) splits the trees instead.
#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "MlCommon.h"
#include "OpFamilies.h"

namespace onnxlens::engine::ops {
namespace {

enum class NodeMode : std::uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Leaf };

NodeMode parseMode(const std::string& s, const std::string& op) {
    if (s == "BRANCH_LEQ") return NodeMode::Leq;
    if (s == "BRANCH_LT") return NodeMode::Lt;
    if (s == "BRANCH_GTE") return NodeMode::Gte;
    if (s == "BRANCH_GT") return NodeMode::Gt;
    if (s == "BRANCH_EQ") return NodeMode::Eq;
    if (s == "BRANCH_NEQ") return NodeMode::Neq;
    if (s == "LEAF") return NodeMode::Leaf;
    throw EngineError(op + ": unknown node mode '" + s + "'");
}

template <class T>
struct FlatNode {
    T threshold;
    std::int32_t feature;  // -1: a leaf
    std::int32_t next[2];  // branch: true child, false child; leaf: first weight, weight count
};

// The float threshold that makes `x op t` on floats agree with the double comparison.
float floatThreshold(double t, NodeMode mode) {
    if (std::isnan(t) || std::isinf(t)) return static_cast<float>(t);
    float f = static_cast<float>(t);
    const bool wantBelow = mode == NodeMode::Leq || mode == NodeMode::Gt;
    const bool wantAbove = mode == NodeMode::Lt || mode == NodeMode::Gte;
    if (wantBelow && static_cast<double>(f) > t)
        f = std::nextafter(f, -std::numeric_limits<float>::infinity());
    if (wantAbove && static_cast<double>(f) < t)
        f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return f;
}

template <class T>
bool branchTaken(NodeMode mode, T x, T t) {
    switch (mode) {
        case NodeMode::Leq:
            return x <= t;
        case NodeMode::Lt:
            return x < t;
        case NodeMode::Gte:
            return x >= t;
        case NodeMode::Gt:
            return x > t;
        case NodeMode::Eq:
            return x == t;
        case NodeMode::Neq:
            return x != t;
        case NodeMode::Leaf:
            break;
    }
    return false;
}

enum class Aggregate { Sum, Average, Min, Max };

// Per row and target: the aggregated score and whether any leaf contributed.
struct ScoreCell {
    double value = 0;
    bool has = false;
};

class TreeEnsemble {
  public:
    // `prefix`: "target" (regressor) or "class" (classifier).
    TreeEnsemble(const NodeInfo& node, const std::string& prefix) : op_(node.opType()) {
        const auto treeIds = node.getInts("nodes_treeids");
        const auto nodeIds = node.getInts("nodes_nodeids");
        const auto featureIds = node.getInts("nodes_featureids");
        const auto values = ml::floatsOrTensor(node, "nodes_values");
        const auto modes = node.getStrings("nodes_modes");
        const auto trueIds = node.getInts("nodes_truenodeids");
        const auto falseIds = node.getInts("nodes_falsenodeids");
        const auto missing = node.getInts("nodes_missing_value_tracks_true");
        const std::size_t n = nodeIds.size();
        auto requireSize = [&](std::size_t size, const char* name, bool optional) {
            if (size != n && !(optional && size == 0))
                throw EngineError(op_ + ": " + name + " has " + std::to_string(size) +
                                  " entries, nodes_nodeids " + std::to_string(n));
        };
        if (n == 0) throw EngineError(op_ + ": the ensemble has no nodes");
        requireSize(treeIds.size(), "nodes_treeids", false);
        requireSize(featureIds.size(), "nodes_featureids", false);
        requireSize(modes.size(), "nodes_modes", false);
        requireSize(trueIds.size(), "nodes_truenodeids", false);
        requireSize(falseIds.size(), "nodes_falsenodeids", false);
        requireSize(values.size(), "nodes_values", true);
        requireSize(missing.size(), "nodes_missing_value_tracks_true", true);

        auto key = [](std::int64_t tree, std::int64_t id) {
            return (static_cast<std::uint64_t>(tree) << 32) ^
                   static_cast<std::uint64_t>(id & 0xffffffff);
        };
        std::unordered_map<std::uint64_t, std::int32_t> index;
        index.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
            if (!index.emplace(key(treeIds[i], nodeIds[i]), static_cast<std::int32_t>(i)).second)
                throw EngineError(op_ + ": node " + std::to_string(nodeIds[i]) + " of tree " +
                                  std::to_string(treeIds[i]) + " is defined twice");

        // Leaf weights, grouped by node.
        const auto wTrees = node.getInts(prefix + "_treeids");
        const auto wNodes = node.getInts(prefix + "_nodeids");
        const auto wIds = node.getInts(prefix + "_ids");
        const auto wValues = ml::floatsOrTensor(node, prefix + "_weights");
        if (wTrees.size() != wNodes.size() || wIds.size() != wNodes.size() ||
            wValues.size() != wNodes.size())
            throw EngineError(op_ + ": " + prefix +
                              "_treeids, _nodeids, _ids and _weights differ in length");
        std::vector<std::vector<std::pair<std::int32_t, double>>> weightsOf(n);
        for (std::size_t i = 0; i < wNodes.size(); ++i) {
            auto it = index.find(key(wTrees[i], wNodes[i]));
            if (it == index.end())
                throw EngineError(op_ + ": a weight names node " + std::to_string(wNodes[i]) +
                                  " of tree " + std::to_string(wTrees[i]) +
                                  ", which does not exist");
            if (wIds[i] < 0 || wIds[i] > std::numeric_limits<std::int32_t>::max())
                throw EngineError(op_ + ": negative " + prefix + " id");
            weightsOf[static_cast<std::size_t>(it->second)].emplace_back(
                static_cast<std::int32_t>(wIds[i]), wValues[i]);
            maxTarget_ = std::max<std::int64_t>(maxTarget_, wIds[i]);
        }

        nodesF_.resize(n);
        nodesD_.resize(n);
        modes_.resize(n);
        missingTrue_.assign(n, 0);
        std::vector<bool> isChild(n, false);
        for (std::size_t i = 0; i < n; ++i) {
            const NodeMode mode = parseMode(modes[i], op_);
            modes_[i] = mode;
            if (!missing.empty()) missingTrue_[i] = missing[i] != 0;
            if (missingTrue_[i]) hasMissingTracks_ = true;
            if (mode != NodeMode::Leq && mode != NodeMode::Leaf) allLeq_ = false;
            auto& f = nodesF_[i];
            auto& d = nodesD_[i];
            if (mode == NodeMode::Leaf) {
                f.feature = d.feature = -1;
                f.threshold = 0;
                d.threshold = 0;
                f.next[0] = d.next[0] = static_cast<std::int32_t>(leafTargets_.size());
                f.next[1] = d.next[1] = static_cast<std::int32_t>(weightsOf[i].size());
                for (auto& [target, weight] : weightsOf[i]) {
                    leafTargets_.push_back(target);
                    leafWeights_.push_back(weight);
                }
                continue;
            }
            if (featureIds[i] < 0 || featureIds[i] > std::numeric_limits<std::int32_t>::max())
                throw EngineError(op_ + ": node " + std::to_string(nodeIds[i]) +
                                  " has a negative feature id");
            maxFeature_ = std::max<std::int64_t>(maxFeature_, featureIds[i]);
            f.feature = d.feature = static_cast<std::int32_t>(featureIds[i]);
            const double threshold = values.empty() ? 0.0 : values[i];
            d.threshold = threshold;
            f.threshold = floatThreshold(threshold, mode);
            for (int side = 0; side < 2; ++side) {
                const auto child = side == 0 ? trueIds[i] : falseIds[i];
                auto it = index.find(key(treeIds[i], child));
                if (it == index.end())
                    throw EngineError(op_ + ": node " + std::to_string(nodeIds[i]) + " of tree " +
                                      std::to_string(treeIds[i]) + " points at missing node " +
                                      std::to_string(child));
                f.next[side] = d.next[side] = it->second;
                isChild[static_cast<std::size_t>(it->second)] = true;
            }
        }
        // Roots: per tree id, the first node no other node points at.
        std::unordered_map<std::int64_t, std::int32_t> rootOf;
        std::vector<std::int64_t> treeOrder;
        for (std::size_t i = 0; i < n; ++i) {
            if (!rootOf.count(treeIds[i])) treeOrder.push_back(treeIds[i]);
            auto [it, inserted] = rootOf.emplace(treeIds[i], -1);
            if (!isChild[i] && it->second < 0) it->second = static_cast<std::int32_t>(i);
        }
        for (auto tree : treeOrder) {
            const auto root = rootOf[tree];
            if (root < 0)
                throw EngineError(op_ + ": tree " + std::to_string(tree) +
                                  " has no root (a cycle)");
            roots_.push_back(root);
        }
        checkAcyclic();
    }

    std::int64_t treeCount() const { return static_cast<std::int64_t>(roots_.size()); }
    std::int64_t maxTarget() const { return maxTarget_; }
    bool allWeightsPositive() const {
        for (double w : leafWeights_)
            if (w < 0) return false;
        return true;
    }

    // Aggregates every tree's leaf weights into scores[rows x targets] (has flags set).
    void evaluate(KernelContext& ctx, const Tensor& x, std::int64_t targets, Aggregate aggregate,
                  std::vector<ScoreCell>& scores) const {
        const auto shape = ml::rowShapeOf(x);
        if (maxFeature_ >= shape.features)
            throw EngineError(op_ + ": a node reads feature " + std::to_string(maxFeature_) +
                              ", the input has " + std::to_string(shape.features));
        scores.assign(static_cast<std::size_t>(shape.rows * targets), ScoreCell{});
        if (x.dtype() == DataType::Double)
            evaluateTyped<double>(ctx, x.data<double>(), shape, targets, aggregate, nodesD_,
                                  scores);
        else
            evaluateTyped<float>(ctx, x.data<float>(), shape, targets, aggregate, nodesF_, scores);
    }

  private:
    template <class T>
    std::int32_t leafOf(const std::vector<FlatNode<T>>& nodes, std::int32_t index,
                        const T* row) const {
        if (allLeq_ && !hasMissingTracks_) {
            const FlatNode<T>* base = nodes.data();
            const FlatNode<T>* n = base + index;
            while (n->feature >= 0) n = base + n->next[row[n->feature] <= n->threshold ? 0 : 1];
            return static_cast<std::int32_t>(n - base);
        }
        while (nodes[static_cast<std::size_t>(index)].feature >= 0) {
            const auto& n = nodes[static_cast<std::size_t>(index)];
            const T v = row[n.feature];
            const bool taken =
                branchTaken(modes_[static_cast<std::size_t>(index)], v, n.threshold) ||
                (missingTrue_[static_cast<std::size_t>(index)] && std::isnan(v));
            index = n.next[taken ? 0 : 1];
        }
        return index;
    }

    static void combine(ScoreCell& cell, double w, Aggregate aggregate) {
        if (!cell.has) {
            cell.value = w;
            cell.has = true;
            return;
        }
        switch (aggregate) {
            case Aggregate::Sum:
            case Aggregate::Average:
                cell.value += w;
                break;
            case Aggregate::Min:
                cell.value = std::min(cell.value, w);
                break;
            case Aggregate::Max:
                cell.value = std::max(cell.value, w);
                break;
        }
    }

    template <class T>
    void addLeaf(const FlatNode<T>& leaf, ScoreCell* row, Aggregate aggregate) const {
        const std::int32_t first = leaf.next[0];
        for (std::int32_t k = first; k < first + leaf.next[1]; ++k)
            combine(row[leafTargets_[static_cast<std::size_t>(k)]],
                    leafWeights_[static_cast<std::size_t>(k)], aggregate);
    }

    template <class T>
    void evaluateTyped(KernelContext& ctx, const T* x, ml::RowShape shape, std::int64_t targets,
                       Aggregate aggregate, const std::vector<FlatNode<T>>& nodes,
                       std::vector<ScoreCell>& scores) const {
        if (maxTarget_ >= targets)
            throw EngineError(op_ + ": a weight targets " + std::to_string(maxTarget_) +
                              ", the model has " + std::to_string(targets));
        const auto trees = treeCount();
        const double costPerTree = 40.0;  // a few dozen node visits, each a load and a compare
        const int threads = ctx.pool().threads();
        if (shape.rows >= 2 * threads || threads <= 1) {
            ctx.pool().parallelFor(
                shape.rows, costPerTree * static_cast<double>(trees),
                [&](std::int64_t b, std::int64_t e) {
                    for (std::int64_t r = b; r < e; ++r) {
                        const T* row = x + r * shape.features;
                        ScoreCell* out = scores.data() + r * targets;
                        for (auto root : roots_)
                            addLeaf(nodes[static_cast<std::size_t>(leafOf(nodes, root, row))], out,
                                    aggregate);
                    }
                });
            return;
        }
        // Few rows: split the trees, each chunk into its own cells, merged at the end.
        std::mutex merge;
        ctx.pool().parallelFor(
            trees, costPerTree * static_cast<double>(shape.rows),
            [&](std::int64_t b, std::int64_t e) {
                std::vector<ScoreCell> local(scores.size());
                for (std::int64_t r = 0; r < shape.rows; ++r) {
                    const T* row = x + r * shape.features;
                    ScoreCell* out = local.data() + r * targets;
                    for (std::int64_t t = b; t < e; ++t)
                        addLeaf(nodes[static_cast<std::size_t>(
                                    leafOf(nodes, roots_[static_cast<std::size_t>(t)], row))],
                                out, aggregate);
                }
                std::lock_guard<std::mutex> lock(merge);
                for (std::size_t i = 0; i < local.size(); ++i)
                    if (local[i].has) combine(scores[i], local[i].value, aggregate);
            });
    }

    // A malformed model could make a branch point back up its own tree; traversal would never end.
    void checkAcyclic() const {
        std::vector<std::uint8_t> state(nodesD_.size(), 0);  // 0 new, 1 on the path, 2 done
        std::vector<std::pair<std::int32_t, int>> stack;
        for (auto root : roots_) {
            if (state[static_cast<std::size_t>(root)] == 2) continue;
            stack.emplace_back(root, 0);
            state[static_cast<std::size_t>(root)] = 1;
            while (!stack.empty()) {
                auto& [index, side] = stack.back();
                const auto& n = nodesD_[static_cast<std::size_t>(index)];
                if (n.feature < 0 || side == 2) {
                    state[static_cast<std::size_t>(index)] = 2;
                    stack.pop_back();
                    continue;
                }
                const auto child = n.next[side++];
                if (state[static_cast<std::size_t>(child)] == 1)
                    throw EngineError(op_ + ": a tree has a cycle");
                if (state[static_cast<std::size_t>(child)] == 0) {
                    state[static_cast<std::size_t>(child)] = 1;
                    stack.emplace_back(child, 0);
                }
            }
        }
    }

    std::string op_;
    std::vector<FlatNode<float>> nodesF_;
    std::vector<FlatNode<double>> nodesD_;
    std::vector<NodeMode> modes_;
    std::vector<std::uint8_t> missingTrue_;
    std::vector<std::int32_t> roots_;
    std::vector<std::int32_t> leafTargets_;
    std::vector<double> leafWeights_;
    std::int64_t maxFeature_ = -1;
    std::int64_t maxTarget_ = -1;
    bool allLeq_ = true;
    bool hasMissingTracks_ = false;
};

Aggregate parseAggregate(const NodeInfo& node) {
    const std::string name = node.getString("aggregate_function", "SUM");
    if (name == "SUM") return Aggregate::Sum;
    if (name == "AVERAGE") return Aggregate::Average;
    if (name == "MIN") return Aggregate::Min;
    if (name == "MAX") return Aggregate::Max;
    throw EngineError(node.opType() + ": unknown aggregate_function '" + name + "'");
}

class TreeEnsembleRegressorKernel : public Kernel {
  public:
    explicit TreeEnsembleRegressorKernel(const NodeInfo& node)
        : ensemble_(node, "target"),
          targets_(node.getInt("n_targets", 1)),
          aggregate_(parseAggregate(node)),
          transform_(ml::parsePostTransform(node)),
          base_(ml::floatsOrTensor(node, "base_values")) {
        if (targets_ <= 0) throw EngineError("TreeEnsembleRegressor: n_targets must be positive");
        if (!base_.empty() && base_.size() != static_cast<std::size_t>(targets_))
            throw EngineError("TreeEnsembleRegressor: " + std::to_string(base_.size()) +
                              " base_values for " + std::to_string(targets_) + " targets");
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        Tensor x = ml::featuresAsFloatOrDouble(inputTensor(inputs, 0));
        std::vector<ScoreCell> cells;
        ensemble_.evaluate(ctx, x, targets_, aggregate_, cells);
        const auto rows = static_cast<std::int64_t>(cells.size()) / targets_;
        Tensor y(DataType::Float, {rows, targets_});
        float* out = y.data<float>();
        const double trees = static_cast<double>(std::max<std::int64_t>(1, ensemble_.treeCount()));
        std::vector<double> row(static_cast<std::size_t>(targets_));
        for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t t = 0; t < targets_; ++t) {
                double v = cells[static_cast<std::size_t>(r * targets_ + t)].value;
                if (aggregate_ == Aggregate::Average) v /= trees;
                if (!base_.empty()) v += base_[static_cast<std::size_t>(t)];
                row[static_cast<std::size_t>(t)] = v;
            }
            ml::applyPostTransform(transform_, row.data(), row.size());
            for (std::int64_t t = 0; t < targets_; ++t)
                out[r * targets_ + t] = static_cast<float>(row[static_cast<std::size_t>(t)]);
        }
        outputs[0] = std::move(y);
    }

  private:
    TreeEnsemble ensemble_;
    std::int64_t targets_;
    Aggregate aggregate_;
    ml::PostTransform transform_;
    std::vector<double> base_;
};

class TreeEnsembleClassifierKernel : public Kernel {
  public:
    explicit TreeEnsembleClassifierKernel(const NodeInfo& node)
        : ensemble_(node, "class"),
          labels_(ml::ClassLabels::read(node, "classlabels_int64s")),
          transform_(ml::parsePostTransform(node)),
          base_(ml::floatsOrTensor(node, "base_values")) {
        classes_ = static_cast<std::int64_t>(labels_.size());
        if (classes_ == 0) throw EngineError("TreeEnsembleClassifier: no class labels");
        if (ensemble_.maxTarget() >= classes_)
            throw EngineError("TreeEnsembleClassifier: a weight names class " +
                              std::to_string(ensemble_.maxTarget()) + " of " +
                              std::to_string(classes_));
        // Two labels but every weight for one class id: the binary form, one score per row.
        const auto classIds = node.getInts("class_ids");
        binary_ = classes_ == 2 && !classIds.empty() &&
                  std::all_of(classIds.begin(), classIds.end(),
                              [&](auto id) { return id == classIds[0]; });
        binaryClass_ = binary_ ? classIds[0] : 0;
        allPositive_ = ensemble_.allWeightsPositive();
    }

    void run(KernelContext& ctx, const std::vector<const Value*>& inputs,
             std::vector<Value>& outputs) override {
        Tensor x = ml::featuresAsFloatOrDouble(inputTensor(inputs, 0));
        std::vector<ScoreCell> cells;
        ensemble_.evaluate(ctx, x, classes_, Aggregate::Sum, cells);
        const auto rows = static_cast<std::int64_t>(cells.size()) / classes_;
        Tensor labels = labels_.allocate(rows);
        Tensor z(DataType::Float, {rows, classes_});
        float* out = z.data<float>();
        std::vector<double> row(static_cast<std::size_t>(classes_));
        for (std::int64_t r = 0; r < rows; ++r) {
            const ScoreCell* cell = cells.data() + r * classes_;
            if (binary_) {
                double s = cell[binaryClass_].value;
                if (!base_.empty())
                    s += base_.size() > static_cast<std::size_t>(binaryClass_)
                             ? base_[static_cast<std::size_t>(binaryClass_)]
                             : base_[0];
                // All-positive weights are probabilities of the second class (threshold 0.5);
                // mixed weights are a margin (threshold 0), as gradient boosting writes them.
                if (allPositive_) {
                    labels_.write(labels, r, s > 0.5 ? 1 : 0);
                    row[1] = s;
                    ml::applyPostTransform(transform_, &row[1], 1);
                    row[0] = 1.0 - row[1];
                } else {
                    labels_.write(labels, r, s > 0 ? 1 : 0);
                    if (transform_ == ml::PostTransform::Logistic) {
                        row[0] = ml::logistic(-s);
                        row[1] = ml::logistic(s);
                    } else {
                        row[0] = -s;
                        row[1] = s;
                        ml::applyPostTransform(transform_, row.data(), 2);
                    }
                }
            } else {
                for (std::int64_t c = 0; c < classes_; ++c)
                    row[static_cast<std::size_t>(c)] =
                        cell[c].value + (base_.size() == static_cast<std::size_t>(classes_)
                                             ? base_[static_cast<std::size_t>(c)]
                                             : 0.0);
                labels_.write(labels, r, std::max_element(row.begin(), row.end()) - row.begin());
                ml::applyPostTransform(transform_, row.data(), row.size());
            }
            for (std::int64_t c = 0; c < classes_; ++c)
                out[r * classes_ + c] = static_cast<float>(row[static_cast<std::size_t>(c)]);
        }
        outputs[0] = std::move(labels);
        outputs[1] = std::move(z);
    }

  private:
    TreeEnsemble ensemble_;
    ml::ClassLabels labels_;
    ml::PostTransform transform_;
    std::vector<double> base_;
    std::int64_t classes_ = 0;
    bool binary_ = false;
    std::int64_t binaryClass_ = 0;
    bool allPositive_ = true;
};

}  // namespace

void registerMlTreeOps(KernelRegistry& registry) {
    registry.add<TreeEnsembleClassifierKernel>("TreeEnsembleClassifier", 1, kLatestOpset,
                                               "ai.onnx.ml");
    registry.add<TreeEnsembleRegressorKernel>("TreeEnsembleRegressor", 1, kLatestOpset,
                                              "ai.onnx.ml");
}

}  // namespace onnxlens::engine::ops
