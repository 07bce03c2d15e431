#include "kube/client_runtime.hpp"

namespace fedmetrics::kube {

ClientRuntime::ClientRuntime(unsigned threads)
    : impl_(std::make_unique<Impl>(std::make_unique<transport::Runtime>(transport::RuntimeOptions{threads, false}))) {}

ClientRuntime::ClientRuntime(transport::Runtime& runtime) : impl_(std::make_unique<Impl>(runtime)) {}

// On the process runtime, its owner joins the threads (the last step of its
// stop order, after every component that uses them).
void ClientRuntime::stop() {
  if (impl_->owned) impl_->owned->stop();
}

ClientRuntime::~ClientRuntime() { stop(); }

async::Executor ClientRuntime::executor() { return impl_->runtime->executor(); }

}  // namespace fedmetrics::kube
