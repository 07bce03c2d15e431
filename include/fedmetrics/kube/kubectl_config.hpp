#pragma once
// The kubeconfig as kubectl reads it, for the kubectl plugin: a list of
// files merged as client-go's loader merges KUBECONFIG, one context chosen,
// and that context's namespace (kubectl's default for -n). Members are read
// with kubeconfig.hpp; this is for a program that acts as kubectl does.
#include <string>
#include <vector>

#include "fedmetrics/kube/kubeconfig.hpp"
#include "fedmetrics/k8s/expected.hpp"

namespace fedmetrics::kube {

struct KubectlContext {
  ClusterEndpoint endpoint;    // endpoint.name is the context's name
  std::string namespace_name;  // the context's namespace; empty when it sets none
};

// The context `context` (empty: the current-context) of the kubeconfig that
// `paths` make: the first file to set current-context wins, the first file
// to define a cluster, user or context name wins; files that do not exist
// are skipped (at least one must be read); paths inside a file resolve
// against that file's directory (client-go loader.go, ResolvePaths).
// Errors as kubectl words them (`context "x" does not exist`).
k8s::Expected<KubectlContext> load_kubectl_context(const std::vector<std::string>& paths,
                                                   const std::string& context = {});

// KUBECONFIG's value split on ':' (empty entries dropped, a repeated path kept once).
std::vector<std::string> split_kubeconfig_path_list(const std::string& value);

}  // namespace fedmetrics::kube
