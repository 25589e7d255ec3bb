#include "onnxlens/workflows/DynamicAxesCheck.h"

#include <algorithm>
#include <cstring>
#include <optional>

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
    return prepareSessionFeeds(session, {}, bindings, seed);
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

int dynamicAxesExitCode(const DynamicAxesCheckResult& result) {
    switch (result.verdict) {
        case Verdict::Passed:
            return 0;
        case Verdict::CannotTell:
        case Verdict::NotExercised:
            return 2;
        case Verdict::Failed:
        case Verdict::NoDynamicAxes:
            return 1;
    }
    return 1;
}

std::vector<std::int64_t> firstValueCandidates(std::int64_t example, std::int64_t defaultDim,
                                               std::int64_t granularity) {
    const std::int64_t g = std::max<std::int64_t>(1, granularity);
    std::vector<std::int64_t> values;
    const auto add = [&](std::int64_t v) {
        if (v > 0 && std::find(values.begin(), values.end(), v) == values.end())
            values.push_back(v);
    };
    add(example);
    add(defaultDim);
    for (std::int64_t v :
         {defaultDim, std::int64_t{16}, std::int64_t{32}, std::int64_t{64}, std::int64_t{128}})
        add((v + g - 1) / g * g);
    return values;
}

std::vector<std::int64_t> secondValueCandidates(std::int64_t first, std::int64_t granularity) {
    const std::int64_t g = std::max<std::int64_t>(1, granularity);
    std::vector<std::int64_t> values;
    for (std::int64_t v : {first * 2, first + 1, first + g, first * 3, (first + g) / g * g})
        if (v > 0 && v != first && std::find(values.begin(), values.end(), v) == values.end())
            values.push_back(v);
    return values;
}

std::int64_t strideGranularity(const onnx::GraphProto& graph) {
    std::int64_t product = 1;
    for (const auto& node : graph.node()) {
        // Conv, ConvTranspose, QLinearConv, MaxPool, AveragePool, LpPool, and the optimizer's
        // fused or channel-blocked forms of them (BlockedConv, BlockedMaxPool ...).
        const std::string& op = node.op_type();
        if (op.find("Conv") == std::string::npos && op.find("Pool") == std::string::npos) continue;
        std::int64_t largest = 1;
        for (const auto& attr : node.attribute())
            if (attr.name() == "strides")
                for (auto stride : attr.ints()) largest = std::max(largest, stride);
        product = std::min<std::int64_t>(64, product * largest);
    }
    return product;
}

namespace {

std::string describeUnknownDims(const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& key : keys) text += (text.empty() ? "" : ", ") + key;
    return text;
}

// The non-batch symbols' values of `bindings`, for a rejection message: "width 5".
std::string changedValuesText(const SymbolBindings& bindings, const std::string& batchSymbol,
                              const std::vector<std::string>& symbols) {
    std::string text;
    for (const auto& symbol : symbols) {
        if (symbol == batchSymbol) continue;
        auto it = bindings.find(symbol);
        if (it != bindings.end())
            text += (text.empty() ? "" : ", ") + symbol + " " + std::to_string(it->second);
    }
    return text;
}

}  // namespace

Result<DynamicAxesCheckResult> checkDynamicAxes(Session& session,
                                                const DynamicAxesCheckOptions& options,
                                                RunControl* control) {
    DynamicAxesCheckResult result;
    result.symbols = inputSymbols(session.inputs());
    result.unknownDims = unknownInputDims(session.inputs());
    std::vector<std::string> unboundUnknown;
    for (const auto& key : result.unknownDims)
        if (!options.base.count(key)) unboundUnknown.push_back(key);
    if (result.symbols.empty()) {
        if (!result.unknownDims.empty()) {
            result.verdict = Verdict::CannotTell;
            result.summary =
                "The model's input dims " + describeUnknownDims(result.unknownDims) +
                " are unknown (`?`): neither fixed numbers nor named symbols, so the model does "
                "not say which of them may change and the check cannot tell whether they work. "
                "Give them values (Run dock, or --dim INPUT:AXIS=N) to run the model; name them "
                "with dynamic_axes in torch.onnx.export to declare them.";
            return result;
        }
        result.verdict = Verdict::NoDynamicAxes;
        result.summary = noDynamicAxesSummary(session);
        return result;
    }
    result.batchSymbol = batchSymbolOf(session.inputs());
    const std::int64_t granularity = strideGranularity(session.optimizedModel().graph());

    const FeedMaker makeFeeds =
        options.makeFeeds ? options.makeFeeds : [&](const SymbolBindings& b) {
            return defaultFeeds(session, b, options.seed);
        };
    std::vector<std::string> others;  // the non-batch symbols
    for (const auto& symbol : result.symbols)
        if (symbol != result.batchSymbol) others.push_back(symbol);
    SymbolBindings fixed;  // "input:axis" entries the caller set
    for (const auto& [key, value] : options.base)
        if (std::find(result.symbols.begin(), result.symbols.end(), key) == result.symbols.end())
            fixed[key] = value;

    int step = 0;
    const auto runOnce = [&](const std::string& label, const SymbolBindings& bindings,
                             const std::map<std::string, Value>& feeds,
                             std::vector<Value>& outputs) -> Result<DynamicAxesRun> {
        if (options.progress) options.progress(++step, std::max(step, 3), label);
        DynamicAxesRun run;
        run.label = label;
        run.bindings = bindings;
        auto out = session.run(feeds, control);
        if (!out && control && control->cancel.load()) return out.error();
        if (out) {
            run.ok = true;
            outputs = std::move(*out);
            for (const auto& v : outputs)
                run.outputShapes.push_back(v.isTensor() ? v.tensor().shape() : Shape{});
        } else {
            run.error = out.error().message;
        }
        return run;
    };
    const auto withFixed = [&](SymbolBindings bindings) {
        for (const auto& [key, value] : fixed) bindings[key] = value;
        return bindings;
    };
    const auto reject = [&](DynamicAxesRun run, const std::string& values) {
        run.rejected = true;
        result.rejections.push_back(values + " rejected: " + run.error);
        result.rejected.push_back(std::move(run));
    };
    // Why `outputs` of a run with `bindings` do not follow the declared dims; empty when they do.
    const auto followProblem = [&](const std::vector<Value>& outputs,
                                   const SymbolBindings& bindings) -> std::string {
        for (std::size_t k = 0; k < session.outputs().size() && k < outputs.size(); ++k) {
            if (!outputs[k].isTensor()) continue;
            std::string mismatch =
                shapeMismatch(session.outputs()[k].type, outputs[k].tensor().shape(), bindings);
            if (!mismatch.empty()) return mismatch;
        }
        return {};
    };

    // 1. The first values: batch 1 (the first item of batch 2's inputs) with each symbol's
    // example, else the first candidate the model accepts.
    std::map<std::string, std::vector<std::int64_t>> firstCandidates;
    std::size_t firstTries = 1;
    for (const auto& symbol : others) {
        auto it = options.base.find(symbol);
        firstCandidates[symbol] = firstValueCandidates(it != options.base.end() ? it->second : 0,
                                                       options.defaultDim, granularity);
        firstTries = std::max(firstTries, firstCandidates[symbol].size());
    }
    SymbolBindings first;
    std::map<std::string, Value> batch2Feeds;
    std::vector<Value> firstOutputs;
    std::optional<DynamicAxesRun> firstRun;
    for (std::size_t t = 0; t < firstTries && !firstRun; ++t) {
        SymbolBindings bindings;
        for (const auto& symbol : others) {
            const auto& candidates = firstCandidates[symbol];
            bindings[symbol] = candidates[std::min(t, candidates.size() - 1)];
        }
        if (t > 0 && bindings == first) continue;
        first = bindings;
        SymbolBindings made = withFixed(bindings);
        if (!result.batchSymbol.empty()) made[result.batchSymbol] = 2;
        auto feeds = makeFeeds(made);
        if (!feeds) return feeds.error();
        std::map<std::string, Value> feeds1;
        if (!result.batchSymbol.empty()) {
            try {
                for (const auto& input : session.inputs()) {
                    const Value& v = feeds->at(input.name);
                    feeds1[input.name] = firstDimIs(input.type, result.batchSymbol) && v.isTensor()
                                             ? Value(firstItem(v.tensor()))
                                             : v;
                }
            } catch (const std::exception& e) {
                return Error{std::string("batch-1 inputs: ") + e.what()};
            }
        } else {
            feeds1 = *feeds;
        }
        SymbolBindings runBindings = bindings;
        if (!result.batchSymbol.empty()) runBindings[result.batchSymbol] = 1;
        auto run = runOnce(result.batchSymbol.empty() ? "first values" : "batch 1", runBindings,
                           feeds1, firstOutputs);
        if (!run) return run.error();
        if (run->ok) {
            firstRun = std::move(*run);
            batch2Feeds = std::move(*feeds);
        } else if (t + 1 < firstTries && !others.empty()) {
            reject(std::move(*run),
                   changedValuesText(runBindings, result.batchSymbol, result.symbols));
        } else {
            firstRun = std::move(*run);  // the last candidate failed too: nothing ran
        }
    }
    if (!firstRun->ok) {
        result.runs.push_back(*firstRun);
        result.verdict = Verdict::CannotTell;
        result.problems.push_back("The " + firstRun->label + " run (" +
                                  bindingsText(firstRun->bindings) +
                                  ") failed: " + firstRun->error);
        result.summary =
            "The check cannot tell: the model did not run with any of the values "
            "tried (" +
            std::to_string(result.rejected.size() + 1) +
            "), so nothing can be compared. Last error: " + firstRun->error +
            " Give example values (a test data set, the Run dock, or --dim).";
        return result;
    }

    // 2. Batch 2 with the same values; its first item must equal the batch-1 run.
    struct Counted {
        DynamicAxesRun run;
        std::vector<Value> outputs;
    };
    std::vector<Counted> counted;
    counted.push_back({*firstRun, std::move(firstOutputs)});
    if (!result.batchSymbol.empty()) {
        SymbolBindings bindings = first;
        bindings[result.batchSymbol] = 2;
        std::vector<Value> outputs;
        auto run = runOnce("batch 2", bindings, batch2Feeds, outputs);
        if (!run) return run.error();
        if (!run->ok)
            result.problems.push_back("The batch 2 run (" + bindingsText(bindings) +
                                      ") failed: " + run->error +
                                      (run->error.empty() || run->error.back() == '.' ? "" : ".") +
                                      " The batch size is not free.");
        counted.push_back({std::move(*run), std::move(outputs)});
    }

    // 3. Second values of the other symbols, tried until one is accepted and the outputs follow.
    if (!others.empty()) {
        std::map<std::string, std::vector<std::int64_t>> secondCandidates;
        std::size_t tries = 0;
        for (const auto& symbol : others) {
            secondCandidates[symbol] = secondValueCandidates(first.at(symbol), granularity);
            tries = std::max(tries, secondCandidates[symbol].size());
        }
        const std::string label =
            result.batchSymbol.empty() ? "second values" : "batch 2, other dims changed";
        std::optional<Counted> accepted, inconsistent;
        std::string inconsistency;
        for (std::size_t t = 0; t < tries && !accepted; ++t) {
            SymbolBindings bindings = first;
            for (const auto& symbol : others) {
                const auto& candidates = secondCandidates[symbol];
                bindings[symbol] = candidates[std::min(t, candidates.size() - 1)];
            }
            if (!result.batchSymbol.empty()) bindings[result.batchSymbol] = 2;
            auto feeds = makeFeeds(withFixed(bindings));
            if (!feeds) return feeds.error();
            std::vector<Value> outputs;
            auto run = runOnce(label, bindings, *feeds, outputs);
            if (!run) return run.error();
            const std::string values =
                changedValuesText(bindings, result.batchSymbol, result.symbols);
            if (!run->ok) {
                reject(std::move(*run), values);
                continue;
            }
            std::string problem = followProblem(outputs, bindings);
            if (problem.empty()) {
                accepted = Counted{std::move(*run), std::move(outputs)};
            } else if (!inconsistent) {
                inconsistency = values + ": " + problem;
                inconsistent = Counted{std::move(*run), std::move(outputs)};
            }
        }
        if (accepted) {
            counted.push_back(std::move(*accepted));
        } else if (inconsistent) {
            counted.push_back(std::move(*inconsistent));
        } else {
            std::string names;
            for (const auto& s : others) names += (names.empty() ? "'" : ", '") + s + "'";
            result.problems.push_back("No second value of " + names +
                                      " was accepted by the model (" + std::to_string(tries) +
                                      " tried; " + result.rejections.back() + ").");
        }
    }

    for (const auto& c : counted) {
        result.runs.push_back(c.run);
        if (!c.run.ok && c.run.label != "batch 2")
            result.problems.push_back("The " + c.run.label + " run (" +
                                      bindingsText(c.run.bindings) + ") failed: " + c.run.error);
    }

    for (std::size_t k = 0; k < session.outputs().size(); ++k) {
        const auto& info = session.outputs()[k];
        DynamicOutputCheck check;
        check.name = info.name;
        check.declared = describeDeclaredShape(info.type);
        for (const auto& c : counted) {
            if (!c.run.ok) {
                if (check.shapesFollow) {
                    check.shapesFollow = false;
                    check.problem = "the " + c.run.label + " run failed";
                }
                continue;
            }
            if (k >= c.outputs.size() || !c.outputs[k].isTensor()) continue;
            const Shape& shape = c.outputs[k].tensor().shape();
            check.shapes.push_back(shape);
            std::string mismatch = shapeMismatch(info.type, shape, c.run.bindings);
            if (!mismatch.empty() && check.shapesFollow) {
                check.shapesFollow = false;
                check.problem = mismatch;
                result.problems.push_back("Output '" + info.name + "' " + check.declared + ": " +
                                          mismatch + ".");
            }
        }
        const bool bothBatchRuns = !result.batchSymbol.empty() && counted.size() >= 2 &&
                                   counted[0].run.ok && counted[1].run.ok;
        if (bothBatchRuns && k < counted[0].outputs.size() && k < counted[1].outputs.size() &&
            counted[0].outputs[k].isTensor() && counted[1].outputs[k].isTensor()) {
            const Tensor& one = counted[0].outputs[k].tensor();
            const Tensor& two = counted[1].outputs[k].tensor();
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
        // Which symbols moved this output: compare each successful run with the one before it.
        for (std::size_t r = 1; r < counted.size(); ++r) {
            const auto& before = counted[r - 1];
            const auto& after = counted[r];
            if (!before.run.ok || !after.run.ok || k >= before.outputs.size() ||
                k >= after.outputs.size() || !before.outputs[k].isTensor() ||
                !after.outputs[k].isTensor() ||
                before.outputs[k].tensor().shape() == after.outputs[k].tensor().shape())
                continue;
            for (const auto& [symbol, value] : after.run.bindings) {
                auto was = before.run.bindings.find(symbol);
                if (was != before.run.bindings.end() && was->second != value &&
                    std::find(check.movedWith.begin(), check.movedWith.end(), symbol) ==
                        check.movedWith.end())
                    check.movedWith.push_back(symbol);
            }
        }
        result.outputs.push_back(std::move(check));
    }

    // A symbol changed between two successful runs that moved no output's shape was not
    // exercised: the runs show that the model accepts other values, not that the axis works.
    for (const auto& symbol : result.symbols) {
        bool changed = false, moved = false;
        for (std::size_t r = 1; r < counted.size(); ++r) {
            const auto& before = counted[r - 1].run;
            const auto& after = counted[r].run;
            auto a = before.bindings.find(symbol);
            auto b = after.bindings.find(symbol);
            if (before.ok && after.ok && a != before.bindings.end() && b != after.bindings.end() &&
                a->second != b->second)
                changed = true;
        }
        for (const auto& o : result.outputs)
            if (std::find(o.movedWith.begin(), o.movedWith.end(), symbol) != o.movedWith.end())
                moved = true;
        if (changed && !moved) result.unexercised.push_back(symbol);
    }

    result.verdict = result.problems.empty() ? Verdict::Passed : Verdict::Failed;
    if (result.passed() && !result.unexercised.empty()) result.verdict = Verdict::NotExercised;
    std::string symbols;
    for (const auto& s : result.symbols) symbols += (symbols.empty() ? "'" : ", '") + s + "'";
    if (result.passed()) {
        result.summary = "The dynamic axes work: " + std::to_string(result.runs.size()) +
                         " runs with " + symbols +
                         " set to different values gave outputs whose shapes follow the symbols";
        result.summary += result.batchSymbol.empty()
                              ? "."
                              : ", and the batch-2 run's first item equals the batch-1 run.";
    } else if (result.verdict == Verdict::NotExercised) {
        std::string names;
        for (const auto& s : result.unexercised) names += (names.empty() ? "'" : ", '") + s + "'";
        result.summary =
            "Not exercised: the model ran " + std::to_string(result.runs.size()) + " times with " +
            symbols + " set to different values and nothing failed, but changing " + names +
            " changed no output's shape, so these runs cannot show that " +
            (result.unexercised.size() > 1 ? "those axes work" : "that axis works") +
            ". That is expected when the model pools the axis away (a classifier's height and "
            "width); when an output should follow it (a detector's map, a sequence of tokens), "
            "its size was fixed at export.";
    } else {
        result.summary = "The dynamic axes do not work as declared (symbols " + symbols + "): ";
        result.summary += result.problems.front();
        if (result.problems.size() > 1)
            result.summary += " (and " + std::to_string(result.problems.size() - 1) +
                              " more problem" + (result.problems.size() > 2 ? "s" : "") + ")";
    }
    if (!result.rejections.empty())
        result.summary += " Values the model rejected (not counted against the axes): " +
                          std::to_string(result.rejections.size()) +
                          ", the first: " + result.rejections.front() + ".";
    if (!unboundUnknown.empty())
        result.summary += " Unknown (`?`) dims " + describeUnknownDims(unboundUnknown) +
                          " were not checked and were set to 1.";
    if (result.batchSymbol.empty())
        result.summary += " Dim 0 is fixed in every input, so the batch size cannot change.";
    return result;
}

}  // namespace onnxlens::engine
