#include "onnxlens/workflows/DynamicAxesCheck.h"

#include <algorithm>
#include <cstring>

namespace onnxlens::engine {

std::vector<std::string> inputSymbols(const std::vector<Session::IoInfo>& inputs) {
    std::vector<std::string> symbols;
    for (const auto& input : inputs) {
        if (!input.type.has_tensor_type() || !input.type.tensor_type().has_shape()) continue;
        for (const auto& dim : input.type.tensor_type().shape().dim())
            if (dim.has_dim_param() &&
                std::find(symbols.begin(), symbols.end(), dim.dim_param()) == symbols.end())
                symbols.push_back(dim.dim_param());
    }
    return symbols;
}

std::string describeDeclaredShape(const onnx::TypeProto& type) {
    if (!type.has_tensor_type()) return "(not a tensor)";
    if (!type.tensor_type().has_shape()) return "(unknown shape)";
    std::string s = "[";
    const auto& dims = type.tensor_type().shape().dim();
    for (int i = 0; i < dims.size(); ++i) {
        if (i) s += " x ";
        s += dims[i].has_dim_value()   ? std::to_string(dims[i].dim_value())
             : dims[i].has_dim_param() ? dims[i].dim_param()
                                       : std::string("?");
    }
    return s + "]";
}

Tensor firstItem(const Tensor& tensor) {
    require(tensor.rank() >= 1 && tensor.dim(0) >= 1,
            "no first item in a tensor of shape " + shapeToString(tensor.shape()));
    Shape shape = tensor.shape();
    shape[0] = 1;
    Tensor item(tensor.dtype(), shape);
    if (tensor.dtype() == DataType::String) {
        std::copy_n(tensor.data<std::string>(), item.numel(), item.data<std::string>());
    } else if (item.byteSize() > 0) {
        std::memcpy(item.raw(), tensor.raw(), item.byteSize());
    }
    return item;
}

namespace {

using Verdict = DynamicAxesCheckResult::Verdict;

std::string batchSymbolOf(const std::vector<Session::IoInfo>& inputs) {
    for (const auto& input : inputs) {
        if (!input.type.has_tensor_type() || !input.type.tensor_type().has_shape()) continue;
        const auto& dims = input.type.tensor_type().shape().dim();
        if (!dims.empty() && dims[0].has_dim_param()) return dims[0].dim_param();
    }
    return {};
}

bool firstDimIs(const onnx::TypeProto& type, const std::string& symbol) {
    if (symbol.empty() || !type.has_tensor_type() || !type.tensor_type().has_shape()) return false;
    const auto& dims = type.tensor_type().shape().dim();
    return !dims.empty() && dims[0].has_dim_param() && dims[0].dim_param() == symbol;
}

std::string bindingsText(const SymbolBindings& bindings) {
    std::string s;
    for (const auto& [symbol, value] : bindings)
        s += (s.empty() ? "" : ", ") + symbol + " = " + std::to_string(value);
    return s;
}

// Why `actual` does not fit the declared type under `bindings`; empty when it does. Output-only
// symbols (names the exporter invented) may take any value.
std::string shapeMismatch(const onnx::TypeProto& type, const Shape& actual,
                          const SymbolBindings& bindings) {
    if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return {};
    const auto& dims = type.tensor_type().shape().dim();
    if (static_cast<std::size_t>(dims.size()) != actual.size())
        return "declared rank " + std::to_string(dims.size()) + ", the run gave " +
               shapeToString(actual);
    for (int i = 0; i < dims.size(); ++i) {
        const std::int64_t got = actual[static_cast<std::size_t>(i)];
        if (dims[i].has_dim_value() && dims[i].dim_value() != got)
            return "dim " + std::to_string(i) + " is declared " +
                   std::to_string(dims[i].dim_value()) + " but the run gave " +
                   std::to_string(got) + " (with " + bindingsText(bindings) +
                   "): the output's dim is fixed where it should be symbolic";
        if (dims[i].has_dim_param()) {
            auto it = bindings.find(dims[i].dim_param());
            if (it != bindings.end() && it->second != got)
                return "dim " + std::to_string(i) + " is declared '" + dims[i].dim_param() +
                       "' = " + std::to_string(it->second) + " but the run gave " +
                       std::to_string(got);
        }
    }
    return {};
}

Result<std::map<std::string, Value>> defaultFeeds(const Session& session,
                                                  const SymbolBindings& bindings,
                                                  std::uint64_t seed) {
    return prepareFeeds(session.inputs(), {}, bindings, seed);
}

std::string noDynamicAxesSummary(const Session& session) {
    std::string shapes;
    for (const auto& input : session.inputs())
        shapes +=
            (shapes.empty() ? "" : ", ") + input.name + " " + describeDeclaredShape(input.type);
    return "The model has no dynamic axes: every input dimension is a fixed number (" + shapes +
           "), so it only accepts exactly these shapes, batch size included. This is the most "
           "common "
           "export mistake: pass dynamic_axes (or dynamic_shapes) to torch.onnx.export to make the "
           "batch and sequence dimensions symbolic.";
}

}  // namespace

Result<DynamicAxesCheckResult> checkDynamicAxes(Session& session,
                                                const DynamicAxesCheckOptions& options,
                                                RunControl* control) {
    DynamicAxesCheckResult result;
    result.symbols = inputSymbols(session.inputs());
    if (result.symbols.empty()) {
        result.verdict = Verdict::NoDynamicAxes;
        result.summary = noDynamicAxesSummary(session);
        return result;
    }
    result.batchSymbol = batchSymbolOf(session.inputs());

    SymbolBindings first;
    for (const auto& symbol : result.symbols) {
        auto it = options.base.find(symbol);
        first[symbol] =
            it != options.base.end() && it->second > 0 ? it->second : options.defaultDim;
    }
    SymbolBindings batch1 = first, batch2 = first, changed = first;
    if (!result.batchSymbol.empty()) {
        batch1[result.batchSymbol] = 1;
        batch2[result.batchSymbol] = 2;
        changed[result.batchSymbol] = 2;
    }
    bool otherSymbols = false;
    for (auto& [symbol, value] : changed)
        if (symbol != result.batchSymbol) {
            value += 1;
            otherSymbols = true;
        }

    struct Plan {
        std::string label;
        SymbolBindings bindings;
    };
    std::vector<Plan> plans;
    if (!result.batchSymbol.empty()) {
        plans.push_back({"batch 1", batch1});
        plans.push_back({"batch 2", batch2});
    } else {
        plans.push_back({"first values", first});
    }
    if (otherSymbols)
        plans.push_back(
            {result.batchSymbol.empty() ? "second values" : "batch 2, other dims changed",
             changed});

    const FeedMaker makeFeeds =
        options.makeFeeds ? options.makeFeeds : [&](const SymbolBindings& b) {
            return defaultFeeds(session, b, options.seed);
        };

    // The batch-2 feeds are made first so that the batch-1 feeds can be their first items.
    std::vector<std::map<std::string, Value>> feeds(plans.size());
    for (std::size_t p = 0; p < plans.size(); ++p) {
        if (!result.batchSymbol.empty() && p == 0) continue;
        auto made = makeFeeds(plans[p].bindings);
        if (!made) return made.error();
        feeds[p] = std::move(*made);
    }
    if (!result.batchSymbol.empty()) {
        try {
            for (const auto& input : session.inputs()) {
                const Value& v = feeds[1].at(input.name);
                feeds[0][input.name] = firstDimIs(input.type, result.batchSymbol) && v.isTensor()
                                           ? Value(firstItem(v.tensor()))
                                           : v;
            }
        } catch (const std::exception& e) {
            return Error{std::string("batch-1 inputs: ") + e.what()};
        }
    }

    std::vector<std::vector<Value>> outputs(plans.size());
    for (std::size_t p = 0; p < plans.size(); ++p) {
        if (options.progress)
            options.progress(static_cast<int>(p) + 1, static_cast<int>(plans.size()),
                             plans[p].label);
        DynamicAxesRun run;
        run.label = plans[p].label;
        run.bindings = plans[p].bindings;
        auto out = session.run(feeds[p], control);
        if (!out && control && control->cancel.load()) return out.error();
        if (out) {
            run.ok = true;
            outputs[p] = std::move(*out);
            for (const auto& v : outputs[p])
                run.outputShapes.push_back(v.isTensor() ? v.tensor().shape() : Shape{});
        } else {
            run.error = out.error().message;
            result.problems.push_back("The " + run.label + " run (" + bindingsText(run.bindings) +
                                      ") failed: " + run.error);
        }
        result.runs.push_back(std::move(run));
    }

    for (std::size_t k = 0; k < session.outputs().size(); ++k) {
        const auto& info = session.outputs()[k];
        DynamicOutputCheck check;
        check.name = info.name;
        check.declared = describeDeclaredShape(info.type);
        for (std::size_t p = 0; p < plans.size(); ++p) {
            if (!result.runs[p].ok || k >= outputs[p].size() || !outputs[p][k].isTensor()) continue;
            const Shape& shape = outputs[p][k].tensor().shape();
            check.shapes.push_back(shape);
            std::string mismatch = shapeMismatch(info.type, shape, plans[p].bindings);
            if (!mismatch.empty() && check.shapesFollow) {
                check.shapesFollow = false;
                check.problem = mismatch;
                result.problems.push_back("Output '" + info.name + "' " + check.declared + ": " +
                                          mismatch + ".");
            }
        }
        const bool bothBatchRuns =
            !result.batchSymbol.empty() && result.runs[0].ok && result.runs[1].ok;
        if (bothBatchRuns && outputs[0][k].isTensor() && outputs[1][k].isTensor()) {
            const Tensor& one = outputs[0][k].tensor();
            const Tensor& two = outputs[1][k].tensor();
            // Only outputs that carry the batch along axis 0 have a first item to compare.
            if (one.rank() >= 1 && two.rank() == one.rank() && one.dim(0) == 1 && two.dim(0) == 2) {
                check.firstItemCompared = true;
                check.firstItem = compareTensors(firstItem(two), one, options.tolerance);
                if (!check.firstItem.passed)
                    result.problems.push_back("Output '" + info.name +
                                              "': the batch-2 run's first item differs from "
                                              "the batch-1 run (" +
                                              check.firstItem.problem + ", max abs error " +
                                              std::to_string(check.firstItem.maxAbsError) +
                                              "); items of a batch are not independent.");
            }
        }
        result.outputs.push_back(std::move(check));
    }

    result.verdict = result.problems.empty() ? Verdict::Passed : Verdict::Failed;
    std::string symbols;
    for (const auto& s : result.symbols) symbols += (symbols.empty() ? "'" : ", '") + s + "'";
    if (result.passed()) {
        result.summary = "The dynamic axes work: " + std::to_string(plans.size()) + " runs with " +
                         symbols +
                         " set to different values gave outputs whose shapes follow the symbols";
        result.summary += result.batchSymbol.empty()
                              ? "."
                              : ", and the batch-2 run's first item equals the batch-1 run.";
    } else {
        result.summary = "The dynamic axes do not work as declared (symbols " + symbols + "): ";
        result.summary += result.problems.front();
        if (result.problems.size() > 1)
            result.summary += " (and " + std::to_string(result.problems.size() - 1) +
                              " more problem" + (result.problems.size() > 2 ? "s" : "") + ")";
    }
    if (result.batchSymbol.empty() && result.verdict != Verdict::NoDynamicAxes)
        result.summary += " Dim 0 is fixed in every input, so the batch size cannot change.";
    return result;
}

}  // namespace onnxlens::engine
