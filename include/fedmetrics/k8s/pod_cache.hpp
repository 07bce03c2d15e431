#pragma once
// The pods of one namespace of one cluster as a watch keeps them for the
// autoscaler (client-go's pod informer and lister, which upstream's HPA
// controller reads): decoded into k8s::Pod, annotations left out, at most
// `max_pods` of them, and indexed by label so that a lookup by a workload's
// selector costs the pods it matches, not every pod of the namespace.
//
// A list or event that would hold more than `max_pods` is refused with an
// error naming both numbers, and the cache is emptied: a namespace too large
// for the bound is never half-known. Pure; its owner serialises access (the
// reflector's lock).
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/object_cache.hpp"
#include "fedmetrics/k8s/pod.hpp"

namespace fedmetrics::k8s {

class PodCache final : public WatchCache {
 public:
  explicit PodCache(std::size_t max_pods) : max_pods_(max_pods) {}

  [[nodiscard]] std::size_t size() const override { return pods_.size(); }
  // The pods `selector` matches, ordered by name.
  [[nodiscard]] std::vector<Pod> select(const LabelSelector& selector) const;
  // Why the cache is empty, when the last list or event was over the bound.
  [[nodiscard]] const std::optional<Error>& over_bound() const { return over_bound_; }

 protected:
  Expected<std::vector<std::string>> store_all(std::map<std::string, nlohmann::json> objects) override;
  Expected<bool> store(const std::string& key, nlohmann::json object) override;
  void drop(const std::string& key) override;

 private:
  void index(const std::string& key, const Pod& pod);
  void unindex(const std::string& key, const Pod& pod);
  Error too_many(std::size_t count);

  std::size_t max_pods_;
  std::map<std::string, Pod> pods_;                                     // by namespace/name
  std::map<std::string, std::set<std::string>, std::less<>> by_label_;  // "key=value" -> pod keys
  std::optional<Error> over_bound_;
};

}  // namespace fedmetrics::k8s
