#pragma once
// A watch a port started for its caller: it runs while this object lives,
// and its callback is never called after the object is destroyed.
namespace fedmetrics::controller {

class Watch {
 public:
  virtual ~Watch() = default;
};

}  // namespace fedmetrics::controller
