// The simulated control plane's storage, following what kubectl and client
// libraries can see of apiserver's generic registry
// (pkg/registry/generic/registry/store.go), rest.BeforeCreate/BeforeUpdate,
// the custom resource strategies, the PATCH handler (endpoints/handlers/patch.go)
// and the watch cache (pkg/storage/cacher).
//
// Locking. `Impl::mu` guards the objects, the history, the counter and the
// watch table. Every read-modify-write (update, patch) runs entirely under it,
// so PATCH needs no retry-on-conflict loop. Sinks are never called under `mu`:
// a change queues its events on each interested watch while still holding
// `mu`, so every watch's queue is in resourceVersion order; after releasing
// `mu` the changing thread drains those queues. A watch has at most one
// draining thread at a time (`Watch::draining`); a thread that finds another
// one draining leaves its events to it. So a sink sees its events in order,
// one call at a time, with no store lock held, and may read or write the store
// or unwatch itself. The price, compared with the header's wording: under
// contention an event can be delivered by whichever thread is already
// draining that watch, and the call that made the change may return before the
// sink has seen it. Lock order: `mu`, then a `Watch::mu` (a leaf).
//
// What the registry checks and sets on an object (names, uids, the checks
// of a body and their errors) is registry_rules.cpp's, which events a watch
// sees store_watch.cpp's.
#include "fedmetrics/sim/object_store.hpp"

#include "sim/registry_rules.hpp"
#include "sim/store_watch.hpp"

#include <algorithm>
#include <deque>
#include <random>
#include <thread>

namespace fedmetrics::sim {
namespace {

using detail::already_exists;
using detail::Change;
using detail::check_name;
using detail::generate_name;
using detail::has_finalizers;
using detail::invalid;
using detail::labels_of;
using detail::meta_generation;
using detail::meta_string;
using detail::ObjectKey;
using detail::ObjectPtr;
using detail::parse_rv;
using detail::patch_rejected;
using detail::random_uid;
using detail::shape_error;
using detail::tracked_content;
using detail::validation_error;
using detail::Watch;
using detail::without_directives;
using nlohmann::json;
using ObjectMap = std::map<ObjectKey, ObjectPtr>;  // its order is the list order

template <class Body>
StoreResult guarded(Body&& body) {
  // The store answers untrusted input: nothing may escape as an exception.
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {
    return k8s::Status::bad_request(e.what());
  } catch (const std::exception& e) {
    return k8s::Status::internal_error(e.what());
  }
}

}  // namespace

struct ObjectStore::Impl {
  using Pending = std::vector<std::shared_ptr<Watch>>;

  std::function<k8s::Timestamp()> clock;
  std::size_t history_limit = 0;

  mutable std::mutex mu;
  std::map<std::string, ResourceType> types;  // by "group/version/resource"
  std::map<std::string, ObjectMap> objects;   // by group_resource(): all versions share storage
  std::deque<Change> history;
  std::uint64_t rv = 1;  // as etcd, whose first revision is 1 with nothing stored
  std::map<std::uint64_t, std::shared_ptr<Watch>> watches;
  std::uint64_t last_watch_id = 0;
  std::mt19937_64 random{std::random_device{}()};

  static ObjectKey key_of(const ResourceType& type, std::string_view ns, std::string_view name) {
    return {type.namespaced ? std::string(ns) : std::string(), std::string(name)};
  }

  // Under mu: the stored object, or null.
  [[nodiscard]] ObjectPtr find(const ResourceType& type, const ObjectKey& key) const {
    auto bucket = objects.find(type.group_resource().to_string());
    if (bucket == objects.end()) return nullptr;
    auto found = bucket->second.find(key);
    return found == bucket->second.end() ? nullptr : found->second;
  }

  // Under mu: stores `object` (erases the key for DELETED) and records the change.
  void commit(const ResourceType& type, const ObjectKey& key, std::string event, ObjectPtr object, ObjectPtr previous,
              Pending& pending) {
    const std::string group_resource = type.group_resource().to_string();
    if (event == "DELETED") objects[group_resource].erase(key);
    else objects[group_resource][key] = object;
    record(Change{rv, group_resource, std::move(event), std::move(object), std::move(previous)}, pending);
  }

  // Runs `change` under mu, then delivers the events it queued with mu released.
  template <class Fn>
  StoreResult write(Fn&& change) {
    Pending pending;
    StoreResult result;
    {
      std::lock_guard lock(mu);
      result = change(pending);
    }
    deliver(pending);
    return result;
  }

  // Under mu: queues the change's events on the watches and keeps it in the history.
  void record(Change change, Pending& pending) {
    for (const auto& [id, watch] : watches) {
      auto event = watch->event_for(change);
      if (!event) continue;
      std::lock_guard lock(watch->mu);
      if (!watch->active) continue;
      watch->queue.push_back(std::move(*event));
      pending.push_back(watch);
    }
    if (history_limit == 0) return;
    history.push_back(std::move(change));
    while (history.size() > history_limit) history.pop_front();
  }

  // Not under mu. `owner`: the caller already set `draining` (a starting watch).
  void drain(const std::shared_ptr<Watch>& watch, bool owner) {
    std::unique_lock lock(watch->mu);
    if (!owner) {
      if (watch->draining) return;  // that thread delivers our events after its current one
      watch->draining = true;
      watch->deliverer = std::this_thread::get_id();
    }
    while (watch->active && !watch->queue.empty()) {
      WatchEvent event = std::move(watch->queue.front());
      watch->queue.pop_front();
      lock.unlock();
      bool more = false;
      try {
        more = watch->sink(event);
      } catch (...) {
        more = false;  // a sink that throws ends its watch, as returning false does
      }
      lock.lock();
      if (!more && watch->active) {
        watch->active = false;
        lock.unlock();  // mu comes before Watch::mu
        {
          std::lock_guard guard(mu);
          watches.erase(watch->id);
        }
        lock.lock();
      }
    }
    if (!watch->active) watch->queue.clear();
    watch->draining = false;
    watch->deliverer = {};
    watch->idle.notify_all();
  }

  void deliver(const Pending& pending) {
    for (const auto& watch : pending) drain(watch, false);
  }

  // Under mu: apiserver's update path (checkName, rest.BeforeUpdate, the
  // strategies' PrepareForUpdate, GuaranteedUpdate's no-op short-circuit)
  // against the stored object `old`.
  StoreResult replace(const ResourceType& type, const ObjectKey& key, ObjectPtr old, json object,
                      std::string_view subresource, Pending& pending) {
    if (auto error = check_name(type, key, object)) return *error;
    const std::string old_rv = meta_string(*old, "resourceVersion");
    if (const std::string want = meta_string(object, "resourceVersion"); !want.empty() && want != old_rv) {
      return k8s::Status::conflict(type.group_resource(), key.second,
                                   "the object has been modified; please apply your changes to the latest version "
                                   "and try again");
    }
    // BeforeUpdate keeps the stored uid when none is sent; ValidateObjectMetaUpdate rejects another one.
    if (const std::string uid = meta_string(object, "uid"); !uid.empty() && uid != meta_string(*old, "uid")) {
      return invalid(type, key.second, "metadata.uid", "FieldValueInvalid",
                     "Invalid value: " + k8s::detail::go_quote(uid) + ": field is immutable");
    }

    json next;
    if (subresource == "status") {
      // statusStrategy: only status comes from the request; ResetObjectMetaForStatus
      // keeps even labels and annotations.
      next = *old;
      if (auto status = object.find("status"); status != object.end() && !status->is_null()) {
        next["status"] = std::move(*status);
      } else {
        next.erase("status");
      }
    } else {
      next = std::move(object);
      if (type.defaults) type.defaults(next);
      if (type.status_subresource) {  // the main resource cannot change status
        if (auto status = old->find("status"); status != old->end()) next["status"] = *status;
        else next.erase("status");
      }
    }
    next["apiVersion"] = type.api_version();
    next["kind"] = type.kind;
    json& meta = next["metadata"];
    if (meta.is_null()) meta = json::object();
    meta["name"] = key.second;
    if (type.namespaced) meta["namespace"] = key.first;
    else meta.erase("namespace");
    const json& old_meta = old->at("metadata");
    // deletionTimestamp and its grace period are the registry's: an update
    // neither sets nor clears them.
    for (const char* field :
         {"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
      if (auto value = old_meta.find(field); value != old_meta.end()) meta[field] = *value;
      else meta.erase(field);
    }
    meta["resourceVersion"] = old_rv;
    if (tracked_content(next, type) != tracked_content(*old, type)) meta["generation"] = meta_generation(*old) + 1;
    if (auto error = validation_error(type, next)) return *error;
    // GuaranteedUpdate writes nothing when the bytes are unchanged: no new
    // resourceVersion, no watch event.
    if (next == *old) return next;

    meta["resourceVersion"] = std::to_string(++rv);
    // An object being deleted whose last finalizer is removed is deleted
    // now (the registry's deleteWithoutFinalizers after an update).
    const bool release = meta.contains("deletionTimestamp") && !has_finalizers(next);
    auto stored = std::make_shared<const json>(std::move(next));
    commit(type, key, release ? "DELETED" : "MODIFIED", stored, std::move(old), pending);
    return *stored;
  }
};

ObjectStore::ObjectStore(std::function<k8s::Timestamp()> clock, std::size_t history) : impl_(std::make_shared<Impl>()) {
  impl_->clock = std::move(clock);
  impl_->history_limit = history;
}

void ObjectStore::register_type(ResourceType type) {
  // Types are registered at start-up; a later registration of the same key
  // overwrites in place, under readers of find_type()'s pointer.
  std::lock_guard lock(impl_->mu);
  std::string key = type.group + "/" + type.version + "/" + type.resource;
  impl_->types.insert_or_assign(std::move(key), std::move(type));
}

const ResourceType* ObjectStore::find_type(std::string_view group, std::string_view version,
                                           std::string_view resource) const {
  std::lock_guard lock(impl_->mu);
  std::string key = std::string(group) + "/" + std::string(version) + "/" + std::string(resource);
  auto found = impl_->types.find(key);
  return found == impl_->types.end() ? nullptr : &found->second;  // map nodes do not move
}

std::vector<ResourceType> ObjectStore::types() const {
  std::lock_guard lock(impl_->mu);
  std::vector<ResourceType> out;
  for (const auto& [key, type] : impl_->types) out.push_back(type);
  return out;
}

// A status sent at create time is kept, also for types with a status
// subresource (the CRD strategy would drop it): the simulator seeds objects
// with their status this way.
StoreResult ObjectStore::create(const ResourceType& type, std::string_view namespace_name, json object) {
  return guarded([&]() -> StoreResult {
    if (auto error = shape_error(object)) return k8s::Status::bad_request(*error);
    if (!object.contains("metadata") || object["metadata"].is_null()) object["metadata"] = json::object();
    if (type.namespaced) {
      // rest.BeforeCreate: the path's namespace fills an empty one and must equal a given one.
      const std::string ns = meta_string(object, "namespace");
      if (!ns.empty() && ns != namespace_name) {
        return k8s::Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request");
      }
      if (namespace_name.empty()) {
        return invalid(type, meta_string(object, "name"), "metadata.namespace", "FieldValueRequired", "Required value");
      }
      object["metadata"]["namespace"] = namespace_name;
    } else {
      object["metadata"].erase("namespace");
    }
    if (!meta_string(object, "resourceVersion").empty()) {
      return k8s::Status::bad_request("resourceVersion should not be set on objects to be created");
    }
    // rest.BeforeCreate clears what only the registry sets.
    object["metadata"].erase("deletionTimestamp");
    object["metadata"].erase("deletionGracePeriodSeconds");
    if (type.defaults) type.defaults(object);
    const std::string created = k8s::format_time(impl_->clock());  // the caller's clock, outside the lock

    return impl_->write([&](Impl::Pending& pending) -> StoreResult {
      std::string name = meta_string(object, "name");
      if (name.empty()) {
        const std::string base = meta_string(object, "generateName");
        if (base.empty()) {
          return invalid(type, "", "metadata.name", "FieldValueRequired",
                         "Required value: name or generateName is required");
        }
        // apiserver answers a clash with AlreadyExists and lets the client
        // retry; under the lock we can simply draw again.
        do name = generate_name(base, impl_->random);
        while (impl_->find(type, Impl::key_of(type, namespace_name, name)));
      }
      const ObjectKey key = Impl::key_of(type, namespace_name, name);
      if (impl_->find(type, key)) return already_exists(type, name);

      object["apiVersion"] = type.api_version();
      object["kind"] = type.kind;
      json& meta = object["metadata"];
      meta["name"] = name;
      if (auto error = validation_error(type, object)) return *error;
      meta["uid"] = random_uid(impl_->random);
      meta["creationTimestamp"] = created;
      meta["generation"] = 1;
      meta["resourceVersion"] = std::to_string(++impl_->rv);
      auto stored = std::make_shared<const json>(std::move(object));
      impl_->commit(type, key, "ADDED", stored, nullptr, pending);
      return *stored;
    });
  });
}

StoreResult ObjectStore::get(const ResourceType& type, std::string_view namespace_name, std::string_view name) const {
  return guarded([&]() -> StoreResult {
    std::lock_guard lock(impl_->mu);
    const ObjectPtr found = impl_->find(type, Impl::key_of(type, namespace_name, name));
    if (!found) return k8s::Status::not_found(type.group_resource(), name);
    json out = *found;
    out["apiVersion"] = type.api_version();
    return out;
  });
}

StoreResult ObjectStore::list(const ResourceType& type, std::string_view namespace_name,
                              const k8s::LabelSelector& labels, const k8s::FieldSelector& fields) const {
  return guarded([&]() -> StoreResult {
    std::lock_guard lock(impl_->mu);
    json items = json::array();
    if (auto bucket = impl_->objects.find(type.group_resource().to_string()); bucket != impl_->objects.end()) {
      for (const auto& [key, object] : bucket->second) {
        if (type.namespaced && !namespace_name.empty() && key.first != namespace_name) continue;
        if (!fields_match(type.selectable_fields, fields, *object) || !labels.matches(labels_of(*object))) continue;
        items.push_back(*object);
        items.back()["apiVersion"] = type.api_version();
      }
    }
    return json{{"apiVersion", type.api_version()},
                {"kind", type.kind + "List"},
                {"metadata", {{"resourceVersion", std::to_string(impl_->rv)}}},
                {"items", std::move(items)}};
  });
}

StoreResult ObjectStore::update(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                                json object, std::string_view subresource) {
  return guarded([&]() -> StoreResult {
    if (!subresource.empty() && (subresource != "status" || !type.status_subresource)) {
      return k8s::Status::not_found_resource();  // no such route
    }
    // The handler checks the name before the registry looks the object up.
    const ObjectKey key = Impl::key_of(type, namespace_name, name);
    if (auto error = check_name(type, key, object)) return *error;
    return impl_->write([&](Impl::Pending& pending) -> StoreResult {
      ObjectPtr old = impl_->find(type, key);
      if (!old) return k8s::Status::not_found(type.group_resource(), name);
      return impl_->replace(type, key, std::move(old), std::move(object), subresource, pending);
    });
  });
}

StoreResult ObjectStore::patch(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                               PatchType patch_type, const json& patch, std::string_view subresource) {
  return guarded([&]() -> StoreResult {
    if (!subresource.empty() && (subresource != "status" || !type.status_subresource)) {
      return k8s::Status::not_found_resource();
    }
    // Patches that cannot be decoded are 400 (jsonpatch.DecodePatch, ErrBadJSONPatch).
    if (patch_type == PatchType::Json) {
      if (!patch.is_array() ||
          !std::all_of(patch.begin(), patch.end(), [](const json& op) { return op.is_object(); })) {
        return k8s::Status::bad_request("a JSON patch must be a list of operation objects");
      }
    } else if (!patch.is_object()) {
      return k8s::Status::bad_request("Invalid JSON Patch");
    }
    return impl_->write([&](Impl::Pending& pending) -> StoreResult {
      const ObjectKey key = Impl::key_of(type, namespace_name, name);
      ObjectPtr old = impl_->find(type, key);
      if (!old) return k8s::Status::not_found(type.group_resource(), name);
      json target = *old;
      target["apiVersion"] = type.api_version();  // the patch was written against this version
      switch (patch_type) {
        case PatchType::Merge: target.merge_patch(patch); break;
        case PatchType::Strategic: target.merge_patch(without_directives(patch)); break;
        case PatchType::Json: try { target.patch_inplace(patch);
          } catch (const nlohmann::json::exception& e) {
            return patch_rejected(e.what());
          }
          break;
      }
      // A patch may set metadata.resourceVersion: replace() then checks it as an update's precondition.
      return impl_->replace(type, key, std::move(old), std::move(target), subresource, pending);
    });
  });
}

StoreResult ObjectStore::remove(const ResourceType& type, std::string_view namespace_name, std::string_view name,
                                const DeletePreconditions& preconditions) {
  return guarded([&]() -> StoreResult {
    const std::string now = k8s::format_time(impl_->clock());  // the caller's clock, outside the lock
    return impl_->write([&](Impl::Pending& pending) -> StoreResult {
      const ObjectKey key = Impl::key_of(type, namespace_name, name);
      ObjectPtr old = impl_->find(type, key);
      if (!old) return k8s::Status::not_found(type.group_resource(), name);
      // kube-apiserver's wording (storage.Preconditions.Check), as a Conflict.
      const auto uid = meta_string(*old, "uid");
      if (preconditions.uid && *preconditions.uid != uid)
        return k8s::Status::conflict(
            type.group_resource(), name,
            "Precondition failed: UID in precondition: " + *preconditions.uid + ", UID in object meta: " + uid);
      const auto resource_version = meta_string(*old, "resourceVersion");
      if (preconditions.resource_version && *preconditions.resource_version != resource_version)
        return k8s::Status::conflict(
            type.group_resource(), name,
            "Precondition failed: ResourceVersion in precondition: " + *preconditions.resource_version +
                ", ResourceVersion in object meta: " + resource_version);
      // Finalizers: the object is only marked (deletionTimestamp, a MODIFIED
      // event) and stays until the controllers that put them there remove
      // them; a second delete changes nothing (the registry's
      // updateForGracefulDeletionAndFinalizers).
      if (has_finalizers(*old)) {
        if (old->at("metadata").contains("deletionTimestamp")) return *old;
        json marked = *old;
        marked["metadata"]["deletionTimestamp"] = now;
        marked["metadata"]["deletionGracePeriodSeconds"] = 0;
        marked["metadata"]["resourceVersion"] = std::to_string(++impl_->rv);
        auto stored = std::make_shared<const json>(std::move(marked));
        impl_->commit(type, key, "MODIFIED", stored, std::move(old), pending);
        return *stored;
      }
      // etcd3's Delete decodes the last state at the delete's revision; the DELETED event carries the same.
      json deleted = *old;
      deleted["metadata"]["resourceVersion"] = std::to_string(++impl_->rv);
      auto gone = std::make_shared<const json>(std::move(deleted));
      impl_->commit(type, key, "DELETED", gone, std::move(old), pending);
      json result = *gone;
      result["apiVersion"] = type.api_version();
      return result;
    });
  });
}

std::optional<std::uint64_t> ObjectStore::watch(const ResourceType& type, std::string namespace_name,
                                                k8s::LabelSelector labels, k8s::FieldSelector fields,
                                                std::string_view resource_version, WatchSink sink) {
  try {
    auto watch = std::make_shared<Watch>();
    watch->group_resource = type.group_resource().to_string();
    watch->api_version = type.api_version();
    watch->namespaced = type.namespaced;
    watch->namespace_name = std::move(namespace_name);
    watch->labels = std::move(labels);
    watch->fields = std::move(fields);
    watch->selectable = type.selectable_fields;
    watch->sink = std::move(sink);
    // This thread delivers the initial events, before any live one: live
    // changes from other threads only queue behind them.
    watch->draining = true;
    watch->deliverer = std::this_thread::get_id();

    std::optional<k8s::Status> error;
    {
      std::lock_guard lock(impl_->mu);
      if (resource_version.empty() || resource_version == "0") {
        if (auto bucket = impl_->objects.find(watch->group_resource); bucket != impl_->objects.end()) {
          for (const auto& [key, object] : bucket->second) {
            if (watch->matches(*object)) watch->queue.push_back(watch->make("ADDED", *object));
          }
        }
      } else if (auto from = parse_rv(resource_version); !from) {
        error = k8s::Status::bad_request("invalid resource version: " + k8s::detail::go_quote(resource_version));
      } else if (*from < impl_->rv && (impl_->history.empty() || *from + 1 < impl_->history.front().rv)) {
        // The watch cache's message: the requested version and the newest one it cannot replay from.
        const std::uint64_t oldest = impl_->history.empty() ? impl_->rv : impl_->history.front().rv - 1;
        error = k8s::Status{410,
                            "Expired",
                            "too old resource version: " + std::to_string(*from) + " (" + std::to_string(oldest) + ")",
                            {}};
      } else {
        watch->after = *from;  // also skips live events up to a future resourceVersion
        for (const Change& change : impl_->history) {
          if (auto event = watch->event_for(change)) watch->queue.push_back(std::move(*event));
        }
      }
      if (!error) {
        watch->id = ++impl_->last_watch_id;
        impl_->watches.emplace(watch->id, watch);
      }
    }
    if (error) {
      try {
        watch->sink(WatchEvent{"ERROR", error->to_json()});
      } catch (...) {}
      return std::nullopt;
    }
    impl_->drain(watch, true);
    std::lock_guard lock(watch->mu);
    if (!watch->active) return std::nullopt;
    return watch->id;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void ObjectStore::unwatch(std::uint64_t id) {
  std::shared_ptr<Watch> watch;
  {
    std::lock_guard lock(impl_->mu);
    auto found = impl_->watches.find(id);
    if (found == impl_->watches.end()) return;
    watch = found->second;
    impl_->watches.erase(found);
  }
  std::unique_lock lock(watch->mu);
  watch->active = false;
  watch->queue.clear();
  // Wait out a sink call in progress on another thread, so that the sink is
  // not running and never runs again once we return. A sink that unwatches its
  // own watch is that thread, and must not wait for itself.
  const auto self = std::this_thread::get_id();
  watch->idle.wait(lock, [&] { return !watch->draining || watch->deliverer == self; });
}

std::size_t ObjectStore::watch_count() const {
  std::lock_guard lock(impl_->mu);
  return impl_->watches.size();
}

std::uint64_t ObjectStore::resource_version() const {
  std::lock_guard lock(impl_->mu);
  return impl_->rv;
}

}  // namespace fedmetrics::sim
