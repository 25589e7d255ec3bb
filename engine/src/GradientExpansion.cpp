#include "GradientExpansion.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnxlens/engine/EngineError.h"

namespace onnxlens::engine {

namespace {

bool isGradient(const onnx::NodeProto& n) {
    return n.op_type() == "Gradient" && n.domain() == "ai.onnx.preview.training";
}

std::vector<std::string> stringsAttribute(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return {a.strings().begin(), a.strings().end()};
    return {};
}

std::string stringAttribute(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return a.s();
    return {};
}

class BackwardBuilder {
  public:
    BackwardBuilder(onnx::GraphProto& out, std::string prefix)
        : out_(out), prefix_(std::move(prefix)) {}

    std::string emit(const std::string& op, std::vector<std::string> inputs) {
        auto* n = out_.add_node();
        n->set_op_type(op);
        std::string name = prefix_ + std::to_string(counter_++);
        n->set_name(name);
        for (auto& i : inputs) n->add_input(i);
        n->add_output(name);
        return name;
    }

    // dL/dy = 1 with the shape and type of y: y^(y - y) = y^0 = 1 for every y (pow(0, 0) = 1),
    // built from ops every opset has.
    std::string onesLike(const std::string& y) { return emit("Pow", {y, emit("Sub", {y, y})}); }

    void contribute(const std::string& value, const std::string& grad) {
        auto it = grads_.find(value);
        grads_[value] = it == grads_.end() ? grad : emit("Add", {it->second, grad});
    }
    const std::string* gradOf(const std::string& value) const {
        auto it = grads_.find(value);
        return it == grads_.end() ? nullptr : &it->second;
    }

  private:
    onnx::GraphProto& out_;
    std::string prefix_;
    int counter_ = 0;
    std::map<std::string, std::string> grads_;
};

}  // namespace

bool hasGradientNodes(const onnx::GraphProto& graph) {
    for (const auto& n : graph.node())
        if (isGradient(n)) return true;
    return false;
}

onnx::GraphProto expandGradientNodes(const onnx::GraphProto& graph) {
    onnx::GraphProto out = graph;
    out.clear_node();
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : graph.node())
        if (!isGradient(n))
            for (const auto& o : n.output()) producer[o] = &n;

    int gradientIndex = 0;
    for (const auto& node : graph.node()) {
        if (!isGradient(node)) {
            *out.add_node() = node;
            continue;
        }
        const auto xs = stringsAttribute(node, "xs");
        const std::string y = stringAttribute(node, "y");
        if (xs.empty() || y.empty())
            throw EngineError("Gradient node needs the xs and y attributes");
        const std::set<std::string> xset(xs.begin(), xs.end());

        // Forward nodes between xs and y, in topological order (post-order from y).
        std::vector<const onnx::NodeProto*> forward;
        std::set<const onnx::NodeProto*> seen;
        std::function<void(const std::string&)> visit = [&](const std::string& value) {
            if (xset.count(value)) return;
            auto it = producer.find(value);
            if (it == producer.end() || seen.count(it->second)) return;
            seen.insert(it->second);
            for (const auto& in : it->second->input()) visit(in);
            forward.push_back(it->second);
        };
        visit(y);

        BackwardBuilder b(out, "__gradient" + std::to_string(gradientIndex++) + "/");
        b.contribute(y, b.onesLike(y));
        for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
            const onnx::NodeProto& f = **it;
            const std::string* g = b.gradOf(f.output(0));
            if (!g) continue;
            const std::string grad = *g;
            const std::string& op = f.op_type();
            if (op == "Add") {
                b.contribute(f.input(0), grad);
                b.contribute(f.input(1), grad);
            } else if (op == "Sub") {
                b.contribute(f.input(0), grad);
                b.contribute(f.input(1), b.emit("Neg", {grad}));
            } else if (op == "Mul") {
                b.contribute(f.input(0), b.emit("Mul", {grad, f.input(1)}));
                b.contribute(f.input(1), b.emit("Mul", {grad, f.input(0)}));
            } else if (op == "Div") {
                b.contribute(f.input(0), b.emit("Div", {grad, f.input(1)}));
                // d(a/b)/db = -(a/b)/b
                b.contribute(
                    f.input(1),
                    b.emit("Neg",
                           {b.emit("Div", {b.emit("Mul", {grad, f.output(0)}), f.input(1)})}));
            } else if (op == "Neg") {
                b.contribute(f.input(0), b.emit("Neg", {grad}));
            } else if (op == "Identity") {
                b.contribute(f.input(0), grad);
            } else {
                throw EngineError("Gradient: differentiating " + op +
                                  " is not supported (only Add, Sub, Mul, "
                                  "Div, Neg, Identity)");
            }
        }
        for (int i = 0; i < node.output_size() && i < static_cast<int>(xs.size()); ++i) {
            if (node.output(i).empty()) continue;
            auto* n = out.add_node();
            n->set_name(node.name() + "/output" + std::to_string(i));
            n->add_output(node.output(i));
            if (const std::string* g = b.gradOf(xs[static_cast<std::size_t>(i)])) {
                n->set_op_type("Identity");
                n->add_input(*g);
            } else {  // y does not depend on this x
                n->set_op_type("Sub");
                n->add_input(xs[static_cast<std::size_t>(i)]);
                n->add_input(xs[static_cast<std::size_t>(i)]);
            }
        }
    }
    return out;
}

}  // namespace onnxlens::engine
