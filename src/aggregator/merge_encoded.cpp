// The pods list merged from the members' encoded items (merge.hpp,
// merge_encoded_pod_metrics): each member's run sorted, the runs merged with
// a heap into pieces that point into the members' buffers.
#include <algorithm>
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
  // run, the smallest on top.
  std::vector<std::size_t> next(runs.size(), 0);
  const auto after = [&](std::size_t a, std::size_t b) {  // run a's next item comes after run b's
    const k8s::EncodedItems::Item& x = runs[a].items[next[a]];
    const k8s::EncodedItems::Item& y = runs[b].items[next[b]];
    const std::string_view xn = runs[a].namespace_of(x), yn = runs[b].namespace_of(y);
    if (xn != yn) return xn > yn;
    const std::string_view xm = runs[a].name_of(x), ym = runs[b].name_of(y);
    if (xm != ym) return xm > ym;
    return a > b;
  };
  std::vector<std::size_t> heap;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!runs[r].items.empty()) heap.push_back(r);
  std::make_heap(heap.begin(), heap.end(), after);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const std::size_t r = heap.back();
    const k8s::EncodedItems::Item& item = runs[r].items[next[r]];
    list->pieces.emplace_back(runs[r].bytes.data() + item.begin, item.size + 1);  // with its ','
    if (++next[r] < runs[r].items.size()) {
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
