#include "fedmetrics/controller/autoscaler_metrics.hpp"

namespace fedmetrics::controller {

std::string_view to_string(ScaleAction action) {
  switch (action) {
    case ScaleAction::ScaleUp: return "scale_up";
    case ScaleAction::ScaleDown: return "scale_down";
    case ScaleAction::None: break;
  }
  return "none";
}

std::string_view to_string(SyncError error) {
  switch (error) {
    case SyncError::Spec: return "spec";
    case SyncError::Internal: return "internal";
    case SyncError::None: break;
  }
  return "none";
}

}  // namespace fedmetrics::controller
