// The pods list merged from the members' encoded items (merge.hpp,
// merge_encoded_pod_metrics): each member's run sorted, the runs merged with
// a heap into pieces that point into the members' buffers.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aggregator/merge.hpp"

namespace fedmetrics::aggregator {

namespace {

// A member's items in namespace, name order, its own order kept among equals.
void sort_run(k8s::EncodedItems& run) {
  using Item = k8s::EncodedItems::Item;
  const auto before = [&run](const Item& a, const Item& b) {
    const std::string_view x = run.namespace_of(a), y = run.namespace_of(b);
    return x != y ? x < y : run.name_of(a) < run.name_of(b);
  };
  // metrics-server answers sorted already: then this is one pass.
  if (!std::is_sorted(run.items.begin(), run.items.end(), before))
    std::stable_sort(run.items.begin(), run.items.end(), before);
}

// A run's place in the merge.
struct Cursor {
  std::size_t next = 0;                 // its next item
  std::size_t namespace_rank = 0;       // of that item's namespace
  std::string_view name;                // that item's name
  std::array<std::uint64_t, 2> head{};  // the name's first 16 bytes, big-endian, zeros past its end
};

// Eight bytes of `s` from `at` as a big-endian number, zeros past its end:
// numbers that order as the texts do, unless the texts agree that far.
std::uint64_t big_endian(std::string_view s, std::size_t at) {
  std::uint64_t out = 0;
  for (std::size_t i = at; i < at + 8; ++i) out = out << 8 | (i < s.size() ? static_cast<unsigned char>(s[i]) : 0u);
  return out;
}

}  // namespace

std::shared_ptr<const k8s::ItemPreparation> item_preparation(std::string_view cluster,
                                                             std::shared_ptr<const ResourceMetricsQuery> query) {
  auto preparation = std::make_shared<k8s::ItemPreparation>();
  preparation->annotation_key = std::string(kQueryFromClusterAnnotation);
  preparation->annotation_value = std::string(cluster);
  preparation->keep = [query = std::move(query)](std::string_view namespace_name, std::string_view name) {
    return wanted(*query, namespace_name, name);
  };
  return preparation;
}

PodMetricsAnswer merge_encoded_pod_metrics(std::vector<MemberAnswer<k8s::EncodedItems>> answers,
                                           const ResourceMetricsQuery& /*query*/) {
  Gathered<k8s::EncodedItems> g = gather(std::move(answers), kMetricsGroup);
  if (g.all_failed) return {*g.all_failed, {}};
  auto list = std::make_shared<JsonList>();
  list->frame = k8s::pod_metrics_list_frame();
  // Reserved first: the pieces point into the runs where they will stay.
  list->runs.reserve(g.answered.size());
  std::size_t count = 0;
  for (auto& [cluster, run] : g.answered) {
    sort_run(run);
    count += run.items.size();
    list->runs.push_back(std::move(run));
  }
  const auto& runs = list->runs;
  list->pieces.reserve(count + 2);
  list->pieces.emplace_back(list->frame.first);
  // The runs merged as merge_resource_metrics' stable sort orders them: by
  // namespace and name, then member (the runs are in member-name order, and
  // so is a tie), then the member's own order. The heap holds one cursor per
  // run, the smallest on top. A cursor holds what most comparisons need as
  // numbers: its namespace's rank among the answer's namespaces (it changes
  // only where the run's namespace does) and the first 16 bytes of its name.
  std::vector<std::string_view> namespaces;
  for (const k8s::EncodedItems& run : runs)
    for (std::size_t i = 0; i < run.items.size(); ++i)
      if (i == 0 || run.namespace_of(run.items[i]) != run.namespace_of(run.items[i - 1]))
        namespaces.push_back(run.namespace_of(run.items[i]));
  std::sort(namespaces.begin(), namespaces.end());
  namespaces.erase(std::unique(namespaces.begin(), namespaces.end()), namespaces.end());
  std::vector<Cursor> cursors(runs.size());
  const auto point = [&](std::size_t r) {  // cursor r to its run's next item
    Cursor& c = cursors[r];
    const k8s::EncodedItems& run = runs[r];
    const k8s::EncodedItems::Item& item = run.items[c.next];
    const std::string_view ns = run.namespace_of(item);
    if (c.next == 0 || ns != run.namespace_of(run.items[c.next - 1]))
      c.namespace_rank =
          static_cast<std::size_t>(std::lower_bound(namespaces.begin(), namespaces.end(), ns) - namespaces.begin());
    c.name = run.name_of(item);
    c.head = {big_endian(c.name, 0), big_endian(c.name, 8)};
  };
  const auto after = [&](std::size_t a, std::size_t b) {  // run a's next item comes after run b's
    const Cursor& x = cursors[a];
    const Cursor& y = cursors[b];
    if (x.namespace_rank != y.namespace_rank) return x.namespace_rank > y.namespace_rank;
    if (x.head != y.head) return x.head > y.head;
    if (x.name != y.name) return x.name > y.name;
    return a > b;
  };
  std::vector<std::size_t> heap;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].items.empty()) continue;
    point(r);
    heap.push_back(r);
  }
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const std::size_t r = heap.back();
    const k8s::EncodedItems::Item& item = runs[r].items[cursors[r].next];
    list->pieces.emplace_back(runs[r].bytes.data() + item.begin, item.size + 1);  // with its ','
    if (++cursors[r].next < runs[r].items.size()) {
      point(r);
      std::push_heap(heap.begin(), heap.end(), after);
    } else {
      heap.pop_back();
    }
  }
  if (count > 0) list->pieces.back().remove_suffix(1);  // the last item has no ','
  list->pieces.emplace_back(list->frame.second);
  for (const std::string_view piece : list->pieces) list->bytes += piece.size();
  // Only the bytes are needed from here on.
  for (k8s::EncodedItems& run : list->runs) {
    run.keys = std::string();
    run.items = {};
  }
  PodMetricsAnswer answer{std::vector<k8s::PodMetrics>{}, std::move(g.warnings)};
  answer.json_list = std::move(list);
  return answer;
}

}  // namespace fedmetrics::aggregator
