#pragma once
// The one fake of the loop's MemberPods port: the pods of each FakeMember's
// pod list that the selector matches (as a watch's cache holds them),
// answered at once; what was asked, which watches run (started by a read,
// stopped by keep()), and what keep() was told.
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/controller/member_pods.hpp"
#include "support/fake_member_cluster.hpp"

namespace fedmetrics::testing {

class FakeMemberPods final : public controller::MemberPods {
 public:
  struct Read {
    std::string member;
    std::string namespace_name;
    std::string selector;
  };
  std::vector<Read> reads;
  std::set<controller::MemberNamespace> watching;  // started, not stopped since
  std::size_t started = 0;
  std::vector<std::set<controller::MemberNamespace>> kept;

  async::Task<k8s::Expected<std::vector<k8s::Pod>>> pods(const aggregator::MemberCluster& member,
                                                         const std::string& namespace_name,
                                                         const k8s::LabelSelector& selector,
                                                         aggregator::Deadline) override {
    reads.push_back({member.name(), namespace_name, selector.to_string()});
    if (watching.emplace(member.name(), namespace_name).second) ++started;
    const auto* fake = dynamic_cast<const aggregator::testing::FakeMember*>(&member);
    k8s::Expected<std::vector<k8s::Pod>> answer =
        fake != nullptr ? fake->selected_pods(selector) : k8s::Error{"not a fake member"};
    co_return answer;
  }
  void keep(const std::set<controller::MemberNamespace>& in_use) override {
    kept.push_back(in_use);
    std::erase_if(watching, [&](const auto& w) { return !in_use.count(w); });
  }
};

}  // namespace fedmetrics::testing
