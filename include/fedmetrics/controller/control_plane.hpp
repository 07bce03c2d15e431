#pragma once
// The autoscaling loop's port to the Karmada control plane: the calls the
// FederatedHPA controller makes (list the FederatedHPAs, read and update the
// target's scale subresource, write the status subresource, record Events).
// src/main implements it over HTTPS; tests implement it in memory.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"

namespace fedmetrics::controller {

template <class T>
using Done = std::function<void(k8s::Expected<T>)>;

// autoscaling/v1 Scale, as far as the controller reads it.
struct Scale {
  std::int32_t spec_replicas = 0;
  std::int32_t status_replicas = 0;
  std::string selector;  // status.selector, a label selector string
  std::string resource_version;
};

// One member a ResourceBinding schedules the target to (spec.clusters[]),
// with the replicas placed there (with a Duplicated placement, the
// template's replicas in every member; 0 when the binding gives none).
struct TargetCluster {
  std::string name;
  std::int32_t replicas = 0;
  friend bool operator==(const TargetCluster&, const TargetCluster&) = default;
};

// Who an Event is about (an autoscaling.karmada.io/v1alpha1 object).
struct EventSubject {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string kind = "FederatedHPA";  // or CronFederatedHPA
};

class ControlPlane {
 public:
  virtual ~ControlPlane() = default;
  // Every FederatedHPA (all namespaces) matching `selector`, as JSON objects.
  virtual void list_federated_hpas(const k8s::LabelSelector& selector, Done<std::vector<nlohmann::json>> done) = 0;
  // Optional: from now on answer list_federated_hpas(selector) from a watch
  // (one list, then events) rather than a list per call, and call
  // `on_added` with each FederatedHPA not seen before (all of them at the
  // first list, then each one created), so that one the loop does not know
  // yet is synced at once instead of at the next tick. The default does
  // neither: the loop then lists at every tick.
  virtual void watch_federated_hpas(const k8s::LabelSelector& selector,
                                    std::function<void(nlohmann::json)> on_added) {
    (void)selector;
    (void)on_added;
  }
  // The same list read from the server, never from a watch's cache (which
  // can lag): for decisions that delete on what the list lacks.
  virtual void list_federated_hpas_from_server(const k8s::LabelSelector& selector, Done<std::vector<nlohmann::json>> done) {
    list_federated_hpas(selector, std::move(done));
  }
  // Ends that watch: no on_added after it returns.
  virtual void stop_watching() {}
  virtual void get_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                         Done<Scale> done) = 0;
  // Sets spec.replicas, conditional on `resource_version` (a conflict is an error).
  virtual void update_scale(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                            std::int32_t replicas, const std::string& resource_version, Done<Scale> done) = 0;
  // The member clusters Karmada scheduled the target to, with their replicas
  // (its ResourceBinding's spec.clusters), or nullopt when that is not known
  // (no binding): then every member is asked. The default knows none.
  virtual void get_target_clusters(const std::string& namespace_name,
                                   const autoscaler::CrossVersionObjectReference& target,
                                   Done<std::optional<std::vector<TargetCluster>>> done) {
    (void)namespace_name;
    (void)target;
    done(std::optional<std::vector<TargetCluster>>());
  }
  virtual void update_status(const std::string& namespace_name, const std::string& name, nlohmann::json status,
                             Done<bool> done) = 0;
  // type "Normal" or "Warning"; upstream reasons (SuccessfulRescale, FailedGetScale, ...).
  virtual void record_event(const EventSubject& subject, const std::string& type, const std::string& reason,
                            const std::string& message) = 0;

  // Distributed mode (docs/distributed-mode.md). The defaults refuse, so
  // that a control plane without them cannot run a distributed FederatedHPA.
  //
  // Sets (retain true) or removes (false) the label
  // resourcetemplate.karmada.io/retain-replicas: "true" on the target
  // template, a merge patch of that label alone: with it Karmada leaves each
  // member's replica count to the member's HPA. Removing it from a target
  // that no longer exists is done (false), not an error.
  virtual void set_retain_replicas(const std::string& namespace_name, const autoscaler::CrossVersionObjectReference& target,
                                   bool retain, Done<bool> done) {
    (void)namespace_name;
    (void)target;
    (void)retain;
    done(k8s::Error{"this control plane cannot label the target template"});
  }
  // Whether the target template carries that label (a write of its replica
  // count then does not take effect: Karmada keeps the members' counts and
  // the template follows their sum). The default knows no such label.
  virtual void get_retain_replicas(const std::string& namespace_name,
                                   const autoscaler::CrossVersionObjectReference& target, Done<bool> done) {
    (void)namespace_name;
    (void)target;
    done(false);
  }
  // Sets the FederatedHPA's metadata.finalizers to `finalizers` (the list as
  // read, with fedmetrics' own added or removed), conditional on
  // `resource_version` (a conflict is an error: the next sync reads again).
  virtual void set_federated_hpa_finalizers(const std::string& namespace_name, const std::string& name,
                                            std::vector<std::string> finalizers, const std::string& resource_version,
                                            Done<bool> done) {
    (void)namespace_name;
    (void)name;
    (void)finalizers;
    (void)resource_version;
    done(k8s::Error{"this control plane cannot write a FederatedHPA's finalizers"});
  }
  // Sets the FederatedHPA's autoscaling.fedmetrics.io/distribution annotation
  // to `value` (autoscaler::distribution_annotation), or removes it (nullopt),
  // a merge patch of that annotation alone.
  virtual void set_distribution_annotation(const std::string& namespace_name, const std::string& name,
                                           std::optional<std::string> value, Done<bool> done) {
    (void)namespace_name;
    (void)name;
    (void)value;
    done(k8s::Error{"this control plane cannot annotate the FederatedHPA"});
  }

  // Scheduled scaling (docs/cron.md). The defaults refuse, so that a
  // control plane without them runs no CronFederatedHPA.
  //
  // Optional: call `on_change` after each change a watch of the
  // CronFederatedHPAs matching `selector` sees (an object created, changed or
  // deleted), so that the loop looks again at once. The lists stay reads from
  // the server: a run is decided on the status as stored, never on a cache
  // that may lag a change of leader. stop_watching() ends it too.
  virtual void watch_cron_federated_hpas(const k8s::LabelSelector& selector, std::function<void()> on_change) {
    (void)selector;
    (void)on_change;
  }
  // Every CronFederatedHPA (all namespaces) matching `selector`.
  virtual void list_cron_federated_hpas(const k8s::LabelSelector& selector, Done<std::vector<nlohmann::json>> done) {
    (void)selector;
    done(k8s::Error{"this control plane serves no CronFederatedHPA"});
  }
  // One FederatedHPA as stored (for a rule's min/max against its current spec).
  virtual void get_federated_hpa(const std::string& namespace_name, const std::string& name, Done<nlohmann::json> done) {
    (void)namespace_name;
    (void)name;
    done(k8s::Error{"this control plane cannot read a FederatedHPA"});
  }
  // Sets the FederatedHPA's spec.minReplicas and spec.maxReplicas in one
  // write, conditional on `resource_version` (a conflict is an error: read
  // again and decide again).
  virtual void update_federated_hpa_replicas(const std::string& namespace_name, const std::string& name,
                                             std::int32_t min_replicas, std::int32_t max_replicas,
                                             const std::string& resource_version, Done<bool> done) {
    (void)namespace_name;
    (void)name;
    (void)min_replicas;
    (void)max_replicas;
    (void)resource_version;
    done(k8s::Error{"this control plane cannot update a FederatedHPA"});
  }
  // Writes the CronFederatedHPA's status subresource (executionHistories).
  virtual void update_cron_status(const std::string& namespace_name, const std::string& name, nlohmann::json status,
                                  Done<bool> done) {
    (void)namespace_name;
    (void)name;
    (void)status;
    done(k8s::Error{"this control plane cannot write a CronFederatedHPA's status"});
  }
};

// The plural resource and API group of a scale target's kind
// (Deployment -> deployments in apps), from its apiVersion and kind.
struct TargetResource {
  std::string group;
  std::string version;
  std::string resource;
};
TargetResource target_resource(const autoscaler::CrossVersionObjectReference& target);

}  // namespace fedmetrics::controller
