#include "fedmetrics/k8s/pod_cache.hpp"

namespace fedmetrics::k8s {

namespace {

std::string label_entry(const std::string& key, const std::string& value) { return key + "=" + value; }

// A pod as the cache keeps it: what the autoscaler reads.
Expected<Pod> decode(const nlohmann::json& object) {
  auto pod = pod_from_json(object);
  if (pod) pod->metadata.annotations.clear();
  return pod;
}

}  // namespace

Error PodCache::too_many(std::size_t count) {
  Error e{ErrorKind::TooLarge, std::to_string(count) + " pods, more than the " + std::to_string(max_pods_) +
                                   " the autoscaler keeps of one member and namespace"};
  pods_.clear();
  by_label_.clear();
  over_bound_ = e;
  return e;
}

void PodCache::index(const std::string& key, const Pod& pod) {
  for (const auto& [k, v] : pod.metadata.labels) by_label_[label_entry(k, v)].insert(key);
}

void PodCache::unindex(const std::string& key, const Pod& pod) {
  for (const auto& [k, v] : pod.metadata.labels) {
    auto it = by_label_.find(label_entry(k, v));
    if (it == by_label_.end()) continue;
    it->second.erase(key);
    if (it->second.empty()) by_label_.erase(it);
  }
}

Expected<std::vector<std::string>> PodCache::store_all(std::map<std::string, nlohmann::json> objects) {
  if (objects.size() > max_pods_) return too_many(objects.size());
  std::map<std::string, Pod> fresh;
  for (auto& [key, object] : objects) {
    auto pod = decode(object);
    if (!pod) return Error{pod.error().kind, key + ": " + pod.error().message};
    fresh.emplace(key, std::move(*pod));
  }
  std::vector<std::string> added;
  for (const auto& [key, pod] : fresh)
    if (!pods_.count(key)) added.push_back(key);
  pods_ = std::move(fresh);
  by_label_.clear();
  for (const auto& [key, pod] : pods_) index(key, pod);
  over_bound_.reset();
  return added;
}

Expected<bool> PodCache::store(const std::string& key, nlohmann::json object) {
  auto pod = decode(object);
  if (!pod) return Error{pod.error().kind, key + ": " + pod.error().message};
  auto it = pods_.find(key);
  if (it == pods_.end()) {
    if (pods_.size() + 1 > max_pods_) return too_many(pods_.size() + 1);
    index(key, *pod);
    pods_.emplace(key, std::move(*pod));
    return true;
  }
  unindex(key, it->second);
  it->second = std::move(*pod);
  index(key, it->second);
  return false;
}

void PodCache::drop(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  unindex(key, it->second);
  pods_.erase(it);
}

std::vector<Pod> PodCache::select(const LabelSelector& selector) const {
  // The candidates: the pods of the smallest index entry an equality of the
  // selector names (a workload's selector always has one); every pod without.
  const std::set<std::string>* candidates = nullptr;
  static const std::set<std::string> kNone;
  for (const auto& r : selector.requirements()) {
    const bool equality = r.op == SelectorOperator::Equals || r.op == SelectorOperator::DoubleEquals ||
                          (r.op == SelectorOperator::In && r.values.size() == 1);
    if (!equality || r.values.empty()) continue;
    auto it = by_label_.find(label_entry(r.key, r.values.front()));
    const auto* keys = it == by_label_.end() ? &kNone : &it->second;
    if (candidates == nullptr || keys->size() < candidates->size()) candidates = keys;
  }
  std::vector<Pod> out;
  auto consider = [&](const Pod& pod) {
    if (selector.matches(pod.metadata.labels)) out.push_back(pod);
  };
  if (candidates != nullptr) {
    for (const auto& key : *candidates) consider(pods_.at(key));
  } else {
    for (const auto& [key, pod] : pods_) consider(pod);
  }
  return out;
}

}  // namespace fedmetrics::k8s
