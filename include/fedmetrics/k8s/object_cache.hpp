#pragma once
// What a list-then-watch client (client-go's Reflector and store) keeps of
// one collection: the objects by namespace/name and the resourceVersion to
// resume the watch from. Pure: fed the list body and then each watch event
// line as they arrive, so that the rules (410 Expired means list again, an
// ERROR event is the server's Status, a BOOKMARK only moves the
// resourceVersion) are unit-tested without sockets.
//
// WatchCache holds those rules; what is kept of each object is its
// subclass's: ObjectCache keeps the JSON as it came, k8s::PodCache
// (pod_cache.hpp) the few fields of a pod the autoscaler reads.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::k8s {

class WatchCache {
 public:
  virtual ~WatchCache() = default;

  // "namespace/name", or "name" for a cluster-scoped object.
  static std::string key_of(const nlohmann::json& object);

  // Replaces everything with the items of a List document (the answer to a
  // list), and takes its metadata.resourceVersion. Returns the keys that were
  // not there before. A body that is not a List leaves the cache unchanged;
  // one the subclass refuses (more objects than it may hold) leaves it as
  // the subclass says.
  Expected<std::vector<std::string>> replace(std::string_view list_body);

  struct EventOutcome {
    enum class Kind {
      Added,     // a new key
      Modified,  // an existing key changed (also ADDED for a key already held)
      Deleted,
      Bookmark,  // only the resourceVersion moved
      Expired,   // 410 Gone/Expired: the resourceVersion is too old, list again
      Failed,    // an ERROR event with any other Status, a line that is not a watch event, or an object refused
    };
    Kind kind = Kind::Failed;
    std::string key;      // Added, Modified, Deleted
    std::string message;  // Expired, Failed: why, for the log
  };
  // Applies one line of a watch stream ({"type": ..., "object": ...}).
  EventOutcome apply(std::string_view event_line);

  [[nodiscard]] const std::string& resource_version() const { return resource_version_; }
  [[nodiscard]] virtual std::size_t size() const = 0;

 protected:
  // Every object of a list, by key (each key once): the new content, or an
  // error (then the list is refused).
  virtual Expected<std::vector<std::string>> store_all(std::map<std::string, nlohmann::json> objects) = 0;
  // One object of an ADDED or MODIFIED event: whether its key is new, or an error.
  virtual Expected<bool> store(const std::string& key, nlohmann::json object) = 0;
  virtual void drop(const std::string& key) = 0;

 private:
  std::string resource_version_;
};

// The objects as they came, JSON.
class ObjectCache final : public WatchCache {
 public:
  [[nodiscard]] std::size_t size() const override { return objects_.size(); }
  // The object held under `key`, or null.
  [[nodiscard]] const nlohmann::json* find(const std::string& key) const {
    auto it = objects_.find(key);
    return it == objects_.end() ? nullptr : &it->second;
  }
  // Every object, ordered by key.
  [[nodiscard]] std::vector<nlohmann::json> items() const;

 protected:
  Expected<std::vector<std::string>> store_all(std::map<std::string, nlohmann::json> objects) override;
  Expected<bool> store(const std::string& key, nlohmann::json object) override;
  void drop(const std::string& key) override { objects_.erase(key); }

 private:
  std::map<std::string, nlohmann::json> objects_;
};

}  // namespace fedmetrics::k8s
