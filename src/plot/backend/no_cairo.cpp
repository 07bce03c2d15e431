// The renderer of a program built without cairo (FEDMETRICS_PLOT off, or
// libcairo2-dev not found): every plot is refused with the reason.
#include "fedmetrics/plot/render.hpp"

namespace fedmetrics::plot {

bool rendering_available() { return false; }

k8s::Expected<Rendered> render(const Chart&, ImageFormat, const std::string&) {
  return k8s::Error{
      "--plot: this fedmetrics was built without cairo (FEDMETRICS_PLOT=OFF or libcairo2-dev missing); "
      "install libcairo2-dev and build again"};
}

}  // namespace fedmetrics::plot
