#pragma once
// Distributed mode's member HPAs as objects (docs/distributed-mode.md,
// "Decisions in detail"): the autoscaling/v2
// HorizontalPodAutoscaler fedmetrics writes to a member for a FederatedHPA and
// its share, what to do with the one the member has (create, update only when
// something differs, delete, nothing, or refuse one fedmetrics did not
// create), and what a member HPA says, read into the distributor's input.
// Pure: JSON in, JSON and decisions out; the loop does the I/O.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fedmetrics/autoscaler/distributor.hpp"
#include "fedmetrics/k8s/label_selector.hpp"

namespace fedmetrics::controller {

// The member HPA for `federated_hpa` (the FederatedHPA object as read) and
// `share`: named like it, in its namespace, with its scaleTargetRef, metrics
// (the Kubernetes default cpu 80 % Utilization when it has none, so that the
// member's defaulting does not make it differ at every sync) and behavior as
// written, the share's min and max, and the two labels.
nlohmann::json member_hpa_object(const nlohmann::json& federated_hpa, const autoscaler::MemberShare& share);

// The member HPAs fedmetrics created for the FederatedHPA `name` (its two
// labels), for MemberHPAs::list: what to delete when the mode annotation is
// removed or the FederatedHPA is gone, so that no member HPA is orphaned.
k8s::LabelSelector member_hpa_selector(std::string_view federated_hpa_name);

// Every member HPA fedmetrics created, whichever its FederatedHPA (the two
// labels, the second with any value): what the orphan sweep lists.
k8s::LabelSelector managed_member_hpas_selector();

// The namespace/name of the FederatedHPA a member HPA fedmetrics created
// belongs to (its namespace, its autoscaling.fedmetrics.io/federatedhpa
// label); empty when it carries no such label.
std::string federated_hpa_key_of(const nlohmann::json& hpa);

// The orphan sweep's verdict on a member HPA fedmetrics created (`hpa`, on
// `member`), given its FederatedHPA as the control plane has it
// (`federated_hpa`, null when there is none of that namespace and name) and
// whether this fedmetrics runs that FederatedHPA (`ours`: its
// --autoscaler-label-selector selects it). Why it is to be deleted, or
// nullopt to keep it:
// - no FederatedHPA: deleted (it was deleted, perhaps while this fedmetrics
//   was down or the member unreachable);
// - one another fedmetrics runs: kept, never ours to judge;
// - a distribution annotation that parses: kept when it gives `member` a
//   share, deleted otherwise (the member left while it could not be reached);
// - a broken annotation: kept (the next sync writes it again from the member
//   HPAs as read);
// - no annotation: kept in distributed mode (its sync writes one before any
//   member HPA), deleted otherwise (the way back to centralized had nothing
//   left to say which members hold one).
// An HPA fedmetrics did not create is always kept.
std::optional<std::string> orphan_reason(const nlohmann::json& hpa, std::string_view member,
                                         const nlohmann::json* federated_hpa, bool ours);

// True when `hpa` carries app.kubernetes.io/managed-by: fedmetrics. The name
// is the FederatedHPA's, so the label is what tells ours from another's.
bool managed_by_fedmetrics(const nlohmann::json& hpa);

enum class MemberHPAOp { None, Create, Update, Delete, Refuse };
std::string_view to_string(MemberHPAOp op);

struct MemberHPAPlan {
  MemberHPAOp op = MemberHPAOp::None;
  // Create: the object to POST. Update: the member's object with our spec and
  // labels, its metadata.resourceVersion kept (a conditional PUT).
  nlohmann::json object;
  // Refuse: why, naming the member and the object's owner (the condition's
  // and the Event's message).
  std::string message;
};

// What to do on `member` for the distributor's `decision`, given the HPA of
// that name the member has (`existing`, nullopt when it has none). Create
// when it is missing and the decision keeps the member; Update when its spec
// (scaleTargetRef, minReplicas, maxReplicas, metrics, behavior) or our labels
// differ from what fedmetrics would write; Delete only an HPA fedmetrics
// created; Refuse, whatever the decision, to touch one it did not create.
// A field the member's apiserver added by defaulting is not a difference.
MemberHPAPlan plan_member_hpa(const nlohmann::json& federated_hpa, std::string_view member,
                              const autoscaler::MemberDecision& decision,
                              const std::optional<nlohmann::json>& existing);

// The member's HPA as the distributor reads it: absent -> Absent, one
// fedmetrics did not create -> Unreadable (its share stays, its signals are
// not ours to read), else Read with spec.minReplicas (default 1),
// spec.maxReplicas, status.currentReplicas, desiredReplicas, lastScaleTime,
// conditions and currentMetrics. Missing or malformed fields are left at
// their zero value.
void observe_member_hpa(autoscaler::DistributionMember& member, const std::optional<nlohmann::json>& existing);
autoscaler::MemberHPA read_member_hpa(const nlohmann::json& hpa);

// The condition and Warning Event a FederatedHPA gets when member HPAs of its
// name were not created by fedmetrics.
inline constexpr std::string_view kForeignMemberHPAReason = "ForeignMemberHPA";
struct Refusal {
  std::string member;
  std::string message;  // MemberHPAPlan::message
};
// ScalingActive False, reason ForeignMemberHPA, the refusals' messages joined;
// nothing when `refusals` is empty.
void apply_refusals(autoscaler::FederatedHPAStatus& status, const std::vector<Refusal>& refusals,
                    autoscaler::Timestamp now);

// The FederatedHPA's status subresource after a distributed sync, in the
// shape the centralized loop writes (autoscaler::to_json): the distributor's
// aggregated status with the refusals applied.
nlohmann::json distributed_status_json(const autoscaler::Distribution& distribution,
                                       const std::vector<Refusal>& refusals, autoscaler::Timestamp now);

}  // namespace fedmetrics::controller
