#include "sim/member_pod_watch.hpp"

#include <random>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/k8s/url.hpp"
#include "fedmetrics/sim/member_api.hpp"
#include "sim/http_util.hpp"
#include "sim/simulation.hpp"

namespace fedmetrics::sim::detail {

namespace {

using nlohmann::json;

// How often a watch looks at its pods, and how far back a new watch checks
// that they did not change since the list it follows (seconds apart under load).
constexpr auto kPoll = std::chrono::seconds(1);
constexpr auto kSettled = std::chrono::seconds(2);
constexpr int kPollsPerBookmark = 10;

// What the watch compares: each existing pod of `ns` ("" = every namespace)
// with whether it runs and is Ready at `now`.
std::size_t pods_digest(const Federation& f, std::size_t member, const std::string& ns, k8s::Timestamp now) {
  std::size_t digest = 0;
  for (const auto& p : f.members[member].pods) {
    if (!f.exists(p, now)) continue;
    if (!ns.empty() && f.world.workloads[p.workload].namespace_name != ns) continue;
    std::size_t h = std::hash<std::string>{}(p.uid);
    h = h * 31 + (p.deleted ? 1 : 0) * 4 + (f.running(p, now) ? 2 : 0) + (f.ready(p, now) ? 1 : 0);
    digest ^= h + 0x9e3779b97f4a7c15ULL + (digest << 6) + (digest >> 2);
  }
  return digest;
}

std::string gone(const std::string& asked, std::uint64_t current) {
  json status = {{"kind", "Status"},
                 {"apiVersion", "v1"},
                 {"metadata", json::object()},
                 {"status", "Failure"},
                 {"message", "too old resource version: " + asked + " (" + std::to_string(current) + ")"},
                 {"reason", "Expired"},
                 {"code", 410}};
  return json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
}

std::string bookmark(std::uint64_t rv) {
  return json{{"type", "BOOKMARK"},
              {"object",
               {{"kind", "Pod"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", std::to_string(rv)}}}}}}
             .dump() +
         "\n";
}

struct PodWatch {
  Simulation& sim;
  std::size_t member;
  std::string ns;
  std::shared_ptr<transport::ResponseStream> stream;
  std::string asked;  // the resourceVersion it started from
  std::uint64_t rv = 0;
  std::size_t digest = 0;
  bool bookmarks = false;
  int quiet_polls = 0;
  std::chrono::steady_clock::time_point until;

  static void poll(std::shared_ptr<PodWatch> self) {
    auto snapshot = self->sim.state.load();
    const auto now = wall_now();
    if (pods_digest(*snapshot, self->member, self->ns, now) != self->digest) {
      self->stream->write(gone(self->asked, snapshot->resource_version));
      self->stream->close();
      return;
    }
    if (std::chrono::steady_clock::now() >= self->until) {
      self->stream->close();
      return;
    }
    // A BOOKMARK when the resourceVersion moved, and every few polls anyway:
    // writing is how a watch learns that its client went.
    if (self->bookmarks && (snapshot->resource_version != self->rv || ++self->quiet_polls >= kPollsPerBookmark)) {
      self->rv = snapshot->resource_version;
      self->quiet_polls = 0;
      if (!self->stream->write(bookmark(self->rv))) return;
    }
    self->sim.members[self->member]->schedule(kPoll, [self] { poll(self); });
  }
};

}  // namespace

std::optional<transport::HttpResponse> watch_member_pods(Simulation& sim, std::size_t member,
                                                         const transport::HttpRequest& request) {
  if (request.method != "GET") return std::nullopt;
  auto target = k8s::parse_request_target(request.target);
  if (!target || !k8s::query_bool(target->query, "watch")) return std::nullopt;
  const auto& s = target->segments;
  std::string ns;
  if (s.size() == 3 && s[0] == "api" && s[1] == "v1" && s[2] == "pods") {
    ns.clear();
  } else if (s.size() == 5 && s[0] == "api" && s[1] == "v1" && s[2] == "namespaces" && s[4] == "pods") {
    ns = s[3];
  } else {
    return std::nullopt;
  }
  auto snapshot = sim.state.load();
  const bool authenticated = member_authenticated(*snapshot, member, request);
  spdlog::debug("{} {} {} -> {}", snapshot->world.members[member].name, request.method, request.target,
                authenticated ? 200 : 401);
  if (!authenticated) {
    return status_response(k8s::Status::unauthorized());
  }
  auto watch = std::make_shared<PodWatch>(PodWatch{sim, member, ns, std::make_shared<transport::ResponseStream>()});
  transport::HttpResponse head;
  head.stream = watch->stream;
  watch->asked = k8s::query_value(target->query, "resourceVersion");
  watch->rv = snapshot->resource_version;
  watch->bookmarks = k8s::query_bool(target->query, "allowWatchBookmarks");
  const auto now = wall_now();
  watch->digest = pods_digest(*snapshot, member, ns, now);
  if (watch->asked != std::to_string(watch->rv) ||
      pods_digest(*snapshot, member, ns, now - kSettled) != watch->digest) {
    watch->stream->write(gone(watch->asked, watch->rv));
    watch->stream->close();
    return head;
  }
  std::int64_t timeout = 0;
  try {
    timeout = std::stoll(k8s::query_value(target->query, "timeoutSeconds"));
  } catch (...) {
    timeout = 0;
  }
  if (timeout <= 0) timeout = 1800 + static_cast<std::int64_t>(std::random_device{}() % 1800);
  watch->until = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  sim.members[member]->schedule(kPoll, [watch] { PodWatch::poll(watch); });
  return head;
}

}  // namespace fedmetrics::sim::detail
