#include "kubeclient/rest_event_writer.hpp"

#include <nlohmann/json.hpp>

#include "fedmetrics/k8s/time.hpp"
#include "fedmetrics/kube/resource_path.hpp"
#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

using nlohmann::json;

namespace {

kube::ResourcePath events(const std::string& ns, std::string name = {}) {
  return kube::ResourcePath::core("events", ns, std::move(name));
}

}  // namespace

// The Event writes go through the client's callback API: the port takes a
// callback, and nothing awaits them.
void RestEventWriter::create_event(const controller::Event& e, Done done) {
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", e.name}, {"namespace", e.subject.namespace_name}}},
                {"involvedObject",
                 {{"apiVersion", "autoscaling.karmada.io/v1alpha1"},
                  {"kind", e.subject.kind},
                  {"name", e.subject.name},
                  {"namespace", e.subject.namespace_name},
                  {"uid", e.subject.uid}}},
                {"reason", e.reason},
                {"message", e.message},
                {"type", e.type},
                {"count", e.count},
                {"firstTimestamp", k8s::format_time(e.first_timestamp)},
                {"lastTimestamp", k8s::format_time(e.last_timestamp)},
                {"source", {{"component", "fedmetrics-autoscaler"}}},
                {"reportingComponent", "fedmetrics-autoscaler"}};
  send_json(*client_, "POST", events(e.subject.namespace_name), "application/json", event.dump(),
            std::chrono::steady_clock::now() + timeout_,
            [done = std::move(done)](JsonReply reply) { done(written(reply)); });
}

void RestEventWriter::patch_event(const controller::Event& e, Done done) {
  json patch = {{"count", e.count}, {"lastTimestamp", k8s::format_time(e.last_timestamp)}, {"message", e.message}};
  send_json(*client_, "PATCH", events(e.subject.namespace_name, e.name), "application/merge-patch+json", patch.dump(),
            std::chrono::steady_clock::now() + timeout_, [done = std::move(done)](JsonReply reply) {
              if (reply.status == 404) return done(false);
              done(written(reply));
            });
}

}  // namespace fedmetrics::kubeclient
