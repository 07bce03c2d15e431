#pragma once
// One member's HorizontalPodAutoscalers in memory, with resourceVersions and
// uids as the member's API server keeps them.
#include <functional>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fedmetrics/controller/member_hpas.hpp"
#include "support/fake_control_plane.hpp"

namespace fedmetrics::testing {

struct FakeMemberHPAs final : controller::MemberHPAs {
  using MemberHPAs::MemberHPAs;
  std::map<std::string, json> stored;  // by "namespace/name"
  int version = 1;
  int writes = 0;
  std::set<std::string> missing_targets;  // "namespace/name" of the workloads it lacks
  bool target_check_fails = false;
  std::function<void()> after_list;  // runs after a list is taken, before it is answered

  async::Task<k8s::Expected<std::vector<json>>> list(const std::string& ns,
                                                     const k8s::LabelSelector& selector) override {
    std::vector<json> out;
    for (const auto& [key, h] : stored)
      if ((ns.empty() || h["metadata"]["namespace"] == ns) && selected(selector, h)) out.push_back(h);
    if (after_list) after_list();
    co_return out;
  }
  async::Task<k8s::Expected<std::optional<json>>> get(const std::string& ns, const std::string& name) override {
    auto it = stored.find(ns + "/" + name);
    co_return it == stored.end() ? std::optional<json>() : std::optional<json>(it->second);
  }
  async::Task<k8s::Expected<json>> create(const json& object) override {
    json hpa = object;
    const std::string key = hpa["metadata"].value("namespace", "") + "/" + hpa["metadata"].value("name", "");
    if (stored.count(key)) co_return k8s::Error{member() + ": AlreadyExists"};
    ++writes;
    hpa["metadata"]["resourceVersion"] = std::to_string(++version);
    hpa["metadata"]["uid"] = member() + "-uid-" + std::to_string(version);
    stored[key] = hpa;
    co_return hpa;
  }
  async::Task<k8s::Expected<json>> update(const json& object) override {
    json hpa = object;
    const std::string key = hpa["metadata"].value("namespace", "") + "/" + hpa["metadata"].value("name", "");
    auto it = stored.find(key);
    if (it == stored.end() || it->second["metadata"]["resourceVersion"] != hpa["metadata"]["resourceVersion"])
      co_return k8s::Error{member() + ": Conflict"};
    ++writes;
    hpa["metadata"]["resourceVersion"] = std::to_string(++version);
    hpa["status"] = it->second.value("status", json::object());  // the status subresource is the member's
    it->second = hpa;
    co_return hpa;
  }
  async::Task<k8s::Expected<bool>> has_target(const std::string& ns,
                                              const autoscaler::CrossVersionObjectReference& target) override {
    if (target_check_fails) co_return k8s::Error{member() + ": connection refused"};
    co_return !missing_targets.count(ns + "/" + target.name);
  }
  async::Task<k8s::Expected<bool>> remove(const std::string& ns, const std::string& name,
                                          const std::string& uid) override {
    auto it = stored.find(ns + "/" + name);
    if (it == stored.end()) co_return false;
    if (!uid.empty() && it->second["metadata"].value("uid", "") != uid)
      co_return k8s::Error{member() + ": Conflict: Precondition failed: UID in precondition: " + uid};
    ++writes;
    stored.erase(it);
    co_return true;
  }
};

}  // namespace fedmetrics::testing
