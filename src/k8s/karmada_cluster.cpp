#include "fedmetrics/k8s/karmada_cluster.hpp"

#include "fedmetrics/k8s/ascii.hpp"
#include "fedmetrics/k8s/base64.hpp"
#include "k8s/json_decode.hpp"

namespace fedmetrics::k8s {

namespace {

Expected<std::optional<SecretReference>> secret_ref_from(const ObjectReader& spec) {
  auto ref = spec.object("secretRef", Need::Optional);
  if (!ref) return ref.error();
  if (!ref->present()) return std::optional<SecretReference>();
  auto namespace_name = ref->string("namespace", Need::Required);
  if (!namespace_name) return namespace_name.error();
  auto name = ref->string("name", Need::Required);
  if (!name) return name.error();
  if (namespace_name->empty() || name->empty()) return Error{"namespace and name must not be empty"}.at(ref->path());
  return std::optional<SecretReference>(SecretReference{std::move(*namespace_name), std::move(*name)});
}

Expected<std::optional<Condition>> ready_condition_from(const ObjectReader& cluster) {
  auto status = cluster.object("status", Need::Optional);
  if (!status) return status.error();
  auto conditions = status->array("conditions", Need::Optional);
  if (!conditions) return conditions.error();
  for (std::size_t i = 0; i < (*conditions)->size(); ++i) {
    ObjectReader c((**conditions)[i], index_path(status->path_of("conditions"), i));
    if (!c.ok()) return c.error();
    Condition out;
    for (auto [key, field] : {std::pair{"type", &out.type}, std::pair{"status", &out.status},
                              std::pair{"reason", &out.reason}, std::pair{"message", &out.message}}) {
      auto value = c.string(key, Need::Optional);
      if (!value) return value.error();
      *field = std::move(*value);
    }
    if (out.type == "Ready") return std::optional<Condition>(std::move(out));
  }
  return std::optional<Condition>();
}

// Errors are relative to the item ("spec.apiEndpoint: ..."); the caller says which item.
Expected<KarmadaCluster> cluster_from(const ObjectReader& r, std::string& name) {
  auto metadata = r.object("metadata", Need::Required);
  if (!metadata) return metadata.error();
  auto read_name = metadata->string("name", Need::Required);
  if (!read_name) return read_name.error();
  if (read_name->empty()) return Error{"must not be empty"}.at("metadata.name");
  name = *read_name;
  KarmadaCluster out;
  out.name = std::move(*read_name);
  auto annotations = metadata->string_map("annotations", Need::Optional);
  if (!annotations) return annotations.error();
  for (auto& [key, value] : *annotations) out.annotations.emplace(key, std::move(value));
  auto spec = r.object("spec", Need::Optional);
  if (!spec) return spec.error();
  for (auto [key, field] : {std::pair{"apiEndpoint", &out.api_endpoint}, std::pair{"syncMode", &out.sync_mode},
                            std::pair{"proxyURL", &out.proxy_url}}) {
    auto value = spec->string(key, Need::Optional);
    if (!value) return value.error();
    *field = std::move(*value);
  }
  auto insecure = spec->boolean("insecureSkipTLSVerification", Need::Optional);
  if (!insecure) return insecure.error();
  out.insecure_skip_tls_verification = *insecure;
  auto secret_ref = secret_ref_from(*spec);
  if (!secret_ref) return secret_ref.error();
  out.secret_ref = std::move(*secret_ref);
  auto ready = ready_condition_from(r);
  if (!ready) return ready.error();
  out.ready = std::move(*ready);
  return out;
}

// The body as a JSON object of `kind`; one without a kind is taken as it.
Expected<nlohmann::json> object_of_kind(std::string_view body, const std::string& kind) {
  auto doc = parse_json_document(body);
  if (!doc) return Error{"the " + kind + " is not JSON"};
  ObjectReader r(*doc, "");
  if (!r.ok()) return r.error();
  auto found = r.string("kind", Need::Optional);
  if (!found) return found.error();
  if (!found->empty() && *found != kind) return Error{"expected a " + kind + ", got kind " + *found};
  return doc;
}

}  // namespace

Expected<std::vector<Expected<KarmadaCluster>>> parse_cluster_list(std::string_view body) {
  auto doc = object_of_kind(body, "ClusterList");
  if (!doc) return doc.error();
  ObjectReader r(*doc, "");
  auto items = r.array("items", Need::Required);
  if (!items) return items.error();
  std::vector<Expected<KarmadaCluster>> out;
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    ObjectReader item((**items)[i], "");
    std::string name;
    auto cluster = item.ok() ? cluster_from(item, name) : Expected<KarmadaCluster>(item.error());
    if (cluster) out.push_back(std::move(cluster));
    else out.emplace_back(cluster.error().at(name.empty() ? index_path("items", i) : "cluster \"" + name + "\""));
  }
  return out;
}

std::string resource_binding_name(std::string_view name, std::string_view kind) {
  return ascii_lowercase(std::string(name) + "-" + std::string(kind));
}

Expected<Secret> parse_secret(std::string_view body) {
  auto doc = object_of_kind(body, "Secret");
  if (!doc) return doc.error();
  ObjectReader r(*doc, "");
  Secret out;
  auto metadata = r.object("metadata", Need::Optional);
  if (!metadata) return metadata.error();
  for (auto [key, field] : {std::pair{"namespace", &out.namespace_name}, std::pair{"name", &out.name}}) {
    auto value = metadata->string(key, Need::Optional);
    if (!value) return value.error();
    *field = std::move(*value);
  }
  auto data = r.string_map("data", Need::Optional);
  if (!data) return data.error();
  for (const auto& [key, encoded] : *data) {
    auto decoded = base64_decode(encoded);
    if (!decoded) return Error{"not valid base64"}.at("data." + key);
    out.data.emplace(key, std::move(*decoded));
  }
  return out;
}

}  // namespace fedmetrics::k8s
