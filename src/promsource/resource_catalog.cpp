#include "fedmetrics/promsource/resource_catalog.hpp"

#include "fedmetrics/k8s/ascii.hpp"

namespace fedmetrics::promsource {

const ResourceCatalog& ResourceCatalog::builtin() {
  static const ResourceCatalog catalog({
      {{"", "pods"}, "pod", "v1", "Pod", true},
      {{"", "namespaces"}, "namespace", "v1", "Namespace", false},
      {{"", "nodes"}, "node", "v1", "Node", false},
      {{"", "services"}, "service", "v1", "Service", true},
      {{"", "endpoints"}, "endpoints", "v1", "Endpoints", true},
      {{"", "persistentvolumes"}, "persistentvolume", "v1", "PersistentVolume", false},
      {{"", "persistentvolumeclaims"}, "persistentvolumeclaim", "v1", "PersistentVolumeClaim", true},
      {{"", "configmaps"}, "configmap", "v1", "ConfigMap", true},
      {{"", "secrets"}, "secret", "v1", "Secret", true},
      {{"", "serviceaccounts"}, "serviceaccount", "v1", "ServiceAccount", true},
      {{"", "replicationcontrollers"}, "replicationcontroller", "v1", "ReplicationController", true},
      {{"", "resourcequotas"}, "resourcequota", "v1", "ResourceQuota", true},
      {{"", "limitranges"}, "limitrange", "v1", "LimitRange", true},
      {{"", "events"}, "event", "v1", "Event", true},
      {{"apps", "deployments"}, "deployment", "v1", "Deployment", true},
      {{"apps", "replicasets"}, "replicaset", "v1", "ReplicaSet", true},
      {{"apps", "statefulsets"}, "statefulset", "v1", "StatefulSet", true},
      {{"apps", "daemonsets"}, "daemonset", "v1", "DaemonSet", true},
      {{"batch", "jobs"}, "job", "v1", "Job", true},
      {{"batch", "cronjobs"}, "cronjob", "v1", "CronJob", true},
      {{"autoscaling", "horizontalpodautoscalers"}, "horizontalpodautoscaler", "v2", "HorizontalPodAutoscaler", true},
      {{"networking.k8s.io", "ingresses"}, "ingress", "v1", "Ingress", true},
      {{"policy", "poddisruptionbudgets"}, "poddisruptionbudget", "v1", "PodDisruptionBudget", true},
  });
  return catalog;
}

const ResourceInfo* ResourceCatalog::find(const GroupResource& gr) const {
  const std::string wanted = k8s::ascii_lowercase(gr.resource);
  for (const auto& info : resources_) {
    if (!gr.group.empty() && info.group_resource.group != gr.group) continue;
    if (info.group_resource.resource == wanted || info.singular == wanted) return &info;
  }
  return nullptr;
}

}  // namespace fedmetrics::promsource
