#pragma once
// apimachinery's reason for an HTTP code, for an error answer that carries no
// Status (errors.go NewGenericServerResponse): "NotFound" for 404 and so on,
// "InternalError" for a 5xx it names none for, and "" (StatusReasonUnknown)
// for other codes. k8s::to_status answers with it and the plugin reports an
// answer with it: one table for both sides. A header of its own, as status.hpp
// is included by nearly every file.
#include <string_view>

namespace fedmetrics::k8s {

std::string_view reason_for_code(int code);

}  // namespace fedmetrics::k8s
