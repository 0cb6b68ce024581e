// "module" fields of scene and problem files: the reader runs
//   PYTHON -m marsden.symbolic.module FILE --kind system|potential|force|constraint
//          [--object NAME]
// (python/marsden/symbolic/module.py) as a child process, its arguments an argv vector (no
// shell), and reads the JSON object it prints in place of the field's object.
#include "python_module.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "marsden/io/python_modules.hpp"
#include "scene_detail.hpp"

extern char** environ;

namespace marsden::io {

namespace {
std::atomic<PythonModules> g_python_modules{PythonModules::Run};
}  // namespace

void set_python_modules(PythonModules policy) { g_python_modules = policy; }
PythonModules python_modules() { return g_python_modules; }

namespace detail {

namespace {

// Which Python runs modules, and why that one (for messages): $MARSDEN_PYTHON, else the
// interpreter the build was configured with (src/CMakeLists.txt) when it is still there,
// else python3 from PATH.
struct PythonCommand {
  std::string executable;
  std::string origin;
};

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

// What the child wrote and how it ended; start_error is the errno of a failed start,
// timed_out says it was killed at its time limit.
struct ChildResult {
  int start_error = 0;
  int wait_status = 0;
  bool timed_out = false;
  std::string out, err;
};

// How long a module may run (compiling its objects included): $MARSDEN_MODULE_TIMEOUT
// seconds, else 600 s, so that a module that never returns cannot hold the reader.
struct TimeLimit {
  double seconds;
  std::string origin;
  std::string text() const {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g s", seconds);
    return buffer;
  }
};

TimeLimit module_time_limit() {
  if (const char* env = std::getenv("MARSDEN_MODULE_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(s > 0.0) || !std::isfinite(s))
      throw InputError("MARSDEN_MODULE_TIMEOUT: expected a positive number of seconds, got '" +
                       std::string(env).substr(0, 100) + "'");
    return {s, "$MARSDEN_MODULE_TIMEOUT"};
  }
  return {600.0, "the default; set MARSDEN_MODULE_TIMEOUT to change it"};
}

// The answer is one short JSON object; more is kept only to say so. Of stderr the tail
// is what a message shows.
constexpr std::size_t kMaxStdout = std::size_t{1} << 20;
constexpr std::size_t kKeptStderr = std::size_t{64} << 10;

// Reads both pipes to their end (polling, so that neither fills while the other is read);
// false when the deadline comes first.
bool drain(Fd& out, Fd& err, ChildResult& r, std::chrono::steady_clock::time_point deadline) {
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

ChildResult run_child(const std::vector<std::string>& args, double time_limit_s) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Pipe out = make_pipe(), err = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  pid_t pid = 0;
  ChildResult r;
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

// The last lines of a process's stderr, at most max_chars of them, for a message.
std::string tail(std::string_view text, std::size_t max_chars = 1500) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() > max_chars) {
    text.remove_prefix(text.size() - max_chars);
    if (const auto nl = text.find('\n'); nl != std::string_view::npos) text.remove_prefix(nl + 1);
  }
  return std::string(text);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || s.size() > 200 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The object that stands in for `field` ({"module": path, "object": name}): the "system"
// object (kind "system") or a tree element {"library": path} ("potential", "force",
// "constraint").
nlohmann::json run_module(const JsonNode& field, const std::string& kind) {
  if (field.has("library")) field.fail("give either \"module\" or \"library\", not both");
  field.expect_keys({"module", "object"});
  const JsonNode module = field.at("module");
  const std::string written = module.string();
  if (python_modules() == PythonModules::Refuse)
    module.fail("names a Python module ('" + shown(written) +
                "'), which this reader does not run (modules are refused here); name the "
                "compiled library instead (\"library\")");
  const std::filesystem::path path = path_relative_to(module, field.file());
  std::error_code ec;
  if (written.empty() || written.find('\0') != std::string::npos ||
      !std::filesystem::is_regular_file(path, ec))
    module.fail("no such Python file: " + shown(path.string(), 300));
  const PythonCommand python = python_command();
  std::vector<std::string> args = {python.executable, "-m", "marsden.symbolic.module",
          std::filesystem::absolute(path, ec).string(), "--kind", kind};
  if (const auto o = field.find("object")) {
    const std::string name = o->string();
    if (!is_identifier(name)) o->fail("expected a Python attribute name, got '" + shown(name) + "'");
    args.insert(args.end(), {"--object", name});
  }

  const std::string what = "Python module '" + shown(written) + "'";
  const TimeLimit limit = module_time_limit();
  const ChildResult r = run_child(args, limit.seconds);
  if (r.timed_out)
    module.fail(what + ": Python ('" + shown(python.executable, 300) + "') did not finish within " +
                limit.text() + " (" + limit.origin + ") and was stopped\n" +
                tail(r.err));
  if (r.start_error != 0 ||
      (WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 127 && r.err.empty()))
    module.fail(what + ": cannot run Python '" + shown(python.executable, 300) + "' (" +
                python.origin + "): " + std::strerror(r.start_error ? r.start_error : ENOENT) +
                "; set MARSDEN_PYTHON to a Python 3 that can import marsden");
  if (WIFSIGNALED(r.wait_status))
    module.fail(what + ": Python ('" + shown(python.executable, 300) + "') was ended by signal " +
                std::to_string(WTERMSIG(r.wait_status)) + "\n" + tail(r.err));
  if (WEXITSTATUS(r.wait_status) != 0) {
    const bool no_package = r.err.find("No module named 'marsden") != std::string::npos;
    module.fail(what + " failed (" + shown(python.executable, 300) + ", " + python.origin +
                ", exited with status " + std::to_string(WEXITSTATUS(r.wait_status)) + "):\n" +
                tail(r.err) +
                (no_package ? "\nthis Python cannot import marsden: set PYTHONPATH to the "
                              "folder that holds the package, or MARSDEN_PYTHON to a Python 3 "
                              "that can import it"
                            : ""));
  }
  nlohmann::json answer = nlohmann::json::parse(r.out, nullptr, false);
  const bool system = kind == "system";
  if (!answer.is_object() || !answer.contains("library") || !answer["library"].is_string() ||
      (system && !answer.contains("type")))
    module.fail(what + ": python -m marsden.symbolic.module printed no " +
                (system ? "\"system\" object" : "{\"library\": path}") + " (got " +
                shown(tail(r.out)) + ")");
  return answer;
}

}  // namespace

void resolve_python_modules(JsonDocument& doc) {
  if (!doc.root.is_object() || !doc.root.contains("system")) return;
  const JsonNode sys = JsonNode(doc).at("system");
  if (!sys.is_object()) return;
  if (sys.has("module")) {
    nlohmann::json resolved = run_module(sys, "system");
    doc.root["system"] = std::move(resolved);
    return;
  }
  if (sys.raw().value("type", nlohmann::json()) != "tree") return;
  constexpr std::pair<const char*, const char*> kElements[] = {
      {"potentials", "potential"}, {"forces", "force"}, {"generated_constraints", "constraint"}};
  std::vector<std::pair<std::pair<const char*, std::size_t>, nlohmann::json>> resolved;
  for (const auto& [key, kind] : kElements) {
    const auto elements = sys.find(key);
    if (!elements || !elements->is_array()) continue;
    for (std::size_t i = 0; i < elements->array_size(); ++i)
      if (const JsonNode e = (*elements)[i]; e.is_object() && e.has("module"))
        resolved.push_back({{key, i}, run_module(e, kind)});
  }
  for (auto& [where, element] : resolved)
    doc.root["system"][where.first][where.second] = std::move(element);
}

}  // namespace detail

}  // namespace marsden::io
