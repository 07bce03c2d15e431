#include "kubeclient/collection_watch.hpp"

#include "kubeclient/rest_json.hpp"

namespace fedmetrics::kubeclient {

CollectionWatch::CollectionWatch(std::shared_ptr<kube::HttpsClient> client, const async::Executor& executor,
                                 const std::string& resource, std::string what, const k8s::LabelSelector& selector,
                                 std::chrono::milliseconds timeout, kube::Reflector::OnChange on_change) {
  kube::ReflectorOptions options;
  options.what = std::move(what);
  options.collection = karmada_autoscaling(resource).with("labelSelector", selector.to_string());
  options.request_timeout = timeout;
  reflector_ = std::make_unique<kube::Reflector>(std::move(client), options, std::move(on_change));
  reflector_->start(executor);
}

CollectionWatch::~CollectionWatch() { reflector_->stop(); }

}  // namespace fedmetrics::kubeclient
