#pragma once
// Distributed mode (docs/distributed-mode.md): a FederatedHPA's
// minReplicas/maxReplicas split into one autoscaling/v2 HPA per member, each
// member's own HPA controller scaling its own pods, and maxReplicas moved from
// members with spare room to members pegged at their maximum.
//
// Pure: the members' HPAs as read, the previous shares and the time are
// inputs; the new shares with what to do to each member HPA, the moves, the
// Events, the aggregated status and the distribution annotation come out. The
// live loop and `fedmetrics simulate` both call distribute() once per sync.
//
// Invariants after every call that returns a valid distribution:
//   1. sum of member max = maxReplicas;
//   2. 1 <= min <= max for every member;
//   3. sum of member min = max(minReplicas, n);
//   4. the same inputs give the same outputs, in whatever order the members
//      come (ties are broken by member name).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fedmetrics/autoscaler/autoscaler.hpp"
#include "fedmetrics/autoscaler/hpa_spec.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::autoscaler {

inline constexpr std::string_view kModeAnnotation = "autoscaling.fedmetrics.io/mode";
inline constexpr std::string_view kDistributionAnnotation = "autoscaling.fedmetrics.io/distribution";
// The labels of a member HPA that fedmetrics created.
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kFederatedHPALabel = "autoscaling.fedmetrics.io/federatedhpa";
// Karmada leaves member replica counts to the members with this label on the template.
inline constexpr std::string_view kRetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas";
// On a FederatedHPA in distributed mode: deleting it waits until fedmetrics
// has deleted its member HPAs (those it can reach) and the retain label.
inline constexpr std::string_view kMemberHPAsFinalizer = "autoscaling.fedmetrics.io/member-hpas";

// Federation v1's forbidden window (--distributed-rebalance-window).
inline constexpr std::chrono::nanoseconds kDefaultRebalanceWindow = std::chrono::minutes(2);

enum class ScalingMode { Centralized, Distributed };

// The mode annotation's value: absent or "centralized" -> Centralized,
// "distributed" -> Distributed. Anything else (also "" and other casings:
// annotation values are case-sensitive like every Kubernetes enum) is an
// error whose message is the ScalingActive/InvalidMode condition's message.
k8s::Expected<ScalingMode> parse_scaling_mode(std::optional<std::string_view> annotation);

// One member's share of the FederatedHPA's min and max.
struct MemberShare {
  std::int32_t min_replicas = 1;
  std::int32_t max_replicas = 1;
  friend bool operator==(const MemberShare&, const MemberShare&) = default;
};
using Shares = std::map<std::string, MemberShare, std::less<>>;

// The distribution annotation: {"member1": {"minReplicas": 1, "maxReplicas": 6}, ...}.
std::string distribution_annotation(const Shares& shares);
// Errors say what is wrong; the loop then starts from the member HPAs as read.
k8s::Expected<Shares> parse_distribution_annotation(std::string_view text);

// A member HPA as read from its member: spec.minReplicas/maxReplicas and the status.
struct MemberHPA {
  std::int32_t min_replicas = 1;
  std::int32_t max_replicas = 1;
  std::int32_t current_replicas = 0;
  std::int32_t desired_replicas = 0;
  std::optional<Timestamp> last_scale_time;
  std::vector<HorizontalPodAutoscalerCondition> conditions;  // AbleToScale, ScalingActive, ScalingLimited
  std::vector<MetricStatus> current_metrics;
};

enum class MemberHPAState {
  Absent,      // the member has no HPA of that name: it is to be created
  Read,        // `hpa` holds what the member reported
  Unreadable,  // the member could not be asked: the share stays, no signal read
};

struct DistributionMember {
  std::string name;  // unique; with duplicates the first one given counts
  // The binding's replicas for a Divided placement, else 1; 0 counts as 1.
  std::int32_t weight = 1;
  // Absent: Ready. A member NotReady for less than the rebalance window keeps
  // its share; after that it has left. A NotReady member never joins.
  std::optional<Timestamp> not_ready_since;
  MemberHPAState state = MemberHPAState::Absent;
  MemberHPA hpa;  // meaningful when state == Read
};

struct DistributionInput {
  FederatedHPASpec spec;  // as written; minReplicas absent counts as 1
  // The shares of the previous sync (the distribution annotation); empty at
  // the first one. Members with a share here or an HPA read are the known
  // ones; the others join.
  Shares previous;
  std::vector<DistributionMember> members;  // any order
  std::chrono::nanoseconds rebalance_window = kDefaultRebalanceWindow;
  Timestamp now{};
  // The FederatedHPA's conditions before this sync: transition times carry over.
  std::vector<HorizontalPodAutoscalerCondition> previous_conditions;
};

enum class MemberAction { None, Create, Update, Delete };
std::string_view to_string(MemberAction action);

struct MemberDecision {
  MemberShare share;  // the share to write; for Delete, the last one known
  MemberAction action = MemberAction::None;
};

// maxReplicas moved from one member to another in this sync.
struct Move {
  std::string from;
  std::string to;
  std::int32_t max_replicas = 0;
  friend bool operator==(const Move&, const Move&) = default;
};

struct DistributionEvent {
  bool warning = false;  // Warning or Normal
  std::string reason;    // Rebalanced, InvalidDistribution
  std::string message;
};

struct Distribution {
  // False: maxReplicas < n (or minReplicas > maxReplicas): nothing is created
  // or changed, `members` is empty and `shares` are the previous ones.
  bool valid = true;
  std::map<std::string, MemberDecision, std::less<>> members;  // members that stay, join or leave
  Shares shares;                                               // after this sync, members that left excluded
  std::vector<Move> moves;                                     // in the order they were made
  std::vector<DistributionEvent> events;
  // currentReplicas, desiredReplicas, currentMetrics, lastScaleTime and the
  // AbleToScale / ScalingActive / ScalingLimited conditions, aggregated from
  // the member HPAs (ScalingLimited is also True, TooManyReplicas, while the
  // members run more than maxReplicas). MembersReachable once a member could
  // not be reached: False naming each member held (its share kept, its
  // replicas not counted) or left out (its share given to the others), True
  // once every one answers again; `events` has MemberHeld, MemberLeftOut and
  // MemberRejoined at each change (read back from the previous condition).
  FederatedHPAStatus status;
  std::string annotation;  // distribution_annotation(shares)
};

// One sync of a distributed FederatedHPA.
Distribution distribute(const DistributionInput& input);

// What a FederatedHPA whose mode annotation is invalid gets: nothing created
// (valid false, no members), ScalingActive False with reason InvalidMode and
// `message` (parse_scaling_mode's error), and a Warning Event.
Distribution invalid_mode(std::string message, std::vector<HorizontalPodAutoscalerCondition> previous_conditions,
                          Timestamp now);

// The initial split of `total` over members with these weights (0 counts as
// 1): largest remainder, ties by name, then no member left at 0. Exposed for
// the tests of the documented examples. `weights` keyed by member name.
std::map<std::string, std::int32_t, std::less<>> initial_split(
    std::int64_t total, const std::map<std::string, std::int32_t, std::less<>>& weights);

}  // namespace fedmetrics::autoscaler
