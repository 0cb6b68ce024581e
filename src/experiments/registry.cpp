#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include <sys/wait.h>

#include "builtin.hpp"
#include "marsden/error.hpp"
#include "marsden/experiments/experiment.hpp"

namespace marsden::experiments {

// ---------------------------------------------------------------------------------------
// Context

ExperimentContext::ExperimentContext(std::string experiment, std::filesystem::path out_dir,
                                     bool quick, ExperimentControl control)
    : experiment_(std::move(experiment)),
      out_dir_(std::move(out_dir)),
      quick_(quick),
      control_(std::move(control)),
      start_(std::chrono::steady_clock::now()),
      last_report_(start_),
      parameters_(record::Json::object()) {}

void ExperimentContext::report(bool always) {
  const auto now = std::chrono::steady_clock::now();
  if (!control_.progress || (!always && now - last_report_ < std::chrono::seconds(1))) return;
  last_report_ = now;
  control_.progress(experiment_, part_, std::chrono::duration<double>(now - start_).count());
}

void ExperimentContext::part(std::string name) {
  part_ = std::move(name);
  poll();
  report(true);
}

void ExperimentContext::poll() {
  if (control_.stop && control_.stop->load()) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    throw Interrupted("interrupted" + (part_.empty() ? std::string() : " in part '" + part_ + "'") +
                      " after " + number_text(std::round(elapsed * 10.0) / 10.0) + " s");
  }
  report(false);
}

run::PythonRun ExperimentContext::run_python(const std::vector<std::string>& args,
                                             run::PythonOptions options) {
  // The child's group is not the terminal's foreground group, so a Ctrl-C reaches this
  // process only, which raises the stop flag; the stop forwards it.
  options.stop = [this] {
    if (control_.stop && control_.stop->load()) return true;
    report(false);
    return false;
  };
  options.stop_grace_s = 10.0;
  const run::PythonRun r = run::run_python(run::python_command(), args, options);
  if (r.stopped || (r.start_error == 0 && WIFSIGNALED(r.wait_status) &&
                    WTERMSIG(r.wait_status) == SIGINT)) {
    poll();  // throws when the stop flag is up
    throw Interrupted("interrupted: Python was ended by SIGINT");
  }
  return r;
}

void ExperimentContext::set_interrupted(std::string message) {
  interrupted_ = true;
  message_ = std::move(message);
}

void ExperimentContext::add_parameter(const std::string& name, record::Json value) {
  parameters_.set(name, std::move(value));
}

void ExperimentContext::add_data_file(const std::filesystem::path& path,
                                      std::string description) {
  std::filesystem::path recorded = path;
  if (path.is_absolute()) {
    const auto rel = path.lexically_relative(out_dir_.is_absolute()
                                                 ? out_dir_
                                                 : std::filesystem::absolute(out_dir_));
    if (!rel.empty() && *rel.begin() != "..") recorded = rel;
  } else if (const auto rel = path.lexically_relative(out_dir_);
             !rel.empty() && *rel.begin() != "..") {
    recorded = rel;
  }
  data_files_.emplace_back(recorded.generic_string(), std::move(description));
}

void ExperimentContext::add_claim(Claim claim) { claims_.push_back(std::move(claim)); }

void ExperimentContext::add_note(std::string note) { notes_.push_back(std::move(note)); }

bool ExperimentContext::all_claims_hold() const {
  return std::all_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.holds; });
}

void ExperimentContext::write_results() const {
  record::Json files = record::Json::array();
  for (const auto& [path, description] : data_files_)
    files.push_back(record::Json::object().set("path", path).set("description", description));
  record::Json claims = record::Json::array();
  for (const Claim& c : claims_) {
    record::Json measured = std::holds_alternative<double>(c.measured)
                            ? record::Json(std::get<double>(c.measured))
                            : record::Json(std::get<std::string>(c.measured));
    claims.push_back(record::Json::object()
                         .set("id", c.id)
                         .set("statement", c.statement)
                         .set("source", c.source)
                         .set("measured", std::move(measured))
                         .set("expected", c.expected)
                         .set("holds", c.holds));
  }
  record::Json notes = record::Json::array();
  for (const std::string& n : notes_) notes.push_back(n);
  record::Json::object()
      .set("experiment", experiment_)
      .set("quick", quick_)
      .set("status", interrupted_ ? "interrupted" : "ok")
      .set("message", message_)
      .set("parameters", parameters_)
      .set("data_files", std::move(files))
      .set("claims", std::move(claims))
      .set("all_claims_hold", all_claims_hold())
      .set("notes", std::move(notes))
      .write_file(out_dir_ / "results.json");
}

// ---------------------------------------------------------------------------------------
// Registry

namespace {

struct Entry {
  std::string description;
  ExperimentFn fn;
};

std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> r;
  return r;
}

void ensure_builtins() {
  static std::once_flag once;
  std::call_once(once, register_builtin_experiments);
}

}  // namespace

void register_experiment(std::string name, std::string description, ExperimentFn fn) {
  if (name.empty()) throw std::invalid_argument("register_experiment: empty name");
  if (!fn) throw std::invalid_argument("register_experiment('" + name + "'): no function");
  if (registry().count(name))
    throw std::invalid_argument("register_experiment: '" + name + "' is already registered");
  registry().emplace(std::move(name), Entry{std::move(description), std::move(fn)});
}

std::vector<ExperimentInfo> list_experiments() {
  ensure_builtins();
  std::vector<ExperimentInfo> out;
  for (const auto& [name, e] : registry()) out.push_back({name, e.description});
  return out;
}

ExperimentOutcome run_experiment(const std::string& name, const std::filesystem::path& out_dir,
                                 bool quick, const ExperimentControl& control) {
  ensure_builtins();
  const auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& [n, e] : registry()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown experiment '" + name + "'; known experiments: " +
                     (known.empty() ? "(none)" : known));
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir.string() + ": cannot create output directory: " + ec.message());

  ExperimentContext ctx(name, out_dir, quick, control);
  try {
    it->second.fn(ctx);
  } catch (const Interrupted& e) {
    ctx.set_interrupted(e.what());
  }
  ctx.write_results();
  return {out_dir / "results.json", ctx.claims(), ctx.all_claims_hold(), ctx.interrupted(),
          ctx.message()};
}

// ---------------------------------------------------------------------------------------
// Plot scripts

std::filesystem::path python_package_dir() {
#ifdef MARSDEN_PYTHON_DIR
  return MARSDEN_PYTHON_DIR;
#else
  return {};
#endif
}

std::string run_failure(const run::PythonRun& r) {
  if (r.start_error != 0)
    return "cannot start " + run::python_command().executable + ": " + std::strerror(r.start_error);
  if (WIFSIGNALED(r.wait_status)) return "ended by signal " + std::to_string(WTERMSIG(r.wait_status));
  return "exit status " + std::to_string(WEXITSTATUS(r.wait_status));
}

namespace {

std::map<std::filesystem::path, std::filesystem::file_time_type> pngs(
    const std::filesystem::path& dir) {
  std::map<std::filesystem::path, std::filesystem::file_time_type> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".png")
      out[e.path()] = e.last_write_time(ec);
  return out;
}

}  // namespace

std::filesystem::path find_shipped_file(const std::string& relative) {
  std::vector<std::filesystem::path> roots;
  std::error_code ec;
  // An installed command's own share/marsden (PREFIX/bin/marsden, or marsden/bin/marsden
  // in the Python wheel): first, so that an installed copy reads what it was installed
  // with, whatever source tree it was built from.
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) roots.push_back(exe.parent_path().parent_path() / "share" / "marsden");
#ifdef MARSDEN_SOURCE_DIR
  roots.emplace_back(MARSDEN_SOURCE_DIR);
#endif
#ifdef MARSDEN_DATA_DIR
  roots.emplace_back(MARSDEN_DATA_DIR);
#endif
  for (const auto& root : roots)
    if (std::filesystem::is_regular_file(root / relative, ec)) return root / relative;
  return {};
}

bool run_plot_script(ExperimentContext& ctx, const std::string& script) {
  const std::filesystem::path path = find_shipped_file(script);
  if (path.empty()) {
    ctx.add_note("plot script " + script + " not found; no figures");
    return false;
  }
  run::PythonOptions quiet;
  quiet.output = run::PythonOutput::Discard;
  if (!ctx.run_python({"-c", "import matplotlib"}, quiet).succeeded()) {
    const run::PythonCommand python = run::python_command();
    ctx.add_note("python3 with matplotlib not available (" + python.executable + ", " +
                 python.origin + "); " + script + " was not run");
    return false;
  }
  const auto before = pngs(ctx.out_dir());
  const std::filesystem::path log = ctx.out_dir() / (path.stem().string() + ".plot.log");
  std::vector<std::filesystem::path> written;
  const auto collect = [&] {
    for (const auto& [png, time] : pngs(ctx.out_dir())) {
      const auto old = before.find(png);
      if (old == before.end() || old->second != time) written.push_back(png);
    }
  };
  ctx.part("plot " + path.filename().string());
  run::PythonOptions options;
  options.environment = {"MPLBACKEND=Agg"};
  options.output = run::PythonOutput::File;
  options.output_file = log;
  run::PythonRun r;
  try {
    r = ctx.run_python({path.string(), ctx.out_dir().string()}, options);
  } catch (const Interrupted&) {
    // A figure being written when the script was stopped may be cut short: none is kept.
    collect();
    std::error_code ec;
    for (const auto& png : written) std::filesystem::remove(png, ec);
    std::filesystem::remove(log, ec);
    throw;
  }
  collect();
  for (const auto& png : written) ctx.add_data_file(png, "figure from " + script);
  if (!r.succeeded()) {
    ctx.add_note("plot script " + script + " failed (" + run_failure(r) + "); see " +
                 log.filename().string());
    ctx.add_data_file(log, "output of the failed plot script " + script);
    return false;
  }
  std::error_code ec;
  std::filesystem::remove(log, ec);
  return true;
}

}  // namespace marsden::experiments
