#include "fedmetrics/transport/http_message.hpp"

namespace fedmetrics::transport {

bool ResponseStream::write(std::string piece) {
  {
    std::lock_guard lock(mutex_);
    if (abandoned_) return false;
    if (closed_) return true;
    pieces_.push_back(std::move(piece));
  }
  wake();
  return true;
}

void ResponseStream::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  wake();
}

void ResponseStream::close_after(std::chrono::steady_clock::duration duration) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    close_at_ = std::chrono::steady_clock::now() + duration;
  }
  wake();  // a server already waiting learns its new end
}

void ResponseStream::on_abandon(std::function<void()> ended) {
  {
    std::lock_guard lock(mutex_);
    if (!abandoned_) {
      on_abandon_ = std::move(ended);
      return;
    }
  }
  ended();
}

ResponseStream::Pending ResponseStream::take() {
  std::lock_guard lock(mutex_);
  Pending pending;
  pending.pieces.swap(pieces_);
  pending.closed = closed_;
  pending.client_gone = abandoned_;
  pending.close_at = close_at_;
  return pending;
}

void ResponseStream::set_wakeup(std::function<void()> wakeup) {
  std::lock_guard lock(mutex_);
  wakeup_ = std::move(wakeup);
}

void ResponseStream::abandon() {
  std::function<void()> ended;
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    pieces_.clear();
    wakeup_ = nullptr;  // the server's side is gone: never call into it again
    ended.swap(on_abandon_);
  }
  // Outside the lock: the producer's side may be writing from another thread,
  // and `ended` may wait for it (a watch leaving its store).
  if (ended) ended();
}

void ResponseStream::wake() {
  std::function<void()> wakeup;
  {
    std::lock_guard lock(mutex_);
    wakeup = wakeup_;
  }
  if (wakeup) wakeup();
}

}  // namespace fedmetrics::transport
