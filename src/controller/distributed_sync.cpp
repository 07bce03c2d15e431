#include "controller/distributed_sync.hpp"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/controller/federated_hpa_status.hpp"
#include "fedmetrics/controller/member_hpa.hpp"

namespace fedmetrics::controller {

namespace {

using async::Task;
using nlohmann::json;

std::optional<std::string> annotation_of(const json& object, std::string_view key) {
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return std::nullopt;
  const auto annotations = meta.value("annotations", json::object());
  if (!annotations.is_object()) return std::nullopt;
  const auto it = annotations.find(std::string(key));
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// What the sync knows of one member before the distributor runs.
struct Seen {
  const aggregator::MemberCluster* cluster = nullptr;  // null: not in the member set (left out or gone)
  std::shared_ptr<MemberHPAs> hpas;                    // null: cannot be written
  std::optional<json> existing;                        // its HPA of the FederatedHPA's name
  bool read = false;                                   // `existing` is what the member answered
};

std::string uid_of(const json& object) {
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return {};
  const auto uid = meta.find("uid");
  return uid != meta.end() && uid->is_string() ? uid->get<std::string>() : std::string();
}

std::shared_ptr<MemberHPAs> port_for(const DistributedContext& c, const aggregator::MemberCluster* cluster) {
  if (cluster == nullptr || c.member_hpas == nullptr || !*c.member_hpas) return nullptr;
  return (*c.member_hpas)(*cluster);
}

// Reads the member's HPA of `name` into `seen` (left unread when the member cannot be asked).
Task<void> read_member(Seen& seen, const std::string& namespace_name, const std::string& name) {
  if (!seen.hpas) co_return;
  auto got = co_await seen.hpas->get(namespace_name, name);
  if (!got) {
    spdlog::warn("autoscaler: {}/{}: cannot read the member HPA: {}", namespace_name, name, got.error().message);
    co_return;
  }
  seen.existing = std::move(*got);
  seen.read = true;
}

// Whether `member` has the target (distributed mode without a binding);
// nullopt when it cannot say (no port, an error), which is logged.
Task<std::optional<bool>> member_has_target(const DistributedContext& c, const aggregator::MemberCluster* member,
                                            const std::string& namespace_name,
                                            const autoscaler::CrossVersionObjectReference& target) {
  auto hpas = port_for(c, member);
  if (!hpas) co_return std::nullopt;
  auto has = co_await hpas->has_target(namespace_name, target);
  if (!has) {
    spdlog::warn("autoscaler: {}/{}: cannot tell whether {} has the target {}: {}", namespace_name, target.name,
                 member->name(), target.kind, has.error().message);
    co_return std::nullopt;
  }
  co_return *has;
}

// Carries out one member's plan; an error is logged and returned (the next
// sync decides again). A delete is of the object read (`uid`), not of one
// created under the name meanwhile.
Task<std::optional<std::string>> apply_plan(MemberHPAs& hpas, const MemberHPAPlan& plan,
                                            const std::string& namespace_name, const std::string& name,
                                            const std::string& uid) {
  std::optional<std::string> failure;
  if (plan.op == MemberHPAOp::Create || plan.op == MemberHPAOp::Update) {
    k8s::Expected<json> written = k8s::Error{""};
    if (plan.op == MemberHPAOp::Create) written = co_await hpas.create(plan.object);
    else written = co_await hpas.update(plan.object);
    if (!written) failure = written.error().message;
  } else if (plan.op == MemberHPAOp::Delete) {
    auto removed = co_await hpas.remove(namespace_name, name, uid);
    if (!removed) failure = removed.error().message;
  }
  co_return failure;
}

// One member's plan carried out: its HPA created, updated or deleted, or the
// refusal to touch one fedmetrics did not create noted. False when a write failed.
Task<bool> write_member(const DistributedContext& c, const json& object, const EventSubject& subject, const Seen& s,
                        const std::string& member, const autoscaler::MemberDecision& decision,
                        std::vector<Refusal>& refusals) {
  const std::string key = subject.namespace_name + "/" + subject.name;
  if (!s.hpas || !s.read) {
    if (decision.action != autoscaler::MemberAction::None)
      spdlog::warn("autoscaler: {}: member {} cannot be reached: its HPA is left as it is ({} due)", key, member,
                   autoscaler::to_string(decision.action));
    co_return true;
  }
  const auto plan = plan_member_hpa(object, member, decision, s.existing);
  if (plan.op == MemberHPAOp::Refuse) refusals.push_back({member, plan.message});
  if (plan.op == MemberHPAOp::Refuse || plan.op == MemberHPAOp::None) co_return true;
  co_await async::throw_if_cancelled();
  const std::string uid = s.existing ? uid_of(*s.existing) : std::string();
  const auto failure = co_await apply_plan(*s.hpas, plan, subject.namespace_name, subject.name, uid);
  c.monitor->observe_member_hpa_write(plan.op, !failure);
  if (!failure) co_return true;
  spdlog::warn("autoscaler: {}: member {}: {} of its HPA failed: {}", key, member, to_string(plan.op), *failure);
  const std::string message =
      std::string(to_string(plan.op)) + " of the HPA in member " + member + " failed: " + *failure;
  co_await async::throw_if_cancelled();
  c.control_plane->events->record({subject, "Warning", "FailedUpdateMemberHPA", message});
  co_return false;
}

// Deletes the member HPAs in `listed` that fedmetrics created; false when one could not be deleted.
Task<bool> delete_managed(AutoscalerMetrics& monitor, MemberHPAs& hpas, const std::string& namespace_name,
                          const std::vector<json>& listed, const std::string& key) {
  bool all = true;
  for (const auto& found : listed) {
    if (!managed_by_fedmetrics(found)) continue;
    const std::string found_name = found.value("metadata", json::object()).value("name", "");
    const std::string uid = uid_of(found);
    co_await async::throw_if_cancelled();
    const auto removed = co_await hpas.remove(namespace_name, found_name, uid);
    monitor.observe_member_hpa_write(MemberHPAOp::Delete, static_cast<bool>(removed));
    if (removed) spdlog::info("autoscaler: {}: left distributed mode: member HPA in {} deleted", key, hpas.member());
    else
      spdlog::warn("autoscaler: {}: cannot delete the member HPA in {}: {}", key, hpas.member(),
                   removed.error().message);
    all = all && static_cast<bool>(removed);
  }
  co_return all;
}

// Lists the member's HPAs of the FederatedHPA and deletes ours; false when that could not be done.
Task<bool> clean_member(const DistributedContext& c, const aggregator::MemberCluster& member,
                        const std::string& namespace_name, const k8s::LabelSelector& selector, const std::string& key) {
  auto hpas = port_for(c, &member);
  if (!hpas) co_return false;
  const auto listed = co_await hpas->list(namespace_name, selector);
  if (!listed) {
    spdlog::warn("autoscaler: {}: cannot list the member HPAs of {}: {}", key, member.name(), listed.error().message);
    co_return false;
  }
  const bool all = co_await delete_managed(*c.monitor, *hpas, namespace_name, *listed, key);
  co_return all;
}

// ---- the orphan sweep

// A member HPA fedmetrics created, as listed on its member.
struct Listed {
  std::shared_ptr<MemberHPAs> hpas;
  json hpa;
};

// One member's HPAs that fedmetrics created, appended to `found`; a member
// that cannot be asked is skipped (its turn comes at the next sweep).
Task<void> list_managed(const std::shared_ptr<MemberHPAs>& hpas, const k8s::LabelSelector& selector,
                        std::vector<Listed>& found) {
  const std::string all_namespaces;
  auto listed = co_await hpas->list(all_namespaces, selector);
  if (!listed) {
    spdlog::debug("autoscaler: orphan sweep: cannot list the member HPAs of {}: {}", hpas->member(),
                  listed.error().message);
    co_return;
  }
  for (auto& hpa : *listed) found.push_back({hpas, std::move(hpa)});
}

// Deletes one orphan, the object listed (its uid as precondition); true when it was deleted.
Task<bool> delete_orphan(AutoscalerMetrics& monitor, const Listed& orphan, const std::string& reason) {
  const auto meta = orphan.hpa.value("metadata", json::object());
  const std::string ns = meta.value("namespace", "");
  const std::string name = meta.value("name", "");
  const std::string uid = uid_of(orphan.hpa);
  co_await async::throw_if_cancelled();
  auto removed = co_await orphan.hpas->remove(ns, name, uid);
  monitor.observe_member_hpa_write(MemberHPAOp::Delete, static_cast<bool>(removed));
  if (!removed) {
    spdlog::warn("autoscaler: cannot delete the member HPA {}/{} in {} ({}): {}", ns, name, orphan.hpas->member(),
                 reason, removed.error().message);
    co_return false;
  }
  if (*removed)
    spdlog::info("autoscaler: deleted the member HPA {}/{} in {}: {}", ns, name, orphan.hpas->member(), reason);
  co_return *removed;
}

k8s::Labels labels_of(const json& object) {
  k8s::Labels out;
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return out;
  const auto labels = meta.value("labels", json::object());
  if (!labels.is_object()) return out;
  for (auto it = labels.begin(); it != labels.end(); ++it)
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  return out;
}

std::string key_of(const json& object) {
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return {};
  return meta.value("namespace", "") + "/" + meta.value("name", "");
}

// ---- the finalizer

std::vector<std::string> finalizers_of(const json& object) {
  std::vector<std::string> out;
  const auto meta = object.value("metadata", json::object());
  if (!meta.is_object()) return out;
  const auto list = meta.value("finalizers", json::array());
  if (!list.is_array()) return out;
  for (const auto& f : list)
    if (f.is_string()) out.push_back(f.get<std::string>());
  return out;
}

bool holds_finalizer(const json& object) {
  const auto list = finalizers_of(object);
  return std::find(list.begin(), list.end(), autoscaler::kMemberHPAsFinalizer) != list.end();
}

// Adds (`present`) or removes fedmetrics' finalizer, the other finalizers as
// read; conditional on the resourceVersion read. True when it is as asked.
Task<bool> set_finalizer(const DistributedContext& c, const json& object, const std::string& ns,
                         const std::string& name, bool present) {
  if (holds_finalizer(object) == present) co_return true;
  auto list = finalizers_of(object);
  if (present) list.emplace_back(autoscaler::kMemberHPAsFinalizer);
  else list.erase(std::remove(list.begin(), list.end(), autoscaler::kMemberHPAsFinalizer), list.end());
  const auto meta = object.value("metadata", json::object());
  const std::string resource_version = meta.is_object() ? meta.value("resourceVersion", "") : std::string();
  co_await async::throw_if_cancelled();
  auto written =
      co_await c.control_plane->federated_hpa_writer->set_finalizers(ns, name, std::move(list), resource_version);
  if (!written)
    spdlog::warn("autoscaler: {}/{}: cannot {} the finalizer {}: {}", ns, name, present ? "add" : "remove",
                 autoscaler::kMemberHPAsFinalizer, written.error().message);
  co_return static_cast<bool>(written);
}

// The scale target of a FederatedHPA as written, read leniently: an object
// being deleted is cleaned up even when its spec no longer decodes.
autoscaler::CrossVersionObjectReference target_of(const json& object) {
  autoscaler::CrossVersionObjectReference target;
  const auto spec = object.value("spec", json::object());
  const auto ref = spec.is_object() ? spec.value("scaleTargetRef", json::object()) : json::object();
  if (!ref.is_object()) return target;
  auto text = [&](const char* key) {
    const auto it = ref.find(key);
    return it != ref.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  target.kind = text("kind");
  target.name = text("name");
  target.api_version = text("apiVersion");
  return target;
}

}  // namespace

bool deleted_with_member_hpas(const json& object) {
  const auto meta = object.value("metadata", json::object());
  return meta.is_object() && meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null() &&
         holds_finalizer(object);
}

Task<std::size_t> collect_orphan_member_hpas(const DistributedContext& c, const k8s::LabelSelector& ours) {
  const auto selector = managed_member_hpas_selector();
  std::vector<Listed> found;
  auto snapshot = c.members->snapshot();
  for (const auto& m : snapshot->members) {
    auto hpas = port_for(c, m.get());
    if (!hpas) continue;
    co_await list_managed(hpas, selector, found);  // one co_await a turn (GCC 12)
  }
  if (found.empty()) co_return 0;
  // The FederatedHPAs after the member HPAs, from the server (a watch's
  // cache may lag): a sync writes the annotation that gives a member its
  // share before it creates that member's HPA, so every member HPA listed
  // above is known to the list below.
  const k8s::LabelSelector everything;
  auto federated = co_await c.control_plane->federated_hpas->list_from_server(everything);
  if (!federated) {
    spdlog::warn("autoscaler: orphan sweep: cannot list FederatedHPAs; nothing deleted: {}", federated.error().message);
    co_return 0;
  }
  std::map<std::string, const json*> by_key;
  for (const auto& object : *federated) by_key[key_of(object)] = &object;
  std::vector<std::pair<const Listed*, std::string>> orphans;
  for (const auto& listed : found) {
    const auto it = by_key.find(federated_hpa_key_of(listed.hpa));
    const json* federated_hpa = it == by_key.end() ? nullptr : it->second;
    const bool is_ours = federated_hpa != nullptr && ours.matches(labels_of(*federated_hpa));
    if (auto reason = orphan_reason(listed.hpa, listed.hpas->member(), federated_hpa, is_ours))
      orphans.emplace_back(&listed, std::move(*reason));
  }
  std::size_t deleted = 0;
  for (const auto& [orphan, reason] : orphans) {
    const bool removed = co_await delete_orphan(*c.monitor, *orphan, reason);  // one co_await a turn (GCC 12)
    if (removed) ++deleted;
  }
  co_return deleted;
}

Task<bool> sync_distributed(const DistributedContext& c, const json& object, const autoscaler::FederatedHPA& hpa,
                            const EventSubject& subject) {
  const std::string& ns = hpa.namespace_name;
  const std::string& name = hpa.name;
  const std::string key = ns + "/" + name;
  const auto& target = hpa.spec.scale_target_ref;

  // The previous shares: the annotation this loop wrote (a broken one is
  // logged and the shares come from the member HPAs as read).
  autoscaler::Shares previous;
  const auto previous_annotation = annotation_of(object, autoscaler::kDistributionAnnotation);
  if (previous_annotation) {
    auto parsed = autoscaler::parse_distribution_annotation(*previous_annotation);
    if (parsed) previous = std::move(*parsed);
    else spdlog::warn("autoscaler: {}: {}", key, parsed.error().message);
  }

  k8s::Expected<std::optional<std::vector<TargetCluster>>> hosts = std::optional<std::vector<TargetCluster>>();
  if (c.control_plane->placement) hosts = co_await c.control_plane->placement->target_clusters(ns, target);
  if (!hosts) {
    // Unlike the centralized sync (which only reads, and then asks every
    // member), this one writes: without the binding it would create member
    // HPAs where the target is not placed. Nothing is written this time.
    spdlog::warn("autoscaler: {}: cannot read the target's ResourceBinding; distributed sync skipped: {}", key,
                 hosts.error().message);
    co_return false;
  }
  auto snapshot = c.members->snapshot();
  // The members the target is placed on: the binding's, with their weights;
  // without a binding, every Ready member that has the target workload
  // (weight 1; a member that cannot say keeps its part if it had one, and a
  // NotReady one its share within the rebalance window).
  std::map<std::string, std::int32_t> weights;
  std::set<std::string> placed_members;
  if (*hosts) {
    for (const auto& h : **hosts) {
      weights[h.name] = h.replicas;
      placed_members.insert(h.name);
    }
  } else {
    for (const auto& m : snapshot->members) {
      const auto has = co_await member_has_target(c, m.get(), ns, target);  // one co_await a turn (GCC 12)
      if (has.value_or(previous.count(m->name()) > 0)) placed_members.insert(m->name());
    }
    for (const auto& left_out : snapshot->left_out)
      if (previous.count(left_out.name)) placed_members.insert(left_out.name);
  }
  auto placed = [&](const std::string& member) { return placed_members.count(member) > 0; };

  // Ready members (the member set) and NotReady ones (left out), placed ones only.
  std::map<std::string, Seen> seen;
  for (const auto& m : snapshot->members) {
    c.not_ready_since->erase(m->name());
    if (placed(m->name()) || previous.count(m->name())) seen[m->name()].cluster = m.get();
  }
  // A member that is neither Ready nor NotReady any more (gone from the
  // member set) is forgotten: the map stays as large as the member set.
  for (auto it = c.not_ready_since->begin(); it != c.not_ready_since->end();) {
    const bool still_left_out = std::any_of(snapshot->left_out.begin(), snapshot->left_out.end(),
                                            [&](const auto& left_out) { return left_out.name == it->first; });
    it = still_left_out ? std::next(it) : c.not_ready_since->erase(it);
  }
  // NotReady since when, copied now: other syncs update the shared map while this one awaits.
  std::map<std::string, k8s::Timestamp> not_ready;
  for (const auto& left_out : snapshot->left_out) {
    const auto since = c.not_ready_since->emplace(left_out.name, c.now).first->second;
    if (placed(left_out.name)) {
      not_ready[left_out.name] = since;
      seen[left_out.name];  // unreadable: its share stays within the rebalance window
    }
  }
  for (const auto& [member, share] : previous) seen[member];  // a member that left: its HPA is deleted if reachable

  for (auto& [member, s] : seen) {
    s.hpas = port_for(c, s.cluster);
    co_await read_member(s, ns, name);  // one co_await a turn (GCC 12)
  }

  autoscaler::DistributionInput input;
  input.spec = hpa.spec;
  input.previous = previous;
  input.rebalance_window = c.rebalance_window;
  input.now = c.now;
  input.previous_conditions = observed_status(object).status.conditions;
  std::vector<Refusal> refusals;
  for (auto& [member, s] : seen) {
    const bool is_candidate = (s.cluster != nullptr && placed(member)) || not_ready.count(member) > 0;
    if (!is_candidate) continue;  // not given: it has left
    if (s.read && s.existing && !managed_by_fedmetrics(*s.existing)) {
      // Another owner's HPA of that name: this member takes no part (no
      // share, not counted in n), so that the member HPAs that exist still
      // sum to maxReplicas. The refusal says so.
      const auto plan = plan_member_hpa(object, member, autoscaler::MemberDecision{}, s.existing);
      refusals.push_back({member, plan.message});
      continue;
    }
    autoscaler::DistributionMember m;
    m.name = member;
    if (auto w = weights.find(member); w != weights.end()) m.weight = w->second;
    if (auto since = not_ready.find(member); since != not_ready.end()) m.not_ready_since = since->second;
    if (s.read) observe_member_hpa(m, s.existing);
    else m.state = autoscaler::MemberHPAState::Unreadable;
    input.members.push_back(std::move(m));
  }
  auto distribution = autoscaler::distribute(input);
  bool ok = true;

  // The writes: none after the leadership term ended.
  if (distribution.valid) {
    // The finalizer before anything is created: a FederatedHPA deleted from
    // now on waits for its member HPAs and the retain label to be removed.
    const bool finalized = co_await set_finalizer(c, object, ns, name, true);
    if (!finalized) co_return false;
    // The annotation first: it is how the next sync knows the shares and how
    // the way back to centralized knows there are member HPAs to delete, so it
    // must not be missing when a member write below succeeds.
    if (!previous_annotation || *previous_annotation != distribution.annotation) {
      co_await async::throw_if_cancelled();
      std::optional<std::string> annotation = distribution.annotation;
      auto annotated =
          co_await c.control_plane->federated_hpa_writer->set_distribution_annotation(ns, name, annotation);
      if (!annotated) {
        spdlog::warn("autoscaler: {}: cannot write the distribution annotation; no member HPA written: {}", key,
                     annotated.error().message);
        co_return false;
      }
    }
    for (const auto& [member, decision] : distribution.members) {
      const bool written = co_await write_member(c, object, subject, seen[member], member, decision,
                                                 refusals);  // one co_await a turn (GCC 12)
      ok = ok && written;
    }
    // Karmada leaves each member's replica count to its HPA; the template follows their sum.
    co_await async::throw_if_cancelled();
    auto retained = co_await c.control_plane->scales->set_retain_replicas(ns, target, true);
    if (!retained)
      spdlog::warn("autoscaler: {}: cannot label the target to retain replicas: {}", key, retained.error().message);
    ok = ok && static_cast<bool>(retained);
  }

  co_await async::throw_if_cancelled();
  // Which spec this status answers for, as the centralized status says.
  distribution.status.observed_generation = hpa.generation;
  auto status = distributed_status_json(distribution, refusals, c.now);
  auto written = co_await c.control_plane->federated_hpa_writer->update_status(ns, name, status);
  if (!written) spdlog::warn("autoscaler: {}: cannot update status: {}", key, written.error().message);
  ok = ok && static_cast<bool>(written);
  // After the check: a term that ended during the write has forgotten the gauges (hpa_controller.cpp).
  co_await async::throw_if_cancelled();
  if (written)
    c.monitor->set_replicas(ns, name, distribution.status.current_replicas, distribution.status.desired_replicas);
  for (const auto& e : distribution.events)
    c.control_plane->events->record({subject, e.warning ? "Warning" : "Normal", e.reason, e.message});
  for (const auto& r : refusals)
    c.control_plane->events->record({subject, "Warning", std::string(kForeignMemberHPAReason), r.message});
  for (const auto& move : distribution.moves) {
    spdlog::info("autoscaler: {}: moved {} of maxReplicas from {} to {}", key, move.max_replicas, move.from, move.to);
    c.monitor->observe_rebalance();
  }
  co_return ok;
}

namespace {

// The way out of distributed mode, shared by leaving it and by a deletion:
// the member HPAs fedmetrics created deleted from the Ready members, the
// retain label removed, then the finalizer. `holders`: the members the
// annotation names (nullopt: a broken annotation, every member). A holder
// that is NotReady, or whose HPAs cannot be listed or deleted, stops it
// (false) when `wait_for_holders` (the centralized loop must not scale
// against a member HPA still there); otherwise (a deletion, which nothing
// scales after) such a holder is left to the orphan sweep, which deletes its
// member HPA once the member answers.
Task<bool> undo_distribution(const DistributedContext& c, const json& object, const std::string& ns,
                             const std::string& name, const autoscaler::CrossVersionObjectReference& target,
                             const std::optional<std::set<std::string>>& holders, bool wait_for_holders) {
  const std::string key = ns + "/" + name;
  const auto selector = member_hpa_selector(name);
  auto holds = [&](const std::string& member) { return !holders || holders->count(member) > 0; };
  bool clean = true;
  auto snapshot = c.members->snapshot();
  for (const auto& left_out : snapshot->left_out) {
    if (!holds(left_out.name)) continue;
    if (wait_for_holders) clean = false;
    else
      spdlog::info("autoscaler: {}: member {} is NotReady: its member HPA is deleted once it answers", key,
                   left_out.name);
  }
  for (const auto& m : snapshot->members) {
    const bool member_clean = co_await clean_member(c, *m, ns, selector, key);  // one co_await a turn (GCC 12)
    // Another member's failure is logged; only a holder's holds this up.
    if (holds(m->name()) && !member_clean) {
      if (wait_for_holders) clean = false;
      else
        spdlog::info("autoscaler: {}: member {} cannot be reached: its member HPA is deleted once it answers", key,
                     m->name());
    }
  }
  if (!clean) co_return false;
  if (!target.name.empty()) {
    co_await async::throw_if_cancelled();
    auto unlabelled = co_await c.control_plane->scales->set_retain_replicas(ns, target, false);
    if (!unlabelled) {
      spdlog::warn("autoscaler: {}: cannot remove the retain label from {} {}: {}", key, target.kind, target.name,
                   unlabelled.error().message);
      co_return false;
    }
  }
  const bool released = co_await set_finalizer(c, object, ns, name, false);
  co_return released;
}

// The members the distribution annotation names; nullopt when it is broken.
std::optional<std::set<std::string>> holders_of(const std::string& distribution_annotation) {
  auto shares = autoscaler::parse_distribution_annotation(distribution_annotation);
  if (!shares) return std::nullopt;
  std::set<std::string> holders;
  for (const auto& [member, share] : *shares) holders.insert(member);
  return holders;
}

}  // namespace

Task<bool> leave_distributed(const DistributedContext& c, const json& object, const autoscaler::FederatedHPA& hpa,
                             const std::string& distribution_annotation) {
  const auto holders = holders_of(distribution_annotation);
  const bool undone = co_await undo_distribution(c, object, hpa.namespace_name, hpa.name, hpa.spec.scale_target_ref,
                                                 holders, /*wait_for_holders=*/true);
  if (!undone) co_return false;
  co_await async::throw_if_cancelled();
  std::optional<std::string> none;
  auto unannotated =
      co_await c.control_plane->federated_hpa_writer->set_distribution_annotation(hpa.namespace_name, hpa.name, none);
  co_return static_cast<bool>(unannotated);
}

Task<bool> finish_deletion(const DistributedContext& c, const json& object, const EventSubject& subject) {
  const std::string key = subject.namespace_name + "/" + subject.name;
  // Without the annotation no member HPA was created (it is written first): only the label and the finalizer.
  const auto annotation = annotation_of(object, autoscaler::kDistributionAnnotation);
  const auto holders =
      annotation ? holders_of(*annotation) : std::optional<std::set<std::string>>(std::set<std::string>());
  const auto target = target_of(object);
  const bool done = co_await undo_distribution(c, object, subject.namespace_name, subject.name, target, holders,
                                               /*wait_for_holders=*/false);
  if (done)
    spdlog::info("autoscaler: {}: deleted: its member HPAs and the retain label of {} {} removed", key, target.kind,
                 target.name);
  co_return done;
}

}  // namespace fedmetrics::controller
