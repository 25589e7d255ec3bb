#include "onnxlens/layout/LayoutCache.h"

#include <charconv>
#include <map>
#include <utility>

namespace onnxlens {

namespace {

using Sizes = std::map<std::string, std::pair<double, double>>;

void appendNumber(std::string& key, double value) {
    // Exact (hexadecimal) so that two sizes differing in the last bit are two keys.
    char buffer[64];
    auto [end, error] =
        std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::hex);
    if (error == std::errc()) key.append(buffer, end);
    key.push_back(',');
}

void appendInteger(std::string& key, long long value) {
    key += std::to_string(value);
    key.push_back(',');
}

// `spec` with every nested graph whose size is known given as a plain node of that size, as
// computeLayout sizes it (the nested graph's size plus the node's own as padding). Returns
// whether every nested graph was known.
bool bakeNestedSizes(LayoutGraphSpec& spec, const Sizes& sizes) {
    bool all = true;
    for (auto& node : spec.nodes) {
        if (node.nestedGraph.empty()) continue;
        auto size = sizes.find(node.nestedGraph);
        if (size == sizes.end()) {
            all = false;
            continue;
        }
        node.width += size->second.first;
        node.height += size->second.second;
        node.nestedGraph.clear();
    }
    return all;
}

// What dot sees of a graph without nested graphs: the layout options, node sizes and ranks,
// edges by node position and their labels. Ids are left out. None for a graph dot would refuse
// (duplicate or unknown ids): it is laid out, and its error reported, as before.
std::optional<std::string> keyOf(const LayoutGraphSpec& spec, double labelFontSize,
                                 int fastModeNodeCount) {
    std::unordered_map<std::string, long long> position;
    std::string key;
    key.reserve(spec.nodes.size() * 40 + spec.edges.size() * 24);
    appendNumber(key, labelFontSize);
    appendInteger(key, fastModeNodeCount);
    appendInteger(key, static_cast<long long>(spec.nodes.size()));
    for (const auto& node : spec.nodes) {
        if (!node.nestedGraph.empty()) return std::nullopt;
        if (!position.emplace(node.id, static_cast<long long>(position.size())).second)
            return std::nullopt;
        appendNumber(key, node.width);
        appendNumber(key, node.height);
        appendInteger(key, static_cast<long long>(node.rank));
    }
    key.push_back('|');
    for (const auto& edge : spec.edges) {
        auto tail = position.find(edge.tail), head = position.find(edge.head);
        if (tail == position.end() || head == position.end()) return std::nullopt;
        appendInteger(key, tail->second);
        appendInteger(key, head->second);
        appendInteger(key, static_cast<long long>(edge.label.size()));
        key += edge.label;
    }
    return key;
}

std::size_t bytesOf(const std::string& key, const GraphPlacement& placement) {
    std::size_t bytes = key.size() + sizeof(GraphPlacement) + placement.id.size() +
                        placement.nodes.size() * sizeof(NodePlacement);
    for (const auto& edge : placement.edges)
        bytes += sizeof(EdgeRoute) + edge.spline.size() * sizeof(LayoutPoint);
    return bytes;
}

}  // namespace

LayoutCache::LayoutCache(std::size_t capacityBytes) : capacity_(capacityBytes) {}

LayoutCache& LayoutCache::shared() {
    static LayoutCache cache;
    return cache;
}

LayoutCache::Plan LayoutCache::plan(const LayoutRequest& request) {
    Plan plan;
    plan.requested = request.graphs.size();
    plan.found.resize(request.graphs.size());
    plan.missingIndex.assign(request.graphs.size(), -1);
    plan.specs = request.graphs;
    plan.labelFontSize = request.labelFontSize;
    plan.fastModeNodeCount = request.fastModeNodeCount;
    plan.missing.labelFontSize = request.labelFontSize;
    plan.missing.fastModeNodeCount = request.fastModeNodeCount;
    Sizes found;
    for (std::size_t i = 0; i < request.graphs.size(); ++i) {
        LayoutGraphSpec sent = request.graphs[i];
        if (bakeNestedSizes(sent, found)) {
            if (auto key = keyOf(sent, request.labelFontSize, request.fastModeNodeCount)) {
                if (auto hit = find(*key)) {
                    hit->id = sent.id;
                    found[sent.id] = {hit->width, hit->height};
                    plan.found[i] = std::move(*hit);
                    continue;
                }
            }
        }
        plan.missingIndex[i] = static_cast<int>(plan.missing.graphs.size());
        plan.missing.graphs.push_back(std::move(sent));
    }
    return plan;
}

Result<LayoutResult> LayoutCache::complete(const Plan& plan, const LayoutResult& computed) {
    if (computed.graphs.size() != plan.missing.graphs.size())
        return makeError("layout", "the result has " + std::to_string(computed.graphs.size()) +
                                       " graphs for a request of " +
                                       std::to_string(plan.missing.graphs.size()));
    LayoutResult result;
    Sizes sizes;
    for (std::size_t i = 0; i < plan.requested; ++i) {
        const LayoutGraphSpec& spec = plan.specs[i];
        if (plan.found[i]) {
            result.graphs.push_back(*plan.found[i]);
        } else {
            GraphPlacement placement =
                computed.graphs[static_cast<std::size_t>(plan.missingIndex[i])];
            if (placement.nodes.size() != spec.nodes.size() ||
                placement.edges.size() != spec.edges.size())
                return makeError("layout of graph '" + spec.id + "'",
                                 "the result does not match the request");
            placement.id = spec.id;
            LayoutGraphSpec effective = spec;
            if (bakeNestedSizes(effective, sizes))
                if (auto key = keyOf(effective, plan.labelFontSize, plan.fastModeNodeCount))
                    insert(std::move(*key), placement);
            result.graphs.push_back(std::move(placement));
        }
        sizes[spec.id] = {result.graphs.back().width, result.graphs.back().height};
    }
    return result;
}

std::optional<GraphPlacement> LayoutCache::find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = byKey_.find(key);
    if (it == byKey_.end()) return std::nullopt;
    entries_.splice(entries_.begin(), entries_, it->second);
    ++hits_;
    return it->second->placement;
}

void LayoutCache::insert(std::string key, const GraphPlacement& placement) {
    const std::size_t bytes = bytesOf(key, placement);
    if (bytes > capacity_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = byKey_.find(key); it != byKey_.end()) {
        bytes_ -= it->second->bytes;
        entries_.erase(it->second);
        byKey_.erase(it);
    }
    entries_.push_front(Entry{std::move(key), placement, bytes});
    byKey_.emplace(std::string_view(entries_.front().key), entries_.begin());
    bytes_ += bytes;
    while (bytes_ > capacity_ && !entries_.empty()) {
        bytes_ -= entries_.back().bytes;
        byKey_.erase(std::string_view(entries_.back().key));
        entries_.pop_back();
    }
}

std::size_t LayoutCache::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_.size();
}

std::size_t LayoutCache::hits() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hits_;
}

void LayoutCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
    byKey_.clear();
    bytes_ = 0;
}

}  // namespace onnxlens
