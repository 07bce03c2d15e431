#pragma once
// What one simulated member cluster's kube-apiserver answers, behind its
// aggregation layer: core pods, nodes and namespaces; metrics.k8s.io as
// metrics-server answers; custom.metrics.k8s.io (v1beta2, v1beta1) as
// prometheus-adapter answers; external.metrics.k8s.io; discovery, /version
// and health. Bearer-token authentication (401 Status otherwise), and the
// faults that are answers: a fraction of 500s, malformed JSON, expired tokens.
// Pure: a function of the federation snapshot, the request and the time.
#include <cstddef>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/sim/federation.hpp"
#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::sim {

class MemberApi {
 public:
  // `federation` must outlive the MemberApi; `member` indexes World::members.
  MemberApi(const Federation& federation, std::size_t member) : federation_(federation), member_(member) {}

  // `fault_draw` is a uniform draw in [0, 1) made by the caller (a seeded
  // RNG): the request fails with 500 when it is below the member's error rate.
  [[nodiscard]] transport::HttpResponse handle(const transport::HttpRequest& request, k8s::Timestamp now,
                                               double fault_draw = 1.0) const;

 private:
  const Federation& federation_;
  std::size_t member_;
};

// apiserver's bearer-token authentication on a member: a world user's token
// valid there, unless the member's expiredToken fault rejects every token.
bool member_authenticated(const Federation& federation, std::size_t member, const transport::HttpRequest& request);

}  // namespace fedmetrics::sim
