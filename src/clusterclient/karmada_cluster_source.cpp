#include "fedmetrics/clusterclient/karmada_cluster_source.hpp"

#include "fedmetrics/transport/async.hpp"

#include <filesystem>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fedmetrics/clusterclient/rest_member_cluster.hpp"
#include "fedmetrics/k8s/status.hpp"
#include "fedmetrics/kube/resource_path.hpp"

namespace fedmetrics::clusterclient {

using kube::Deadline;

namespace {

kube::ResourcePath clusters() { return kube::ResourcePath::in_group("cluster.karmada.io", "v1alpha1", "clusters"); }

std::string secret_path(const k8s::SecretReference& ref) {
  return kube::ResourcePath::core("secrets", ref.namespace_name, ref.name).target();
}

// The body of a 200 answer, or why there is none.
k8s::Expected<std::string> body_of(const kube::HttpResult& result) {
  if (const auto* e = std::get_if<k8s::Error>(&result)) return *e;
  const auto& reply = std::get<kube::HttpReply>(result);
  if (reply.status != 200) return k8s::Error{kube::describe(result)};
  return reply.body;
}

kube::ClusterEndpoint control_plane_from(const std::string& kubeconfig_file) {
  auto loaded = kube::load_kubeconfig_current_context(kubeconfig_file);
  if (!loaded) throw std::runtime_error("--karmada-kubeconfig " + loaded.error().message);
  return std::move(*loaded);
}

std::shared_ptr<kube::HttpsClient> control_plane_client(kube::ClientRuntime& runtime,
                                                        const kube::ClusterEndpoint& control_plane,
                                                        const kube::ClientOptions& options) {
  try {
    kube::ClientOptions named = options;
    named.peer_name = "the control plane";
    return std::make_shared<kube::HttpsClient>(runtime, control_plane, named);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--karmada-kubeconfig: ") + e.what());
  }
}

}  // namespace

using Clusters = k8s::Expected<std::vector<k8s::Expected<k8s::KarmadaCluster>>>;

struct KarmadaClusterSource::Loop {
  explicit Loop(async::Strand s) : strand(s), wakeup(s), reflectors(s) {}
  async::Strand strand;
  async::Wakeup wakeup;  // the watch saw a change that matters: poll now
  async::Job job;
  // The watch of Cluster objects (one at a time; a replaced one ends in the background).
  async::TaskGroup reflectors;

  // A reflector's run, which holds it until the run has ended.
  static async::Task<void> reflect(std::shared_ptr<kube::Reflector> reflector) {
    auto running = reflector->run();
    co_await std::move(running);
  }

  static async::Task<void> drain(Loop& loop) {
    loop.reflectors.cancel();
    auto joined = loop.reflectors.join();
    co_await std::move(joined);
  }

  // One GET of a poll, its answer put in `answers` (the poll's frame, which awaits it).
  static async::Task<void> fetch_one(std::shared_ptr<kube::HttpsClient> client, std::string path, Deadline deadline,
                                     std::vector<std::optional<kube::HttpResult>>* answers, std::size_t i) {
    kube::OutgoingRequest get;
    get.target = std::move(path);
    auto answer = client->request(std::move(get), deadline);
    (*answers)[i] = co_await std::move(answer);
  }

  // GETs `paths` at once, every answer in order. Bounded: HttpsClient answers
  // every request by its deadline. Throws the cancellation when stop()
  // cancelled the poll meanwhile.
  static async::Task<std::vector<kube::HttpResult>> fetch(const async::Strand& strand,
                                                          std::shared_ptr<kube::HttpsClient> client,
                                                          std::vector<std::string> paths, Deadline deadline) {
    std::vector<std::optional<kube::HttpResult>> answers(paths.size());
    async::TaskGroup requests(strand);
    for (std::size_t i = 0; i < paths.size(); ++i)
      requests.spawn(fetch_one(client, paths[i], deadline, &answers, i), "karmada: a poll's GET");
    auto joined = requests.join();
    co_await std::move(joined);
    co_await async::throw_if_cancelled();
    std::vector<kube::HttpResult> all;
    all.reserve(answers.size());
    for (auto& answer : answers)
      all.push_back(answer ? std::move(*answer)
                           : kube::HttpResult(k8s::Error{k8s::ErrorKind::Internal, "the request ended unanswered"}));
    co_return all;
  }

  // The Cluster objects: from the watch once it has listed, else listed now
  // (the control plane has not answered the watch's list), to report why.
  static async::Task<Clusters> current_clusters(KarmadaClusterSource& self, Deadline deadline) {
    if (self.clusters_ && self.clusters_->synced()) {
      nlohmann::json list = {
          {"kind", "ClusterList"}, {"apiVersion", "cluster.karmada.io/v1alpha1"}, {"items", self.clusters_->items()}};
      co_return k8s::parse_cluster_list(list.dump());
    }
    std::vector<std::string> paths{clusters().target()};
    auto fetched = fetch(self.loop_->strand, self.client_, std::move(paths), deadline);
    auto listed = co_await std::move(fetched);
    auto body = body_of(listed.front());
    if (!body) co_return Clusters(body.error());
    co_return k8s::parse_cluster_list(*body);
  }

  static async::Task<void> poll(KarmadaClusterSource& self) {
    self.reload_kubeconfig_if_changed();
    auto deadline = std::chrono::steady_clock::now() + self.options_.poll_timeout;
    auto current = current_clusters(self, deadline);
    auto clusters = co_await std::move(current);
    if (!clusters) {
      self.poll_failed("listing Cluster objects: " + clusters.error().message);
      co_return;
    }

    // Only the Secrets of Ready clusters reached directly, each by name: no
    // list or watch of every Secret in the control plane.
    auto refs = secrets_to_read(*clusters, self.options_.access);
    std::vector<std::string> paths;
    for (const auto& ref : refs) paths.push_back(secret_path(ref));
    auto fetched = fetch(self.loop_->strand, self.client_, std::move(paths), deadline);
    auto read = co_await std::move(fetched);
    SecretLookup secrets;
    for (std::size_t i = 0; i < refs.size(); ++i) {
      const auto& result = read[i];
      const auto* reply = std::get_if<kube::HttpReply>(&result);
      // A missing or forbidden Secret is about that cluster; any other failure is about the control plane.
      if (reply != nullptr && (reply->status == 404 || reply->status == 403)) {
        secrets.emplace(refs[i], k8s::Error{kube::describe(result)});
        continue;
      }
      auto secret_body = body_of(result);
      if (!secret_body) {
        self.poll_failed("reading secret " + refs[i].to_string() + ": " + secret_body.error().message);
        co_return;
      }
      secrets.emplace(refs[i], k8s::parse_secret(*secret_body));
    }

    auto plan = plan_members(*clusters, secrets, self.control_plane_, self.options_.access);
    self.members_.reconcile(plan.members, OnBadEndpoint::KeepPrevious, plan.left_out, plan.prometheus);
    self.report(plan);
  }

  // The watch, then a poll at once, then every poll_interval, or at once
  // when the watch saw a change.
  static async::Task<void> run(KarmadaClusterSource& self, Loop& loop) {
    self.watch_clusters();
    for (;;) {
      auto polled = poll(self);
      co_await std::move(polled);
      const bool go_on = co_await loop.wakeup.wait_for(self.options_.poll_interval);
      if (!go_on) co_return;  // stop()
    }
  }
};

namespace {
std::filesystem::file_time_type modified_at(const std::string& file) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(file, ec);
  return ec ? std::filesystem::file_time_type{} : t;
}
}  // namespace

KarmadaClusterSource::KarmadaClusterSource(kube::ClientRuntime& runtime, KarmadaSourceOptions options)
    : runtime_(runtime),
      options_(std::move(options)),
      kubeconfig_mtime_(modified_at(options_.kubeconfig_file)),
      control_plane_(control_plane_from(options_.kubeconfig_file)),
      client_(control_plane_client(runtime, control_plane_, options_.members.client)),
      members_(runtime, options_.members),
      loop_(std::make_unique<Loop>(async::make_strand(runtime.executor()))) {
  // The first poll is the loop's: whoever needs the members awaits their
  // first discovery (MemberSet::when_discovered), which waits for it.
  loop_->job.start(loop_->strand, "karmada: Cluster poll", [this] { return Loop::run(*this, *loop_); });
}

KarmadaClusterSource::~KarmadaClusterSource() { stop(); }

void KarmadaClusterSource::stop() {
  // The loop replaces clusters_: it goes first (a poll awaiting answers is
  // cancelled), then every reflector it started, waited for: no callback of
  // one runs after this.
  if (loop_) {
    loop_->job.stop();
    async::run_and_wait(loop_->strand, [loop = loop_.get()] { return Loop::drain(*loop); });
    loop_.reset();  // once: a second stop() (the destructor's) needs no running io_context
  }
  clusters_.reset();  // its hold on the control plane's client released
  members_.stop();
  client_.reset();  // its strand belongs to the kube::ClientRuntime, which the caller is about to destroy
}

void KarmadaClusterSource::wait_for_first_discovery(std::chrono::milliseconds timeout) {
  members_.wait_for_first_discovery(timeout);
}

void KarmadaClusterSource::reload_kubeconfig_if_changed() {
  const auto mtime = modified_at(options_.kubeconfig_file);
  if (mtime == kubeconfig_mtime_) return;
  // Until a changed file is read successfully it is tried again at every
  // poll (it may have been caught half-written), and the failure logged once.
  auto unusable = [this](const std::string& why) {
    if (why != kubeconfig_failure_)
      spdlog::warn("karmada: --karmada-kubeconfig changed but cannot be used ({}); keeping the one read before", why);
    kubeconfig_failure_ = why;
  };
  auto loaded = kube::load_kubeconfig_current_context(options_.kubeconfig_file);
  if (!loaded) return unusable(loaded.error().message);
  if (*loaded == control_plane_) {
    kubeconfig_mtime_ = mtime;
    kubeconfig_failure_.clear();
    return;
  }
  try {
    client_ = std::make_shared<kube::HttpsClient>(runtime_, *loaded, options_.members.client);
  } catch (const std::exception& e) {
    return unusable(e.what());
  }
  kubeconfig_mtime_ = mtime;
  kubeconfig_failure_.clear();
  control_plane_ = std::move(*loaded);
  watch_clusters();
  // Members reached through the cluster proxy take the new credentials at this poll's reconcile.
  spdlog::info("karmada: --karmada-kubeconfig changed: reading Cluster objects from {} with its new settings",
               control_plane_.server);
}

void KarmadaClusterSource::watch_clusters() {
  loop_->reflectors.cancel();  // the previous watch, if any, ends in the background
  kube::ReflectorOptions options;
  options.what = "karmada: Cluster objects";
  options.collection = clusters();
  options.request_timeout = options_.poll_timeout;
  options.max_backoff = std::max(options_.poll_interval, std::chrono::milliseconds(1'000));
  last_plan_inputs_.clear();
  // The callback reads the reflector it belongs to, never clusters_, which
  // the loop replaces and stop() resets: a reflector outlives its callbacks
  // (its run holds it), clusters_ does not.
  auto self = std::make_shared<const kube::Reflector*>(nullptr);
  auto reflector = std::make_shared<kube::Reflector>(client_, options, [this, self](const kube::ReflectorChange&) {
    // Karmada rewrites a Cluster's status every few seconds (resource
    // summaries, probe times): only a change of what the member plan reads
    // (spec, the Ready condition) is applied now rather than at the next interval.
    std::string inputs;
    for (const auto& item : (*self)->items()) {
      inputs += item.value("metadata", nlohmann::json::object()).value("name", "") + "\n";
      inputs += item.value("spec", nlohmann::json::object()).dump() + "\n";
      for (const auto& c : item.value("status", nlohmann::json::object()).value("conditions", nlohmann::json::array()))
        if (c.is_object() && c.value("type", "") == "Ready")
          inputs += c.value("status", "") + c.value("reason", "") + "\n";
    }
    if (inputs == last_plan_inputs_) return;
    last_plan_inputs_ = std::move(inputs);
    loop_->wakeup.notify();
  });
  *self = reflector.get();
  clusters_ = reflector;
  loop_->reflectors.spawn(Loop::reflect(std::move(reflector)), "karmada: the watch of Cluster objects");
}

void KarmadaClusterSource::poll_failed(const std::string& why) {
  if (why != last_failure_)
    spdlog::warn("karmada: {}; keeping the {} member cluster(s) known, retrying every {} ms", why,
                 members_.members()->size(), options_.poll_interval.count());
  last_failure_ = why;
}

// Logs what changed since the last poll, once: the control plane answering
// again, the first member set, and clusters left out (members added, changed
// or removed are the MemberSet's to log).
void KarmadaClusterSource::report(const MemberPlan& plan) {
  if (!last_failure_.empty()) spdlog::info("karmada: reading the Cluster objects again");
  last_failure_.clear();
  if (!polled_ok_) {
    polled_ok_ = true;
    std::string names;
    for (const auto& e : plan.members) names += (names.empty() ? "" : ", ") + e.name;
    spdlog::info("karmada: {} member cluster(s) from the Cluster objects ({} access): {}", plan.members.size(),
                 options_.access == MemberAccess::Proxy ? "proxy" : "direct", names.empty() ? "none" : names);
  }
  std::set<std::string> left_out;
  for (const auto& [name, condition] : plan.not_ready) {
    auto line = "karmada: cluster " + name + " is left out until it is Ready: " + condition;
    if (!last_left_out_.count(line)) spdlog::info("{}", line);
    left_out.insert(std::move(line));
  }
  for (const auto& why : plan.unusable) {
    auto line = "karmada: left out: " + why;
    if (!last_left_out_.count(line)) spdlog::warn("{}", line);
    left_out.insert(std::move(line));
  }
  last_left_out_ = std::move(left_out);
}

}  // namespace fedmetrics::clusterclient
