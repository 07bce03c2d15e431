#pragma once
// The Events an EventRecorder writes, kept; patches of names in `gone`
// answer 404 (the control plane's --event-ttl removed them).
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fedmetrics/controller/event_correlator.hpp"

namespace fedmetrics::testing {

struct FakeEventWriter final : controller::EventWriter {
  std::mutex mutex;
  std::vector<controller::Event> created;
  std::vector<controller::Event> patched;
  std::set<std::string> gone;
  void create_event(const controller::Event& e, Done done) override {
    {
      std::lock_guard lock(mutex);
      created.push_back(e);
    }
    done(true);
  }
  void patch_event(const controller::Event& e, Done done) override {
    bool found = false;
    {
      std::lock_guard lock(mutex);
      found = !gone.count(e.name);
      if (found) patched.push_back(e);
    }
    done(found);
  }
};

}  // namespace fedmetrics::testing
