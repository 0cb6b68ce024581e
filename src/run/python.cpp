// Starting Python (marsden/run/python.hpp): posix_spawn with an argv vector, the child's
// output read through pipes polled together, so that neither fills while the other is read.
#include "marsden/run/python.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
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

// Reads both pipes to their end; false when the deadline comes first.
bool drain(Fd& out, Fd& err, PythonRun& r, std::chrono::steady_clock::time_point deadline) {
  char buffer[4096];
  while (out.get() >= 0 || err.get() >= 0) {
    pollfd fds[2] = {{out.get(), POLLIN, 0}, {err.get(), POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 60000)));
    if (ready == 0) continue;
    if (ready < 0) {
      if (errno == EINTR) continue;
      return true;
    }
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
  return true;
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

// This process's environment, with package_dir first on PYTHONPATH when it holds the
// module.
std::vector<std::string> main_environment(const PythonMain& main) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  std::error_code ec;
  if (main.package_dir.empty() ||
      !std::filesystem::exists(main.package_dir / "marsden" / (main.module + ".py"), ec))
    return env;
  std::string path = "PYTHONPATH=" + main.package_dir.string();
  const auto old = std::find_if(env.begin(), env.end(), [](const std::string& e) {
    return std::string_view(e).substr(0, 11) == "PYTHONPATH=";
  });
  if (old != env.end()) {
    if (old->size() > 11) path.append(1, ':').append(*old, 11);
    env.erase(old);
  }
  env.push_back(std::move(path));
  return env;
}

[[noreturn]] void cannot_run(const std::string& python, const std::string& needs) {
  throw InputError("cannot run " + python + " (" + needs + "; set MARSDEN_PYTHON)");
}

}  // namespace

PythonRun run_python(const PythonCommand& python, const std::vector<std::string>& args,
                     double time_limit_s) {
  std::vector<std::string> argv_strings = {python.executable};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv = c_strings(argv_strings);
  Pipe out = make_pipe(), err = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  pid_t pid = 0;
  PythonRun r;
  r.start_error = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (r.start_error != 0) return r;
  out.write.reset();
  err.write.reset();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(time_limit_s));
  if (!drain(out.read, err.read, r, deadline)) {
    ::kill(pid, SIGKILL);
    r.timed_out = true;
  }
  while (::waitpid(pid, &r.wait_status, 0) < 0)
    if (errno != EINTR) break;
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
