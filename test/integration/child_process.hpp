#pragma once
// Starts a program of ours for an integration test, reads its stdout line by
// line until a marker, and kills it (SIGTERM, then SIGKILL) when the test ends.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace fedmetrics::testing {

class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    if (rc != 0) {
      close(pipe_fds[0]);
      throw std::runtime_error("cannot start " + argv[0]);
    }
    out_ = pipe_fds[0];
  }

  ~ChildProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = 0;
          break;
        }
        usleep(20'000);
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    if (out_ >= 0) close(out_);
  }

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reads lines until one contains `marker`; returns every line read. Throws
  // with what was read when the marker does not come within `timeout`.
  std::vector<std::string> read_until(const std::string& marker, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::string> lines;
    for (;;) {
      auto nl = buffer_.find('\n');
      while (nl != std::string::npos) {
        lines.push_back(buffer_.substr(0, nl));
        buffer_.erase(0, nl + 1);
        if (lines.back().find(marker) != std::string::npos) return lines;
        nl = buffer_.find('\n');
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{out_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char chunk[4096];
      auto n = read(out_, chunk, sizeof chunk);
      if (n <= 0) break;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    std::string seen;
    for (const auto& l : lines) seen += l + "\n";
    throw std::runtime_error("no line with \"" + marker + "\" in time; the program printed:\n" + seen + buffer_);
  }

 private:
  pid_t pid_ = 0;
  int out_ = -1;
  std::string buffer_;
};

}  // namespace fedmetrics::testing
