#include "onnxlens/workflows/NumericDiff.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "ReportText.h"
#include "SharedWeights.h"
#include "onnxlens/engine/Session.h"
#include "onnxlens/model/GraphIndex.h"
#include "onnxlens/model/NodeNames.h"
#include "onnxlens/model/TestDataSet.h"
#include "onnxlens/workflows/ReferenceRun.h"

namespace onnxlens::engine {

namespace {

using Json = nlohmann::json;

double relativeErrorOf(const AgreementFigures& f) {
    if (std::isinf(f.sqnrDb)) return f.sqnrDb > 0 ? 0.0 : 1.0;
    return std::pow(10.0, -f.sqnrDb / 20.0);
}

// Values the two runs share, handed from whichever run produces one first to the run producing
// its partner, which compares the pair and lets both go. A run holding more than the byte limit
// of values its partner has not produced yet waits, unless the other run is waiting too (their
// orders disagree: both go on rather than wait for each other).
class LockStep {
  public:
    LockStep(const std::map<std::string, std::string>& aToB, const NumericDiffOptions& options,
             const NumericDiffProgressCallback& progress, const std::atomic<bool>* cancel,
             RunControl* controls)
        : options_(options), progress_(progress), cancel_(cancel), controls_(controls) {
        for (const auto& [a, b] : aToB) {
            partner_[0][a] = b;
            partner_[1][b] = a;
        }
        total_ = static_cast<int>(aToB.size());
    }

    void offer(int side, const std::string& name, const Value& value) {
        auto it = partner_[side].find(name);
        if (it == partner_[side].end()) return;
        const int other = 1 - side;
        std::unique_lock lock(mutex_);
        if (stopped_) return;
        auto waiting = pending_[other].find(it->second);
        if (waiting != pending_[other].end()) {
            Value partner = std::move(waiting->second);
            bytes_[other] -= bytesOf(partner);
            pending_[other].erase(waiting);
            changed_.notify_all();
            lock.unlock();
            TensorDiff d;
            d.valueA = side == 0 ? name : it->second;
            d.valueB = side == 0 ? it->second : name;
            try {
                if (side == 0)
                    compareValuePair(value, partner, options_.tolerance, d);
                else
                    compareValuePair(partner, value, options_.tolerance, d);
            } catch (const std::exception& e) {
                d.compared = false;
                d.problem = e.what();
            }
            lock.lock();
            results_.push_back(std::move(d));
            reportProgress();
            return;
        }
        if (done_[other]) return;  // the partner was never produced: counted at the end
        const std::uint64_t bytes = bytesOf(value);
        pending_[side].emplace(name, value);
        bytes_[side] += bytes;
        peak_ = std::max(peak_, bytes_[0] + bytes_[1]);
        changed_.notify_all();
        while (!stopped_ && bytes_[side] > options_.pendingBytesLimit &&
               bytes_[other] <= options_.pendingBytesLimit && !done_[other]) {
            changed_.wait_for(lock, std::chrono::milliseconds(50));
            if (cancel_ && cancel_->load()) stopLocked();
        }
    }

    void finish(int side, bool failed) {
        std::lock_guard lock(mutex_);
        done_[side] = true;
        if (failed) stopLocked();
        changed_.notify_all();
    }

    std::vector<TensorDiff> takeResults() { return std::move(results_); }
    int leftOver() const { return static_cast<int>(pending_[0].size() + pending_[1].size()); }
    std::uint64_t peakBytes() const { return peak_; }

  private:
    static std::uint64_t bytesOf(const Value& v) {
        return v.isTensor() ? v.tensor().byteSize() : 0;
    }

    void stopLocked() {
        stopped_ = true;
        controls_[0].cancel = true;
        controls_[1].cancel = true;
    }

    void reportProgress() {
        const int done = static_cast<int>(results_.size());
        if (progress_ && (done == total_ || done % std::max(1, total_ / 100) == 0))
            progress_({"comparing values", done, total_});
    }

    const NumericDiffOptions& options_;
    const NumericDiffProgressCallback& progress_;
    const std::atomic<bool>* cancel_;
    RunControl* controls_;
    std::unordered_map<std::string, std::string> partner_[2];
    std::mutex mutex_;
    std::condition_variable changed_;
    std::unordered_map<std::string, Value> pending_[2];
    std::uint64_t bytes_[2] = {0, 0};
    std::uint64_t peak_ = 0;
    bool done_[2] = {false, false};
    bool stopped_ = false;
    int total_ = 0;
    std::vector<TensorDiff> results_;
};

struct Feeds {
    std::string name;
    std::map<std::string, Value> values;
};

Result<Feeds> feedsOf(const Session& session, const std::vector<TestDataSet>& dataSets,
                      const LoadedModel& model, const NumericDiffOptions& options) {
    const std::string where = model.path.string();
    if (!dataSets.empty() && options.inputFiles.empty()) {
        auto feeds = feedsFromTestDataSet(session, dataSets.front());
        if (!feeds) return makeError(where, feeds.error().message);
        return Feeds{dataSets.front().directory.filename().string(), std::move(*feeds)};
    }
    auto feeds = prepareSessionFeeds(session, options.inputFiles, options.dims, options.seed);
    if (!feeds) return makeError(where, feeds.error().message);
    return Feeds{options.inputFiles.empty() ? "random (seed " + std::to_string(options.seed) + ")"
                                            : "files (random data for the other inputs, seed " +
                                                  std::to_string(options.seed) + ")",
                 std::move(*feeds)};
}

// B's inputs fed with A's values: by name, then the rest by position.
Result<std::map<std::string, Value>> feedsForB(const Session& a, const Session& b,
                                               const std::map<std::string, Value>& feedsA,
                                               const std::string& whereB) {
    std::map<std::string, Value> feeds;
    std::vector<std::string> restA;
    for (const auto& in : a.inputs())
        if (std::none_of(b.inputs().begin(), b.inputs().end(),
                         [&](const auto& x) { return x.name == in.name; }))
            restA.push_back(in.name);
    std::size_t next = 0;
    for (const auto& in : b.inputs()) {
        auto it = feedsA.find(in.name);
        if (it == feedsA.end() && next < restA.size()) it = feedsA.find(restA[next++]);
        if (it == feedsA.end())
            return makeError(whereB,
                             "input '" + in.name + "' has no counterpart in the first model");
        const std::string mismatch = describeTypeMismatch(it->second, in.type);
        if (!mismatch.empty())
            return makeError(whereB, "input '" + in.name +
                                         "' does not take the first model's "
                                         "input '" +
                                         it->first + "': " + mismatch);
        feeds.emplace(in.name, it->second);
    }
    return feeds;
}

std::set<std::string> producedValues(const onnx::GraphProto& g) {
    std::set<std::string> names;
    for (const auto& n : g.node())
        for (const auto& o : n.output())
            if (!o.empty()) names.insert(o);
    return names;
}

Result<std::unique_ptr<Session>> compile(LoadedModel&& model, const NumericDiffOptions& options,
                                         int threads) {
    SessionOptions so;
    so.threads = threads;
    // The figures must come out the same when rerun at this thread count.
    so.adaptThreadsToLoad = false;
    so.optimize = options.optimize;
    const std::string where = model.path.string();
    auto session = Session::create(std::move(model), so);
    if (!session) return makeError(where, session.error().message);
    return std::move(*session);
}

// Error added, first divergence, path and top nodes, from the compared values.
void analyse(NumericDiff& diff, const onnx::GraphProto& ga, const onnx::GraphProto& gb) {
    GraphIndex ia(ga), ib(gb);
    std::unordered_map<std::string, int> outputPosition;
    for (int n = 0; n < ga.node_size(); ++n)
        for (int o = 0; o < ga.node(n).output_size(); ++o) outputPosition[ga.node(n).output(o)] = o;
    for (auto& t : diff.tensors) {
        t.nodeA = ia.producer(t.valueA);
        t.nodeB = ib.producer(t.valueB);
        if (t.nodeA >= 0) {
            t.nodeNameA = profileNameOf(ga.node(t.nodeA));
            t.opTypeA = ga.node(t.nodeA).op_type();
        }
        if (t.nodeB >= 0) t.nodeNameB = profileNameOf(gb.node(t.nodeB));
        t.graphOutput = ia.isGraphOutput(t.valueA);
    }
    std::sort(diff.tensors.begin(), diff.tensors.end(), [&](const auto& x, const auto& y) {
        if (x.nodeA != y.nodeA) return x.nodeA < y.nodeA;
        return outputPosition[x.valueA] < outputPosition[y.valueA];
    });
    std::unordered_map<std::string, int> index;
    for (std::size_t i = 0; i < diff.tensors.size(); ++i)
        index[diff.tensors[i].valueA] = static_cast<int>(i);

    std::vector<bool> cancellation(diff.tensors.size(), false);
    for (std::size_t i = 0; i < diff.tensors.size(); ++i) {
        auto& t = diff.tensors[i];
        if (!t.compared || t.nodeA < 0) continue;
        double inputs = 0, inputScale = 0;
        for (const auto& in : ga.node(t.nodeA).input()) {
            auto it = index.find(in);
            if (it == index.end() || !diff.tensors[it->second].compared) continue;
            inputs = std::max(inputs, diff.tensors[it->second].relativeError);
            inputScale = std::max(inputScale, diff.tensors[it->second].referenceMaxAbs);
        }
        t.errorAdded = t.relativeError - inputs;
        cancellation[i] = t.referenceMaxAbs < 0.01 * inputScale;
    }
    for (std::size_t i = 0; i < diff.tensors.size(); ++i) {
        const auto& t = diff.tensors[i];
        if (t.graphOutput && (!t.compared || !t.withinTolerance))
            diff.outputsWithinTolerance = false;
        if (diff.firstDivergence < 0 && t.compared && !t.withinTolerance)
            diff.firstDivergence = static_cast<int>(i);
    }

    // Top nodes: each node once, by the largest error its outputs added.
    std::vector<int> order;
    std::set<int> seenNodes;
    for (std::size_t i = 0; i < diff.tensors.size(); ++i)
        if (diff.tensors[i].compared && diff.tensors[i].errorAdded > 0 && !cancellation[i])
            order.push_back(static_cast<int>(i));
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        return diff.tensors[x].errorAdded > diff.tensors[y].errorAdded;
    });
    for (int i : order) {
        if (diff.topErrorAdded.size() >= 10) break;
        if (seenNodes.insert(diff.tensors[i].nodeA).second) diff.topErrorAdded.push_back(i);
    }

    // The shortest path in A's graph from the first divergence to a graph output.
    if (diff.firstDivergence >= 0) {
        const std::string start = diff.tensors[diff.firstDivergence].valueA;
        std::unordered_map<std::string, std::string> from{{start, ""}};
        std::deque<std::string> queue{start};
        std::string reached;
        while (!queue.empty() && reached.empty()) {
            const std::string v = queue.front();
            queue.pop_front();
            if (ia.isGraphOutput(v)) {
                reached = v;
                break;
            }
            for (int c : ia.consumers(v))
                for (const auto& o : ga.node(c).output())
                    if (!o.empty() && from.emplace(o, v).second) queue.push_back(o);
        }
        std::vector<int> path;
        for (std::string v = reached; !v.empty(); v = from[v]) {
            auto it = index.find(v);
            if (it != index.end() && diff.tensors[it->second].compared) path.push_back(it->second);
        }
        diff.growthPath.assign(path.rbegin(), path.rend());
    }
}

// `blocked` holds `plain`'s values in the engine's channel-blocked layout: [N, ceil(C/b),
// spatial..., b] for [N, C, spatial...] (ChannelBlockedLayout.h in engine/ops).
bool isChannelBlockedCopy(const Tensor& plain, const Tensor& blocked) {
    const Shape& p = plain.shape();
    const Shape& q = blocked.shape();
    if (plain.dtype() != DataType::Float || blocked.dtype() != DataType::Float || p.size() < 3 ||
        q.size() != p.size() + 1 || q[0] != p[0] || q.back() < 1)
        return false;
    const std::int64_t block = q.back();
    if (q[1] != (p[1] + block - 1) / block) return false;
    return std::equal(p.begin() + 2, p.end(), q.begin() + 2);
}

Tensor unblocked(const Tensor& blocked, const Shape& plainShape) {
    Tensor out(DataType::Float, plainShape);
    const std::int64_t n = plainShape[0], c = plainShape[1], block = blocked.shape().back();
    const std::int64_t cb = blocked.shape()[1];
    const std::int64_t plane = out.numel() / std::max<std::int64_t>(1, n * c);
    const float* src = blocked.data<float>();
    float* dst = out.data<float>();
    for (std::int64_t image = 0; image < n; ++image)
        for (std::int64_t channel = 0; channel < c; ++channel) {
            const float* from =
                src + ((image * cb + channel / block) * plane) * block + channel % block;
            float* to = dst + (image * c + channel) * plane;
            for (std::int64_t s = 0; s < plane; ++s) to[s] = from[s * block];
        }
    return out;
}

std::string sqnrText(double db) { return formatSqnr(db); }

std::string figuresText(const TensorDiff& t) {
    if (!t.compared) return "not compared: " + t.problem;
    return formatNumbers("max abs %.3g, max rel %.3g, cosine %.6f", t.figures.maxAbsError,
                         t.maxRelError, t.figures.cosine) +
           ", SQNR " + sqnrText(t.figures.sqnrDb);
}

Json tensorJson(const TensorDiff& t) {
    Json j{{"value_a", t.valueA},   {"value_b", t.valueB},  {"node_a", t.nodeNameA},
           {"node_b", t.nodeNameB}, {"op_type", t.opTypeA}, {"graph_output", t.graphOutput},
           {"compared", t.compared}};
    if (!t.compared) {
        j["problem"] = t.problem;
        return j;
    }
    auto number = [](double x) {
        return std::isfinite(x) ? Json(x) : Json(x > 0 ? "inf" : "-inf");
    };
    j["max_abs_error"] = number(t.figures.maxAbsError);
    j["mean_abs_error"] = number(t.figures.meanAbsError);
    j["max_rel_error"] = number(t.maxRelError);
    j["cosine"] = number(t.figures.cosine);
    j["sqnr_db"] = number(t.figures.sqnrDb);
    j["relative_error"] = number(t.relativeError);
    j["error_added"] = number(t.errorAdded);
    j["outside_tolerance"] = t.outside;
    j["within_tolerance"] = t.withinTolerance;
    return j;
}

}  // namespace

void compareValuePair(const Value& a, const Value& b, const Tolerance& tolerance,
                      TensorDiff& diff) {
    diff.compared = false;
    if (!a.isTensor() || !b.isTensor()) {
        diff.problem = "not a tensor";
        return;
    }
    const Tensor& ta = a.tensor();
    Tensor tb = b.tensor();
    if (isChannelBlockedCopy(ta, tb)) tb = unblocked(tb, ta.shape());
    if (ta.shape() != tb.shape()) {
        diff.problem = "shape " + shapeToString(ta.shape()) + " vs " + shapeToString(tb.shape());
        return;
    }
    if (ta.dtype() != tb.dtype()) {
        if (ta.dtype() == DataType::String || tb.dtype() == DataType::String) {
            diff.problem = std::string("dtype ") + dataTypeName(ta.dtype()) + " vs " +
                           dataTypeName(tb.dtype());
            return;
        }
        tb = tb.castTo(ta.dtype());  // float16 against float32, say: compared in A's type
    }
    const ComparisonResult c = compareTensors(tb, ta, tolerance);
    AgreementAccumulator acc;
    if (ta.dtype() != DataType::String && !acc.add(ta, tb)) {
        diff.problem = "not numeric";
        return;
    }
    diff.compared = true;
    diff.figures = acc.figures();
    diff.figures.maxAbsError = c.maxAbsError;
    diff.maxRelError = c.maxRelError;
    diff.outside = c.outsideCount;
    diff.withinTolerance = c.passed;
    diff.referenceMaxAbs = c.referenceMaxAbs;
    diff.relativeError = relativeErrorOf(diff.figures);
}

Result<NumericDiff> numericDiff(LoadedModel&& a, const std::function<Result<LoadedModel>()>& loadB,
                                const NumericDiffOptions& options,
                                const NumericDiffProgressCallback& progress,
                                const std::atomic<bool>* cancel) {
    if (!a.proto) return Error{"numeric diff: the first model is not loaded"};
    NumericDiff diff;
    diff.tolerance = options.tolerance;
    const std::string whereA = a.path.string();
    const auto startedAt = std::chrono::steady_clock::now();
    auto cancelled = [&] { return cancel && cancel->load(); };

    std::vector<TestDataSet> dataSets;
    if (!options.dataSet.empty()) {
        auto set = readTestDataSetFolder(options.dataSet, *a.proto);
        if (!set) return set.error();
        dataSets.push_back(std::move(*set));
    } else if (options.useTestDataSets) {
        auto found = discoverTestDataSets(a.path, *a.proto);
        if (!found) return found.error();
        dataSets = std::move(*found);
    }

    int threads = options.threads;
    if (threads <= 0)
        threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / 2));
    diff.threadsEach = threads;
    // A is compiled before B is read, and B's structure is compared against A's skeleton: the
    // weights of the two never sit in memory as protobuf at once, only in the two sessions.
    const onnx::ModelProto skeletonA = modelSkeleton(*a.proto);
    const LoadedModel infoA{a.path, a.directory, a.fileBytes, nullptr, nullptr};
    // The weights the two models share, held once (SharedWeights.h): A's large initializers go to
    // a scratch file both sessions map. Declared before the sessions, which map it: removed after
    // them.
    std::unique_ptr<SharedWeights> sharedWeights;
    if (options.shareWeights && SharedWeights::eligible(*a.proto))
        sharedWeights = SharedWeights::create();
    if (sharedWeights) {
        if (progress) progress({"writing the weights the two models may share", 0, 0});
        a.proto = sharedWeights->addFirst(a.proto, a.proto.use_count() == 1);
        a.directory = sharedWeights->directory();
    }
    if (progress) progress({"compiling " + a.path.filename().string(), 0, 0});
    auto sessionA = compile(std::move(a), options, threads);
    if (!sessionA) return sessionA.error();
    if (cancelled()) return Error{"cancelled"};
    auto b = loadB();
    if (!b) return b.error();
    if (!b->proto) return Error{"numeric diff: the second model is not loaded"};
    const std::string whereB = b->path.string();
    if (progress) progress({"comparing the structure", 0, 0});
    ModelDiffOptions structureOptions;
    structureOptions.compareValues = false;  // A's weights are in its session now
    diff.structure = diffModels(skeletonA, *b->proto, structureOptions);
    diff.structure.nameA = infoA.path.filename().string();
    diff.structure.nameB = b->path.filename().string();
    const onnx::ModelProto skeletonB = modelSkeleton(*b->proto);
    if (cancelled()) return Error{"cancelled"};
    if (sharedWeights && SharedWeights::eligible(*b->proto)) {
        b->proto = sharedWeights->addSecond(b->proto, b->proto.use_count() == 1);
        b->directory = sharedWeights->directory();
        diff.sharedWeightBytes = sharedWeights->bytesShared();
    }
    if (progress) progress({"compiling " + diff.structure.nameB, 0, 0});
    auto sessionB = compile(std::move(*b), options, threads);
    if (!sessionB) return sessionB.error();

    auto feedsA = feedsOf(**sessionA, dataSets, infoA, options);
    if (!feedsA) return feedsA.error();
    diff.inputSet = feedsA->name;
    auto feedsB = feedsForB(**sessionA, **sessionB, feedsA->values, whereB);
    if (!feedsB) return feedsB.error();

    // Only values both sessions compute (the optimizer, when on, fuses some away).
    const auto producedA = producedValues((*sessionA)->optimizedModel().graph());
    const auto producedB = producedValues((*sessionB)->optimizedModel().graph());
    std::map<std::string, std::string> shared;
    std::set<std::string> sharedB;
    for (const auto& [va, vb] : diff.structure.valueMap)
        if (producedA.count(va) && producedB.count(vb)) {
            shared.emplace(va, vb);
            sharedB.insert(vb);
        }
    // The engine's optimized graphs (`onnxlens-cli optimize`) hold channel-blocked copies of
    // plain values, named "VALUE/blocked": compared with VALUE once unblocked.
    const std::string blockedSuffix = "/blocked";
    for (const auto& vb : producedB) {
        if (vb.size() <= blockedSuffix.size() || !vb.ends_with(blockedSuffix)) continue;
        const std::string plain = vb.substr(0, vb.size() - blockedSuffix.size());
        if (producedA.count(plain) && !sharedB.count(vb)) shared.emplace(plain, vb);
    }

    RunControl controls[2];
    LockStep lockStep(shared, options, progress, cancel, controls);
    controls[0].onValue = [&](const std::string& n, const Value& v) { lockStep.offer(0, n, v); };
    controls[1].onValue = [&](const std::string& n, const Value& v) { lockStep.offer(1, n, v); };
    if (progress) progress({"running both models", 0, static_cast<int>(shared.size())});
    std::optional<Result<std::vector<Value>>> resultB;
    std::thread runB([&] {
        resultB.emplace((*sessionB)->run(*feedsB, &controls[1]));
        lockStep.finish(1, !resultB->ok());
    });
    auto resultA = (*sessionA)->run(feedsA->values, &controls[0]);
    lockStep.finish(0, !resultA.ok());
    runB.join();
    if (cancelled()) return Error{"cancelled"};
    if (!resultA) return makeError(whereA, resultA.error().message);
    if (!*resultB) return makeError(whereB, resultB->error().message);
    diff.runSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - startedAt).count();
    diff.tensors = lockStep.takeResults();
    diff.notProduced = lockStep.leftOver();
    diff.peakPendingBytes = lockStep.peakBytes();
    analyse(diff, skeletonA.graph(), skeletonB.graph());
    return diff;
}

Result<NumericDiff> numericDiff(LoadedModel&& a, LoadedModel&& b, const NumericDiffOptions& options,
                                const NumericDiffProgressCallback& progress,
                                const std::atomic<bool>* cancel) {
    return numericDiff(
        std::move(a), [&]() -> Result<LoadedModel> { return std::move(b); }, options, progress,
        cancel);
}

Result<NumericDiff> numericDiff(LoadedModel&& a, const std::filesystem::path& b,
                                const NumericDiffOptions& options,
                                const NumericDiffProgressCallback& progress,
                                const std::atomic<bool>* cancel) {
    return numericDiff(
        std::move(a), [&] { return loadModel(b); }, options, progress, cancel);
}

std::map<std::string, double> sqnrByNode(const NumericDiff& diff) {
    std::map<std::string, double> out;
    for (const auto& t : diff.tensors) {
        if (!t.compared || t.nodeNameA.empty()) continue;
        auto [it, inserted] = out.emplace(t.nodeNameA, t.figures.sqnrDb);
        if (!inserted) it->second = std::min(it->second, t.figures.sqnrDb);
    }
    return out;
}

Json numericDiffJson(const NumericDiff& diff) {
    Json tensors = Json::array(), top = Json::array(), path = Json::array();
    for (const auto& t : diff.tensors) tensors.push_back(tensorJson(t));
    for (int i : diff.topErrorAdded) top.push_back(tensorJson(diff.tensors[i]));
    for (int i : diff.growthPath) path.push_back(tensorJson(diff.tensors[i]));
    int compared = 0;
    for (const auto& t : diff.tensors) compared += t.compared ? 1 : 0;
    Json j{{"input_set", diff.inputSet},
           {"tolerance", {{"rtol", diff.tolerance.rtol}, {"atol", diff.tolerance.atol}}},
           {"values_compared", compared},
           {"values_not_comparable", static_cast<int>(diff.tensors.size()) - compared},
           {"values_not_produced", diff.notProduced},
           {"outputs_within_tolerance", diff.outputsWithinTolerance},
           {"first_divergence", diff.firstDivergence >= 0
                                    ? tensorJson(diff.tensors[diff.firstDivergence])
                                    : Json(nullptr)},
           {"error_growth", path},
           {"top_error_added", top},
           {"peak_pending_bytes", diff.peakPendingBytes},
           {"shared_weight_bytes", diff.sharedWeightBytes},
           {"seconds", diff.runSeconds},
           {"threads_each", diff.threadsEach},
           {"values", tensors}};
    return j;
}

std::string numericDiffText(const NumericDiff& diff) {
    std::ostringstream out;
    int compared = 0;
    for (const auto& t : diff.tensors) compared += t.compared ? 1 : 0;
    out << "numeric comparison on " << diff.inputSet << ", " << compared
        << " shared values compared in A's order (A the reference; element within |b - a| <= "
        << formatNumbers("%g + %g * |a|", diff.tolerance.atol, diff.tolerance.rtol) << ")\n";
    if (static_cast<int>(diff.tensors.size()) > compared)
        out << "  " << diff.tensors.size() - compared << " shared values not comparable";
    for (const auto& t : diff.tensors)
        if (!t.compared) {
            out << " (first: " << t.valueA << ": " << t.problem << ")";
            break;
        }
    if (static_cast<int>(diff.tensors.size()) > compared) out << "\n";
    if (diff.notProduced > 0)
        out << "  " << diff.notProduced << " shared values produced by one run only\n";
    out << "outputs: " << (diff.outputsWithinTolerance ? "within tolerance" : "DIFFER") << "\n";
    for (const auto& t : diff.tensors)
        if (t.graphOutput) out << "  " << t.valueA << ": " << figuresText(t) << "\n";
    if (diff.firstDivergence < 0) {
        out << "every shared value within tolerance\n";
    } else {
        const auto& t = diff.tensors[diff.firstDivergence];
        out << "first divergence: " << t.valueA << " from node " << t.nodeNameA << " (" << t.opTypeA
            << ")";
        if (!t.nodeNameB.empty() && t.nodeNameB != t.nodeNameA)
            out << " [B: " << t.nodeNameB << "]";
        out << "\n  " << figuresText(t) << ", " << t.outside << " elements outside\n";
        if (!diff.growthPath.empty()) {
            out << "error growth to the output " << diff.tensors[diff.growthPath.back()].valueA
                << " (relative error = RMS error / RMS of A):\n";
            const std::size_t shown = 16, count = diff.growthPath.size();
            for (std::size_t k = 0; k < count; ++k) {
                if (count > shown && k == shown / 2) {
                    out << "  ... " << count - shown << " more (--json lists all)\n";
                    k = count - shown / 2;
                }
                const auto& p = diff.tensors[diff.growthPath[k]];
                out << "  " << formatNumbers("%-10.3g", p.relativeError) << " "
                    << formatNumbers("max abs %-10.3g", p.figures.maxAbsError) << " SQNR "
                    << sqnrText(p.figures.sqnrDb) << "  " << p.nodeNameA << " (" << p.opTypeA
                    << ")\n";
            }
        }
    }
    if (!diff.topErrorAdded.empty()) {
        out << "top " << diff.topErrorAdded.size()
            << " nodes by error added (relative error of the output minus the inputs'):\n";
        for (int i : diff.topErrorAdded) {
            const auto& t = diff.tensors[i];
            out << "  " << formatNumbers("+%-10.3g", t.errorAdded) << " " << t.nodeNameA << " ("
                << t.opTypeA << ") -> " << t.valueA << ", SQNR " << sqnrText(t.figures.sqnrDb)
                << "\n";
        }
    }
    out << formatNumbers("%.2f s, both runs at once with %.0f threads each; ", diff.runSeconds,
                         diff.threadsEach)
        << formatNumbers("at most %.1f MB held waiting for the other run; ",
                         static_cast<double>(diff.peakPendingBytes) / 1e6)
        << formatNumbers("%.1f MB of weights shared by the two sessions\n",
                         static_cast<double>(diff.sharedWeightBytes) / 1e6);
    return out.str();
}

}  // namespace onnxlens::engine
