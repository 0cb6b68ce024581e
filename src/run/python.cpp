// Starting Python (marsden/run/python.hpp): posix_spawn with an argv vector; a captured
// child's output read through pipes polled together, so that neither fills while the other
// is read, and the child watched every 20 ms for its time limit and its stop.
#include "marsden/run/python.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "marsden/error.hpp"

extern char** environ;

namespace marsden::run {

PythonCommand python_command() {
  if (const char* env = std::getenv("MARSDEN_PYTHON"); env != nullptr && *env != '\0')
    return {env, "$MARSDEN_PYTHON"};
#ifdef MARSDEN_CONFIGURED_PYTHON
  std::error_code ec;
  if (std::filesystem::is_regular_file(MARSDEN_CONFIGURED_PYTHON, ec))
    return {MARSDEN_CONFIGURED_PYTHON, "the interpreter this build was configured with"};
#endif
  return {"python3", "python3 on PATH"};
}

namespace {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw InputError(std::string("cannot create a pipe to Python: ") + std::strerror(errno));
  return {Fd(fds[0]), Fd(fds[1])};
}

// The answer is one short JSON object; more is kept only to say so. Of stderr the tail
// is what a message shows.
constexpr std::size_t kMaxStdout = std::size_t{1} << 20;
constexpr std::size_t kKeptStderr = std::size_t{64} << 10;

// Reads what is ready on the open pipes, waiting at most timeout_ms for something to be;
// a pipe at its end is closed.
void read_pipes(Fd& out, Fd& err, PythonRun& r, int timeout_ms) {
  char buffer[4096];
  pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) <= 0) return;
  for (int i = 0; i < 2; ++i) {
    Fd& fd = i == 0 ? out : err;
    if (fd.get() < 0 || fds[i].revents == 0) continue;
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fd.reset();
      continue;
    }
    std::string& text = i == 0 ? r.out : r.err;
    if (i == 0 && text.size() >= kMaxStdout) continue;
    text.append(buffer, static_cast<std::size_t>(n));
    if (i == 1 && text.size() > 2 * kKeptStderr) text.erase(0, text.size() - kKeptStderr);
  }
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The command line of marsden.MODULE.main(args).
std::vector<std::string> main_argv(const PythonMain& main) {
  std::vector<std::string> argv = {python_command().executable, "-c",
                                   "import sys, marsden." + main.module +
                                       " as m; sys.exit(m.main())"};
  argv.insert(argv.end(), main.args.begin(), main.args.end());
  return argv;
}

// The entry of env that sets the variable of `entry` (NAME=...), or env.end().
std::vector<std::string>::iterator entry_of(std::vector<std::string>& env,
                                            std::string_view entry) {
  const std::string_view name = entry.substr(0, entry.find('=') + 1);
  return std::find_if(env.begin(), env.end(), [&](const std::string& e) {
    return std::string_view(e).substr(0, name.size()) == name;
  });
}

// This process's environment with the entries of `extra` set over it, and package_dir (when
// not empty) first on PYTHONPATH.
std::vector<std::string> child_environment(const std::vector<std::string>& extra,
                                           const std::filesystem::path& package_dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& entry : extra) {
    if (const auto old = entry_of(env, entry); old != env.end()) env.erase(old);
    env.push_back(entry);
  }
  if (package_dir.empty()) return env;
  std::string path = "PYTHONPATH=" + package_dir.string();
  if (const auto old = entry_of(env, path); old != env.end()) {
    if (old->size() > 11) path.append(1, ':').append(*old, 11);
    env.erase(old);
  }
  env.push_back(std::move(path));
  return env;
}

// This process's environment, with package_dir first on PYTHONPATH when it holds the
// module.
std::vector<std::string> main_environment(const PythonMain& main) {
  std::error_code ec;
  const bool holds =
      !main.package_dir.empty() &&
      std::filesystem::exists(main.package_dir / "marsden" / (main.module + ".py"), ec);
  return child_environment({}, holds ? main.package_dir : std::filesystem::path());
}

[[noreturn]] void cannot_run(const std::string& python, const std::string& needs) {
  throw InputError("cannot run " + python + " (" + needs + "; set MARSDEN_PYTHON)");
}

}  // namespace

bool PythonRun::succeeded() const {
  return start_error == 0 && !timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

PythonRun run_python(const PythonCommand& python, const std::vector<std::string>& args,
                     const PythonOptions& options) {
  std::vector<std::string> argv_strings = {python.executable};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::error_code ec;
  const bool holds_package =
      !options.package_dir.empty() &&
      std::filesystem::is_directory(options.package_dir / "marsden", ec);
  std::vector<std::string> env_strings = child_environment(
      options.environment, holds_package ? options.package_dir : std::filesystem::path());
  std::vector<char*> argv = c_strings(argv_strings), env = c_strings(env_strings);

  PythonRun r;
  const bool capture = options.output == PythonOutput::Capture;
  Pipe out, err;
  Fd file;
  if (capture) {
    out = make_pipe();
    err = make_pipe();
  } else if (options.output == PythonOutput::File || options.output == PythonOutput::Append) {
    const int mode = options.output == PythonOutput::File ? O_TRUNC : O_APPEND;
    file = Fd(::open(options.output_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | mode, 0644));
    if (file.get() < 0) {
      r.start_error = errno;
      return r;
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (capture) {
    posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  } else if (options.output == PythonOutput::Discard) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  } else if (file.get() >= 0) {
    posix_spawn_file_actions_adddup2(&actions, file.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, file.get(), 2);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGDEF;
  const bool own_group = static_cast<bool>(options.stop);
  if (own_group) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = 0;
  r.start_error = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (r.start_error != 0) return r;
  out.write.reset();
  err.write.reset();
  file.reset();

  // Its group when it has one of its own, so that what it started ends with it.
  const pid_t target = own_group ? -pid : pid;
  using Clock = std::chrono::steady_clock;
  const auto deadline = std::isfinite(options.time_limit_s)
                            ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(options.time_limit_s))
                            : Clock::time_point::max();
  Clock::time_point stop_at;
  bool killed = false;
  // Once the pipes are closed (or there are none), waitpid is tried after 1 ms, 2, 4, ...,
  // then every 20 ms: a child that has closed its output is usually ending.
  auto nap = std::chrono::milliseconds(1);
  for (;;) {
    if (!killed && (out.read.get() >= 0 || err.read.get() >= 0)) {
      read_pipes(out.read, err.read, r, 20);
    } else {
      const pid_t w = ::waitpid(pid, &r.wait_status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      std::this_thread::sleep_for(nap);
      nap = std::min(2 * nap, std::chrono::milliseconds(20));
    }
    if (killed) continue;
    const auto now = Clock::now();
    if (now >= deadline) {
      r.timed_out = true;
    } else if (options.stop && !r.stopped && options.stop()) {
      ::kill(target, SIGINT);
      r.stopped = true;
      stop_at = now;
    }
    if (r.timed_out ||
        (r.stopped && now - stop_at > std::chrono::duration<double>(options.stop_grace_s))) {
      ::kill(target, SIGKILL);
      killed = true;
      // What it started may still hold the pipes: they are read no further.
      out.read.reset();
      err.read.reset();
    }
  }
  return r;
}

int call_python_main(const PythonMain& main, const std::string& needs) {
  std::vector<std::string> argv_strings = main_argv(main);
  std::vector<std::string> env_strings = main_environment(main);
  std::vector<char*> argv = c_strings(argv_strings), env = c_strings(env_strings);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), env.data()) != 0)
    cannot_run(argv_strings[0], needs);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waiting for " + argv_strings[0] + " failed");
  return status;
}

void exec_python_main(const PythonMain& main, const std::string& needs) {
  std::vector<std::string> argv_strings = main_argv(main);
  std::vector<std::string> env_strings = main_environment(main);
  std::vector<char*> argv = c_strings(argv_strings), env = c_strings(env_strings);
  ::execvpe(argv[0], argv.data(), env.data());
  cannot_run(argv_strings[0], needs);
}

}  // namespace marsden::run
