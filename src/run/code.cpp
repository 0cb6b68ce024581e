// The code that scene and problem files name, run where its user allows it
// (marsden/run/code.hpp): modules through python -m marsden.symbolic.module
// (python/marsden/symbolic/module.py), which prints in the module's place the JSON object a
// file naming the compiled library would hold; libraries through their family's loader.
#include "marsden/run/code.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <nlohmann/json.hpp>

#include "io/json_access.hpp"
#include "marsden/error.hpp"
#include "marsden/run/python.hpp"

namespace marsden::run {

namespace {

using io::CodeReference;
using io::detail::shown;

constexpr const char* kTrustedFolders = "MARSDEN_TRUSTED_FOLDERS";

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

// The last lines of a process's stderr, at most max_chars of them, for a message.
std::string tail(std::string_view text, std::size_t max_chars = 1500) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.size() > max_chars) {
    text.remove_prefix(text.size() - max_chars);
    if (const auto nl = text.find('\n'); nl != std::string_view::npos) text.remove_prefix(nl + 1);
  }
  return std::string(text);
}

// Runs a loader that validates the library and prefixes its InputError with the file and
// field of the reference.
template <class F>
auto with_reference(const CodeReference& ref, F&& load) {
  try {
    return load();
  } catch (const InputError& e) {
    ref.fail(e.what());
  }
}

}  // namespace

std::vector<std::filesystem::path> trusted_folders() {
  std::vector<std::filesystem::path> out;
  const char* env = std::getenv(kTrustedFolders);
  if (env == nullptr) return out;
  const std::string_view list(env);
  for (std::size_t start = 0; start <= list.size();) {
    std::size_t end = list.find(':', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string entry(list.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    const std::filesystem::path folder(entry);
    if (!folder.is_absolute())
      throw InputError(std::string(kTrustedFolders) + ": '" + shown(entry, 300) +
                       "' is not an absolute path; list absolute folders separated by ':'");
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::canonical(folder, ec);
    if (!ec && std::filesystem::is_directory(canonical, ec)) out.push_back(canonical);
  }
  return out;
}

bool in_trusted_folder(const std::filesystem::path& file) {
  const std::vector<std::filesystem::path> folders = trusted_folders();
  if (folders.empty()) return false;
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(file, ec);
  if (ec) return false;
  return std::any_of(folders.begin(), folders.end(), [&](const std::filesystem::path& folder) {
    return std::mismatch(folder.begin(), folder.end(), canonical.begin(), canonical.end()).first ==
           folder.end();
  });
}

CodeLoader::CodeLoader(CodeAllowance allowance, std::filesystem::path file)
    : allowance_(std::move(allowance)), file_(std::move(file)) {}

void CodeLoader::check(const CodeReference& ref) const {
  const bool from_file = !file_.empty();
  if (allowance_.allow_code || (from_file && in_trusted_folder(file_))) return;
  const bool module = ref.kind == CodeReference::Kind::Module;
  ref.fail(std::string(module ? "names a Python module ('" : "names a compiled library ('") +
           shown(ref.written, 300) + "'), code that reading " + (from_file ? "the file" : "the text") +
           " would " + (module ? "run" : "load and run") +
           "; Marsden runs such code only where its user allows it. If you trust " +
           (from_file ? "this file" : "this text") + ", " +
           allowance_.how_to_allow +
           (from_file ? std::string(", or add its folder to $") + kTrustedFolders : "") +
           " (docs/reliability.md, \"Trust model\")");
}

std::string CodeLoader::module_object(const CodeReference& module) const {
  check(module);
  std::error_code ec;
  if (module.written.empty() || module.written.find('\0') != std::string::npos ||
      !std::filesystem::is_regular_file(module.path, ec))
    module.fail("no such Python file: " + shown(module.path.string(), 300));
  const PythonCommand python = python_command();
  std::vector<std::string> args = {"-m", "marsden.symbolic.module",
                                   std::filesystem::absolute(module.path, ec).string(), "--kind",
                                   module.role};
  if (!module.object.empty()) args.insert(args.end(), {"--object", module.object});

  const std::string what = "Python module '" + shown(module.written) + "'";
  const TimeLimit limit = module_time_limit();
  PythonOptions options;
  options.time_limit_s = limit.seconds;
  const PythonRun r = run_python(python, args, options);
  if (r.timed_out)
    module.fail(what + ": Python ('" + shown(python.executable, 300) + "') did not finish within " +
                limit.text() + " (" + limit.origin + ") and was stopped\n" + tail(r.err));
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
  const nlohmann::json answer = nlohmann::json::parse(r.out, nullptr, false);
  const bool system = module.role == "system";
  if (!answer.is_object() || !answer.contains("library") || !answer["library"].is_string() ||
      (system && !answer.contains("type")))
    module.fail(what + ": python -m marsden.symbolic.module printed no " +
                (system ? "\"system\" object" : "{\"library\": path}") + " (got " +
                shown(tail(r.out)) + ")");
  return answer.dump();
}

io::GeneratedHolonomicModel CodeLoader::holonomic_vehicle(const CodeReference& library) const {
  check(library);
  return with_reference(library, [&]() -> io::GeneratedHolonomicModel {
    if (vehicle::generated_vehicle_group(library.path) == 2)
      return vehicle::GeneratedPlanarVehicle::load(library.path);
    return vehicle::GeneratedVehicle::load(library.path);
  });
}

std::shared_ptr<const vehicle::GeneratedRdpVehicle> CodeLoader::rdp_vehicle(
    const CodeReference& library) const {
  check(library);
  return with_reference(library, [&] { return vehicle::GeneratedRdpVehicle::load(library.path); });
}

std::shared_ptr<const nonholonomic::GeneratedNonholonomicModel> CodeLoader::nonholonomic_model(
    const CodeReference& library) const {
  check(library);
  return with_reference(
      library, [&] { return nonholonomic::GeneratedNonholonomicModel::load(library.path); });
}

void CodeLoader::add_tree_element(tree::ModelBuilder& builder,
                                  const CodeReference& library) const {
  check(library);
  with_reference(library, [&] {
    const std::string path = library.path.string();
    if (library.role == "potential")
      builder.add_generated_potential(path);
    else if (library.role == "force")
      builder.add_generated_force(path);
    else
      builder.add_generated_constraint(path);
  });
}

io::Scene load_scene(const std::filesystem::path& path, const CodeAllowance& allowance) {
  return io::load_scene(path, CodeLoader(allowance, path));
}

io::Scene parse_scene(std::string_view text, const std::string& label,
                      const CodeAllowance& allowance) {
  return io::parse_scene(text, label, CodeLoader(allowance, {}));
}

io::Problem load_problem(const std::filesystem::path& path, const CodeAllowance& allowance) {
  return io::load_problem(path, CodeLoader(allowance, path));
}

io::Problem parse_problem(std::string_view text, const std::string& label,
                          const CodeAllowance& allowance) {
  return io::parse_problem_text(text, label, CodeLoader(allowance, {}));
}

}  // namespace marsden::run
