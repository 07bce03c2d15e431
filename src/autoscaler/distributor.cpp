// The distributed mode's one sync: each member's share of minReplicas and
// maxReplicas (the initial split by weight, then the rebalancing towards the
// members that ask for more), and the Distribution it yields. The aggregated
// status is distributor_status.cpp's, the members that cannot be reached
// member_reachability.cpp's, the annotations distributor_annotations.cpp's.
#include "fedmetrics/autoscaler/distributor.hpp"

#include "autoscaler/distributor_parts.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace fedmetrics::autoscaler {

namespace {

using detail::kScalingActive;
using detail::kScalingLimited;
using detail::Member;
using detail::Reach;
using detail::UnreachedMembers;

// The largest-remainder split of `total` in proportion to `weights` (in
// member-name order): the floor of each exact share, then one more each to
// the largest fractional parts, ties by name (the lower index). All shares
// have the same denominator, so the fractional parts compare as remainders.
struct Split {
  std::vector<std::int64_t> shares;
  std::vector<std::int64_t> remainders;  // numerators of the fractional parts
};

Split largest_remainder(std::int64_t total, const std::vector<std::int64_t>& weights) {
  Split out{std::vector<std::int64_t>(weights.size(), 0), std::vector<std::int64_t>(weights.size(), 0)};
  const std::int64_t sum = std::accumulate(weights.begin(), weights.end(), std::int64_t{0});
  if (sum <= 0 || total <= 0) return out;
  std::int64_t left = total;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    // 128 bits: a hand-edited member HPA may hold a max near 2^31, and many
    // of them sum past 32 bits.
    const __int128 product = static_cast<__int128>(total) * weights[i];
    out.shares[i] = static_cast<std::int64_t>(product / sum);
    out.remainders[i] = static_cast<std::int64_t>(product % sum);
    left -= out.shares[i];
  }
  std::vector<std::size_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return out.remainders[a] > out.remainders[b]; });
  for (std::size_t k = 0; k < order.size() && left > 0; ++k, --left) ++out.shares[order[k]];
  return out;
}

// The index with the largest value, ties by the lower index (name order).
template <class Value>
std::size_t largest(const std::vector<std::size_t>& candidates, Value value) {
  std::size_t best = candidates.front();
  for (std::size_t i : candidates) {
    if (value(i) > value(best)) best = i;
  }
  return best;
}

// "Initial shares": largest remainder by weight, then while some member has
// 0, it gets 1 from the member with the largest share (ties by name).
Split initial_split_of(std::int64_t total, const std::vector<std::int64_t>& weights) {
  Split split = largest_remainder(total, weights);
  std::vector<std::size_t> all(weights.size());
  std::iota(all.begin(), all.end(), 0);
  for (std::size_t i = 0; i < split.shares.size(); ++i) {
    if (split.shares[i] != 0) continue;
    const std::size_t from = largest(all, [&](std::size_t k) { return split.shares[k]; });
    if (split.shares[from] < 2) break;  // total < n: not a valid distribution, never called so
    --split.shares[from];
    split.shares[i] = 1;
  }
  return split;
}

std::vector<std::int64_t> effective_weights(const std::vector<std::int32_t>& weights) {
  std::vector<std::int64_t> out;
  out.reserve(weights.size());
  // A weight of 0 counts as 1: every member with an HPA must be able to run a pod.
  for (auto w : weights) out.push_back(std::max<std::int64_t>(w, 1));
  return out;
}

// "Initial shares", the min part: M split by weight, then a member whose min
// exceeds its max keeps its max as min, and the excess goes one unit at a
// time to the member with the largest fractional part (then by name) that
// still has room below its max. Needs M <= sum of max.
void compute_mins(std::vector<Member>& members, std::int64_t total_min) {
  std::vector<std::int64_t> weights;
  for (const auto& m : members) weights.push_back(m.weight);
  Split split = initial_split_of(total_min, weights);
  std::int64_t excess = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    members[i].min = split.shares[i];
    if (members[i].min > members[i].max) {
      excess += members[i].min - members[i].max;
      members[i].min = members[i].max;
    }
  }
  std::vector<std::size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return split.remainders[a] > split.remainders[b]; });
  for (std::size_t i : order) {
    const std::int64_t room = members[i].max - members[i].min;
    const std::int64_t give = std::min(room, excess);
    members[i].min += give;
    excess -= give;
  }
}

// Its own calculation asked for more than its max at its last sync.
bool asks_above_max(const Member& m) {
  if (m.hpa == nullptr) return false;
  const auto* limited = find_condition(m.hpa->conditions, kScalingLimited);
  return limited != nullptr && limited->status == ConditionStatus::True && limited->reason == "TooManyReplicas";
}

// Wants more: ScalingLimited/TooManyReplicas and pegged at its max. Above
// its max counts as pegged too (its max was lowered below what it runs, and
// it still asks for more); the max is its share as decided so far in this
// sync, so a member given enough by a raise no longer asks the donors.
bool is_receiver(const Member& m) { return asks_above_max(m) && m.hpa->current_replicas >= m.max; }

std::int64_t spare_of(const Member& m) {
  if (m.hpa == nullptr) return 0;  // nothing read: we do not know what it runs
  const std::int64_t used =
      std::max({m.min, std::int64_t{m.hpa->current_replicas}, std::int64_t{m.hpa->desired_replicas}});
  return std::max<std::int64_t>(0, m.max - used);
}

struct Rebalancer {
  std::vector<Member>& members;
  const DistributionInput& input;
  std::vector<Move>& moves;
  std::vector<DistributionEvent>& events;

  // A donor: not a receiver, its HPA read, and its last scale absent or at
  // least the rebalance window ago (Federation v1's forbidden window: a
  // member that scaled within it may still need its room). Nor a member
  // that still says TooManyReplicas while below its max: it was just given
  // more and has not scaled to it yet; taking that back would move the same
  // replicas to and fro between two members that both want more.
  bool is_donor(std::size_t i) const {
    const Member& m = members[i];
    if (m.hpa == nullptr || asks_above_max(m)) return false;  // every receiver asks above its max
    return !m.hpa->last_scale_time || input.now - *m.hpa->last_scale_time >= input.rebalance_window;
  }

  // Takes up to `want` of maxReplicas from the donors' spare for member `to`,
  // largest spare first (ties by name), each at most its spare; records the
  // moves and the Rebalanced Event. Returns what it got.
  std::int64_t take_from_donors(std::size_t to, std::int64_t want) {
    std::vector<std::pair<std::string, std::int64_t>> given;
    std::int64_t got = 0;
    while (got < want) {
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (i == to || !is_donor(i) || spare_of(members[i]) <= 0) continue;
        if (!best || spare_of(members[i]) > spare_of(members[*best])) best = i;
      }
      if (!best) break;
      const std::int64_t take = std::min(spare_of(members[*best]), want - got);
      members[*best].max -= take;
      got += take;
      given.emplace_back(members[*best].name, take);
    }
    members[to].max += got;
    record(to, given);
    return got;
  }

  // The Rebalanced Event: each donor with the max it has left ("now"), and
  // with what it gave when there are several: "from member2 (now 1) to
  // member1 (now 5)", "from member2 (gave 2, now 1), member3 (gave 1, now 2)
  // to member1 (now 6)". A bare "(2)" read as what member2 has left.
  void record(std::size_t to, const std::vector<std::pair<std::string, std::int64_t>>& given) {
    if (given.empty()) return;
    std::int64_t total = 0;
    std::string from;
    for (const auto& [name, n] : given) {
      moves.push_back({name, members[to].name, static_cast<std::int32_t>(n)});
      total += n;
      // A structured binding is not captured by name (clang 14, which the fuzz build uses, refuses it).
      const auto donor = std::find_if(members.begin(), members.end(),
                                      [&donor_name = name](const Member& m) { return m.name == donor_name; });
      const std::string left = donor == members.end() ? std::string() : "now " + std::to_string(donor->max);
      from += (from.empty() ? "" : ", ") + name + " (" +
              (given.size() > 1 ? "gave " + std::to_string(n) + (left.empty() ? "" : ", ") : std::string()) + left +
              ")";
    }
    events.push_back({false, "Rebalanced",
                      "moved " + std::to_string(total) + " of maxReplicas from " + from + " to " + members[to].name +
                          " (now " + std::to_string(members[to].max) + ")"});
  }
};

// maxReplicas lowered by `amount`: from spare first (largest spare first,
// ties by name), then from every member in proportion to its max - min,
// never below its min; then, if the sum of min still exceeds the new max,
// min and max together in proportion to min - 1, never below 1.
void lower(std::vector<Member>& members, std::int64_t amount) {
  while (amount > 0) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (spare_of(members[i]) > 0 && (!best || spare_of(members[i]) > spare_of(members[*best]))) best = i;
    }
    if (!best) break;
    const std::int64_t take = std::min(spare_of(members[*best]), amount);
    members[*best].max -= take;
    amount -= take;
  }
  if (amount <= 0) return;
  std::vector<std::int64_t> room;
  for (const auto& m : members) room.push_back(m.max - m.min);
  const std::int64_t total_room = std::accumulate(room.begin(), room.end(), std::int64_t{0});
  // Each share of a largest-remainder split of at most the weights' sum is
  // at most its weight: nobody goes below its min.
  Split split = largest_remainder(std::min(amount, total_room), room);
  for (std::size_t i = 0; i < members.size(); ++i) members[i].max -= split.shares[i];
  amount -= std::min(amount, total_room);
  if (amount <= 0) return;
  std::vector<std::int64_t> above_one;
  for (const auto& m : members) above_one.push_back(m.min - 1);
  split = largest_remainder(amount, above_one);
  for (std::size_t i = 0; i < members.size(); ++i) {
    members[i].min -= split.shares[i];
    members[i].max -= split.shares[i];
  }
}

// `amount` of maxReplicas to give (a raise, or what members that left had):
// receivers first, split equally in name order; with no receiver, in
// proportion to the current member max (largest remainder, ties by name).
void give(std::vector<Member>& members, std::int64_t amount) {
  if (amount <= 0 || members.empty()) return;
  std::vector<std::size_t> receivers;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (is_receiver(members[i])) receivers.push_back(i);
  }
  if (!receivers.empty()) {
    const auto count = static_cast<std::int64_t>(receivers.size());
    for (std::size_t k = 0; k < receivers.size(); ++k) {
      members[receivers[k]].max += amount / count + (static_cast<std::int64_t>(k) < amount % count ? 1 : 0);
    }
    return;
  }
  std::vector<std::int64_t> weights;
  for (const auto& m : members) weights.push_back(m.max);
  Split split = largest_remainder(amount, weights);
  for (std::size_t i = 0; i < members.size(); ++i) members[i].max += split.shares[i];
}

// The members run more replicas than maxReplicas (a member that rejoined
// with the pods it kept running while its share was given to the others, or
// maxReplicas lowered): their HPAs scale down to their new shares. Upstream's
// HPA says TooManyReplicas when it holds more than its maximum; the message
// names who is above its share. Nullopt when within maxReplicas.
std::optional<std::string> above_max(const std::vector<Member>& members, const FederatedHPAStatus& status,
                                     std::int64_t max_replicas) {
  if (status.current_replicas <= max_replicas) return std::nullopt;
  std::vector<std::string> above;
  for (const auto& m : members) {
    if (m.hpa != nullptr && m.hpa->current_replicas > m.max)
      above.push_back(m.name + " runs " + std::to_string(m.hpa->current_replicas) + " with a max of " +
                      std::to_string(m.max));
  }
  return "the members run " + std::to_string(status.current_replicas) + " replicas, more than maxReplicas " +
         std::to_string(max_replicas) + ", until their HPAs scale down to their shares (" + detail::join_names(above) +
         ")";
}

}  // namespace

Distribution invalid_mode(std::string message, std::vector<HorizontalPodAutoscalerCondition> previous_conditions,
                          Timestamp now) {
  Distribution out;
  out.valid = false;
  out.status.conditions = std::move(previous_conditions);
  set_condition(out.status.conditions, kScalingActive, ConditionStatus::False, "InvalidMode", message, now);
  out.events.push_back({true, "InvalidMode", std::move(message)});
  return out;
}

std::string_view to_string(MemberAction action) {
  switch (action) {
    case MemberAction::None: return "none";
    case MemberAction::Create: return "create";
    case MemberAction::Update: return "update";
    case MemberAction::Delete: return "delete";
  }
  return "none";
}

std::map<std::string, std::int32_t, std::less<>> initial_split(
    std::int64_t total, const std::map<std::string, std::int32_t, std::less<>>& weights) {
  std::vector<std::int32_t> w;
  for (const auto& [name, weight] : weights) w.push_back(weight);
  Split split = initial_split_of(total, effective_weights(w));
  std::map<std::string, std::int32_t, std::less<>> out;
  std::size_t i = 0;
  for (const auto& [name, weight] : weights) out[name] = static_cast<std::int32_t>(split.shares[i++]);
  return out;
}

Distribution distribute(const DistributionInput& input) {
  Distribution out;
  const std::int64_t max_replicas = input.spec.max_replicas;
  const std::int64_t min_replicas = input.spec.min_replicas.value_or(1);

  // The members by name: the order they come in never matters (invariant 4).
  std::map<std::string, const DistributionMember*, std::less<>> given;
  for (const auto& m : input.members) given.emplace(m.name, &m);

  auto known = [&](const DistributionMember& m) {
    return input.previous.count(m.name) > 0 || m.state == MemberHPAState::Read;
  };
  std::vector<Member> members;  // those that stay or join, in name order
  std::map<std::string, MemberShare, std::less<>> left;
  UnreachedMembers unreached;
  for (const auto& [name, m] : given) {
    if (m->not_ready_since) {
      const bool within_window = input.now - *m->not_ready_since < input.rebalance_window;
      // A NotReady member never joins; one NotReady for the whole window has left.
      if (!known(*m)) {
        unreached[name] = {Reach::LeftOut, m->not_ready_since};
        continue;
      }
      if (!within_window) {
        auto prev = input.previous.find(name);
        left[name] =
            prev != input.previous.end() ? prev->second : MemberShare{m->hpa.min_replicas, m->hpa.max_replicas};
        unreached[name] = {Reach::LeftOut, m->not_ready_since};
        continue;
      }
      unreached[name] = {Reach::Held, m->not_ready_since};
    } else if (m->state == MemberHPAState::Unreadable && known(*m)) {
      unreached[name] = {Reach::Held, std::nullopt};
    }
    Member member;
    member.name = name;
    member.weight = std::max<std::int64_t>(m->weight, 1);
    member.input = m;
    if (m->state == MemberHPAState::Read) member.hpa = &m->hpa;
    members.push_back(std::move(member));
  }
  for (const auto& [name, share] : input.previous) {
    if (!given.count(name)) left[name] = share;
  }
  const auto n = static_cast<std::int64_t>(members.size());

  if (min_replicas > max_replicas || max_replicas < n) {
    // Nothing is created or changed: the member HPAs keep scaling within
    // their shares until the spec can be distributed again.
    out.valid = false;
    out.shares = input.previous;
    out.annotation = distribution_annotation(out.shares);
    out.status = detail::aggregate_status(input, members);
    std::string message = min_replicas > max_replicas
                              ? "minReplicas " + std::to_string(min_replicas) + " is greater than maxReplicas " +
                                    std::to_string(max_replicas)
                              : "maxReplicas " + std::to_string(max_replicas) + " is less than the " +
                                    std::to_string(n) +
                                    " members: distributed mode needs maxReplicas >= " + std::to_string(n) +
                                    " (at least one replica per member)";
    set_condition(out.status.conditions, kScalingActive, ConditionStatus::False, "InvalidDistribution", message,
                  input.now);
    out.events.push_back({true, "InvalidDistribution", std::move(message)});
    detail::note_reachability(out, input, unreached, left, members);
    return out;
  }

  // The shares the known members have now: what their HPA says when read
  // (a member is the truth about itself: fedmetrics may have been away),
  // else the previous shares. Out-of-range values are pulled into 1 <= min <= max.
  bool any_known = false;
  for (auto& m : members) {
    std::optional<MemberShare> current;
    if (m.hpa != nullptr) {
      current = MemberShare{m.hpa->min_replicas, m.hpa->max_replicas};
    } else if (auto prev = input.previous.find(m.name); prev != input.previous.end()) {
      current = prev->second;
    }
    if (!current) {
      m.joined = true;
      continue;
    }
    any_known = true;
    m.max = std::max<std::int64_t>(current->max_replicas, 1);
    m.min = std::clamp<std::int64_t>(current->min_replicas, 1, m.max);
  }
  const std::int64_t total_min = std::max(min_replicas, n);

  Rebalancer rebalancer{members, input, out.moves, out.events};

  if (!any_known) {
    // "Initial shares": maxReplicas by weight, then the mins.
    std::vector<std::int64_t> weights;
    for (const auto& m : members) weights.push_back(m.weight);
    Split split = initial_split_of(max_replicas, weights);
    for (std::size_t i = 0; i < members.size(); ++i) members[i].max = split.shares[i];
    compute_mins(members, total_min);
  } else {
    // What the known members hold against the spec's maxReplicas: members
    // that left free their max, a raised or lowered spec adds or takes.
    std::int64_t known_max = 0;
    for (const auto& m : members) {
      if (!m.joined) known_max += m.max;
    }
    std::int64_t pool = max_replicas - known_max;
    std::vector<Member> known_members;
    if (pool < 0) {
      // Lowered first, so that members joining in the same sync are not
      // given what is taken back at once.
      std::vector<std::size_t> index;
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (!members[i].joined) index.push_back(i);
      }
      for (std::size_t i : index) known_members.push_back(members[i]);
      lower(known_members, -pool);
      for (std::size_t k = 0; k < index.size(); ++k) members[index[k]] = known_members[k];
      pool = 0;
    }
    // Joins, in name order: max(1, floor(maxReplicas / n)), from what is free
    // first (a member that left and one that joins in the same sync: the new
    // one takes the old one's place), then from the donors' spare.
    for (std::size_t j = 0; j < members.size(); ++j) {
      if (!members[j].joined) continue;
      const std::int64_t target = std::max<std::int64_t>(1, max_replicas / n);
      members[j].min = 1;
      members[j].max = std::min(pool, target);
      pool -= members[j].max;
      rebalancer.take_from_donors(j, target - members[j].max);
      if (members[j].max == 0) {
        // Short of spare: the missing unit from the member with the largest
        // max - min (ties by name). When every member is at its min, from the
        // largest max, its min lowered with it; the mins are computed again below.
        std::optional<std::size_t> from;
        for (std::size_t i = 0; i < members.size(); ++i) {
          if (i == j || members[i].max == 0) continue;
          if (!from || members[i].max - members[i].min > members[*from].max - members[*from].min) from = i;
        }
        if (from && members[*from].max - members[*from].min == 0) {
          for (std::size_t i = 0; i < members.size(); ++i) {
            if (i != j && members[i].max > members[*from].max) from = i;
          }
          members[*from].min = std::max<std::int64_t>(1, members[*from].min - 1);
        }
        if (from) {
          --members[*from].max;
          ++members[j].max;
          rebalancer.record(j, {{members[*from].name, 1}});
        }
      }
    }
    // Raised, or freed by members that left: receivers first, else by max.
    give(members, pool);

    // Mins move only when minReplicas changed (their sum is no longer
    // max(minReplicas, n)) or the members changed; and whenever a min ended
    // above its max.
    std::int64_t sum_min = 0;
    bool min_above_max = false;
    for (const auto& m : members) {
      sum_min += m.min;
      min_above_max = min_above_max || m.min > m.max;
    }
    if (!left.empty() || std::any_of(members.begin(), members.end(), [](const Member& m) { return m.joined; }) ||
        sum_min != total_min || min_above_max) {
      compute_mins(members, total_min);
    }
  }

  // Rebalancing: receivers in name order, each asking for as much as its
  // max (what its HPA had; what it runs when that is more), at most doubling
  // it per pass as the HPA's default scale-up rate (what it got from a raise
  // in this sync counts), from the donors' spare. A receiver given all it
  // asked ends above what it runs, so it asks nothing more until its own HPA
  // says so again: no loop.
  std::vector<std::string> limited;
  std::vector<std::string> wanting;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!is_receiver(members[i])) continue;
    wanting.push_back(members[i].name);
    const std::int64_t base = std::max(members[i].hpa->max_replicas, members[i].hpa->current_replicas);
    const std::int64_t ask = std::clamp<std::int64_t>(2 * base - members[i].max, 0, base);
    const std::int64_t got = rebalancer.take_from_donors(i, ask);
    if (got < ask) limited.push_back(members[i].name);
  }

  // The decisions.
  for (const auto& m : members) {
    MemberDecision d;
    d.share = {static_cast<std::int32_t>(m.min), static_cast<std::int32_t>(m.max)};
    switch (m.input->state) {
      case MemberHPAState::Absent: d.action = MemberAction::Create; break;
      case MemberHPAState::Read:
        d.action = d.share == MemberShare{m.hpa->min_replicas, m.hpa->max_replicas} ? MemberAction::None
                                                                                    : MemberAction::Update;
        break;
      case MemberHPAState::Unreadable: {
        // Written again when it differs from what we last wrote; the loop
        // retries on the next sync if the member is still out of reach.
        auto prev = input.previous.find(m.name);
        d.action = prev != input.previous.end() && prev->second == d.share ? MemberAction::None : MemberAction::Update;
        break;
      }
    }
    out.shares[m.name] = d.share;
    out.members[m.name] = d;
  }
  for (const auto& [name, share] : left) out.members[name] = {share, MemberAction::Delete};
  out.annotation = distribution_annotation(out.shares);

  out.status = detail::aggregate_status(input, members);
  const bool reported = std::any_of(members.begin(), members.end(), [](const Member& m) {
    return m.hpa != nullptr && find_condition(m.hpa->conditions, kScalingActive) != nullptr;
  });
  if (!reported) {
    // No member HPA has said yet (all just created): the distribution itself
    // is what is active; this also ends an earlier InvalidDistribution.
    set_condition(out.status.conditions, kScalingActive, ConditionStatus::True, "ValidDistribution",
                  "minReplicas " + std::to_string(min_replicas) + " and maxReplicas " + std::to_string(max_replicas) +
                      " distributed over " + std::to_string(n) + " member HPAs",
                  input.now);
  }
  if (auto above = above_max(members, out.status, max_replicas)) {
    set_condition(out.status.conditions, kScalingLimited, ConditionStatus::True, "TooManyReplicas", std::move(*above),
                  input.now);
  } else if (!limited.empty()) {
    set_condition(out.status.conditions, kScalingLimited, ConditionStatus::True, "TooManyReplicas",
                  detail::join_names(limited) + " want" + (limited.size() == 1 ? "s" : "") +
                      " more than its share and no member has room to give (maxReplicas " +
                      std::to_string(max_replicas) + ")",
                  input.now);
  } else {
    set_condition(out.status.conditions, kScalingLimited, ConditionStatus::False, "DesiredWithinRange",
                  wanting.empty() ? "no member HPA is limited by its share of maxReplicas"
                                  : detail::join_names(wanting) + " got more of maxReplicas from the members with room",
                  input.now);
  }
  detail::note_reachability(out, input, unreached, left, members);
  return out;
}

}  // namespace fedmetrics::autoscaler
