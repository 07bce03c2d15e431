#pragma once
// Standard base64 (RFC 4648, with padding), as Go's encoding/json writes
// []byte fields: Secret data, kubeconfig *-data, APIService caBundle.
#include <optional>
#include <string>
#include <string_view>

namespace fedmetrics::k8s {

std::string base64_encode(std::string_view bytes);
// White space is ignored; nullopt when the text is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace fedmetrics::k8s
