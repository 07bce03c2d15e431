#pragma once
// The loop's port to the members' pods (upstream's HPA controller reads them
// from a pod informer, not from the API server at every sync): the pods of a
// member's namespace, kept by one watch per member and namespace that the
// loop needs. A watch starts when a sync first asks for its member and
// namespace, and stops when keep() no longer names them (the last
// FederatedHPA of that namespace went, or no longer runs there).
// kubeclient::WatchedMemberPods implements it with a reflector per member
// and namespace; tests use the fake in test/support.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fedmetrics/aggregator/member_cluster.hpp"
#include "fedmetrics/k8s/expected.hpp"
#include "fedmetrics/k8s/label_selector.hpp"
#include "fedmetrics/k8s/pod.hpp"
#include "fedmetrics/transport/task.hpp"

namespace fedmetrics::controller {

// A member and a namespace whose pods the loop reads.
using MemberNamespace = std::pair<std::string, std::string>;  // (member, namespace)

class MemberPods {
 public:
  virtual ~MemberPods() = default;
  // The pods of `member` in `namespace_name` that `selector` matches, as the
  // watch of that member and namespace holds them (started now when none
  // runs: then awaited until its first list, or `deadline`). An error (not
  // listed yet, more pods than the cache may hold) leaves the member's pods
  // missing for this sync, as a failed pod list did.
  virtual async::Task<k8s::Expected<std::vector<k8s::Pod>>> pods(const aggregator::MemberCluster& member,
                                                                 const std::string& namespace_name,
                                                                 const k8s::LabelSelector& selector,
                                                                 aggregator::Deadline deadline) = 0;
  // The watches still needed; every other one stops.
  virtual void keep(const std::set<MemberNamespace>& in_use) = 0;
};

}  // namespace fedmetrics::controller
