#pragma once
// Placements of graphs already laid out, kept by what dot sees of them (node sizes and ranks,
// edges and their labels, in order; not the ids), so that laying out again what did not change
// costs nothing. After an edit the window rebuilds the tab's drawing from the edited model: the
// groups the edit did not touch come from here, and only the changed groups (and the groups
// holding them, whose boxes may have changed size) go to Graphviz. Ids are left out of the key,
// so a deleted node that renumbers the others does not change the key of an untouched group.
//
// A request is split in two (plan), the missing part is laid out as usual, and complete() puts
// the placements back in the request's order and keeps the new ones. Thread-safe.
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnxlens/layout/GraphLayout.h"
#include "onnxlens/model/Result.h"

namespace onnxlens {

class LayoutCache {
  public:
    explicit LayoutCache(std::size_t capacityBytes = std::size_t{64} << 20);

    // The process-wide cache the window's layouts share.
    static LayoutCache& shared();

    struct Plan {
        // What is left to lay out: the graphs not found, in the request's order. A nested graph
        // that was found is given to its holder as a plain node of that size.
        LayoutRequest missing;
        std::size_t requested = 0;  // graphs in the request
        // Per graph of the request: its placement when found; otherwise its index in `missing`.
        std::vector<std::optional<GraphPlacement>> found;
        std::vector<int> missingIndex;
        // What complete() needs to key the missing graphs once their nested sizes are known.
        std::vector<LayoutGraphSpec> specs;
        double labelFontSize = 9;
        int fastModeNodeCount = 600;
        bool complete() const { return missing.graphs.empty(); }
    };
    Plan plan(const LayoutRequest& request);

    // The whole request's result: found placements and `computed` (the result for plan.missing)
    // in the request's order; the computed ones are kept. Errors when `computed` does not match.
    Result<LayoutResult> complete(const Plan& plan, const LayoutResult& computed);

    std::size_t size() const;  // graphs kept
    std::size_t hits() const;  // graphs found since construction (tests, status line)
    void clear();

  private:
    struct Entry {
        std::string key;
        GraphPlacement placement;
        std::size_t bytes = 0;
    };
    std::optional<GraphPlacement> find(const std::string& key);
    void insert(std::string key, const GraphPlacement& placement);

    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::list<Entry> entries_;  // most recently used first
    std::unordered_map<std::string_view, std::list<Entry>::iterator> byKey_;  // keys in entries_
    std::size_t bytes_ = 0;
    std::size_t hits_ = 0;
};

}  // namespace onnxlens
