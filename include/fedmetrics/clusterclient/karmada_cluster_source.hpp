#pragma once
// The member set from a Karmada control plane (--karmada-kubeconfig): its
// cluster.karmada.io/v1alpha1 Cluster objects, Ready ones as members and the
// others left out with their Ready condition (reported in every answer that
// misses them), reached as member_plan.hpp decides (directly with the Secret spec.secretRef names, or
// through the control plane's cluster proxy). Holding the members and their
// background discovery is the MemberSet's job; this class reads the control
// plane and feeds it endpoints.
//
// The Cluster objects are listed and then watched (a Reflector): a cluster
// that appears, disappears or turns NotReady is applied as soon as its event
// arrives. The Secrets that direct members need are read by name, again every
// `poll_interval` (2 s by default) so that rotated credentials are picked up
// within seconds without watching every Secret. A failure (control plane
// unreachable, an error status, a body that is not a ClusterList) changes
// nothing: the last good member set stays, the failure is logged once until
// it changes, and the watch is retried with backoff.
//
// Rights it needs on the control plane: list and watch clusters.cluster.karmada.io; get
// the Secrets that Ready Push clusters name (direct access; only those, not
// every Secret); get clusters/proxy (proxy access and Pull clusters).
#include <chrono>
#include <memory>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/kube/https_client.hpp"
#include "fedmetrics/clusterclient/member_plan.hpp"
#include "fedmetrics/clusterclient/member_set.hpp"
#include "fedmetrics/kube/reflector.hpp"

namespace fedmetrics::clusterclient {

struct KarmadaSourceOptions {
  std::string kubeconfig_file;                     // --karmada-kubeconfig: its current-context is the control plane
  MemberAccess access = MemberAccess::Direct;      // --member-access
  std::chrono::milliseconds poll_interval{2'000};  // Secrets re-read; Cluster changes come at once by the watch
  std::chrono::milliseconds poll_timeout{5'000};   // deadline of one poll's requests to the control plane
  MemberSetOptions members;
};

class KarmadaClusterSource final : public RefreshingMemberSource {
 public:
  // Reads the kubeconfig (std::runtime_error naming the file when it cannot
  // be used) and starts the watch and the polls in the background, without
  // waiting for the control plane: the set starts empty and fills when it
  // answers (wait_for_first_discovery() and MemberSet::when_discovered()
  // wait for the first poll too). A failed poll is logged, not thrown.
  KarmadaClusterSource(kube::ClientRuntime& runtime, KarmadaSourceOptions options);
  ~KarmadaClusterSource() override;

  std::shared_ptr<const aggregator::MemberList> members() const override { return members_.members(); }
  // With the Clusters left out: not Ready, or not reachable as their object says.
  std::shared_ptr<const aggregator::MemberSnapshot> snapshot() const override { return members_.snapshot(); }
  void wait_for_first_discovery(std::chrono::milliseconds timeout) override;
  [[nodiscard]] const MemberSet& member_set() const override { return members_; }
  void stop() override;

 private:
  // The polling coroutine and what it awaits (transport/async.hpp): a poll
  // runs on its strand, which is the only place that replaces client_ and
  // clusters_ after the constructor.
  struct Loop;
  // (Re)starts the watch of Cluster objects on client_, on the loop's strand.
  void watch_clusters();
  // A changed --karmada-kubeconfig (a rotated token or certificate, another
  // server) is read again before a poll; one that cannot be used is logged
  // and the previous one kept.
  void reload_kubeconfig_if_changed();
  void poll_failed(const std::string& why);
  void report(const MemberPlan& plan);

  kube::ClientRuntime& runtime_;
  KarmadaSourceOptions options_;
  std::filesystem::file_time_type kubeconfig_mtime_{};  // of the file last read successfully
  std::string kubeconfig_failure_;                      // why the changed file could not be used
  kube::ClusterEndpoint control_plane_;
  std::shared_ptr<kube::HttpsClient> client_;
  MemberSet members_;

  // The poller's own state, for logging changes once.
  bool polled_ok_ = false;
  std::string last_failure_;
  std::set<std::string> last_left_out_;

  std::unique_ptr<Loop> loop_;  // started once the rest is in place
  // The current watch, run by the loop's task group (which stop() drains).
  std::shared_ptr<kube::Reflector> clusters_;  // replaced with client_, on the loop's strand
  std::string last_plan_inputs_;               // the callback's own: what the member plan reads, last time
};

}  // namespace fedmetrics::clusterclient
