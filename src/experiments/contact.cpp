// contact: the maximal engine's hard contact with Coulomb friction against closed forms
// (docs/contact.md). Each case is one free body on a half-space; claims as measured:
//   - a box sliding with mu = 0.25 from v = (4, 0.8, 0) m/s stops after |v|^2 / (2 mu g) =
//     3.392457 m, within 1 % at dt = 0.01 s, first order in dt, on its heading to 1e-9 rad;
//   - a block on a 20 degree incline with mu = 0.5 stays put (under 1e-9 m in 10 s);
//   - on a 30 degree incline with mu = 0.15 it slides at g (sin - mu cos) = 3.630644 m/s^2;
//   - a solid sphere rolls down a 15 degree incline at (5/7) g sin = 1.813582 m/s^2, second
//     order in dt;
//   - Dojo's tossed box (edge 0.5 m, mu = 0.1) comes to rest on a face at dt = 0.1, 0.05,
//     0.01 and 0.005 s;
//   - structural: no contact deeper than the tolerance and the compliance allow, and with
//     plastic contact and no inputs the energy never rises above its start;
//   - a ball released 1 m above the ground with restitution 1 bounces at sqrt(2 / g) =
//     0.451524 s and every 0.903047 s after, every apex at 1 m, to 1e-10 at dt = 0.01 and
//     0.1 s, with no energy drift over 10^6 steps; with restitution 0.5 its apexes are 0.25,
//     0.0625 and 0.015625 m, then it rests;
//   - Unitree A1 (examples/scenes/a1_standing.json) stands, when example-robot-data is
//     installed.
// Contact between bodies is not built yet: not claimed.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "experiments/builtin.hpp"
#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/run.hpp"

namespace marsden::experiments {

namespace {

using maximal::BodyState;
using maximal::Data;
using maximal::Model;
using maximal::StepOptions;

constexpr double kG = 9.81;
constexpr double kDegree = std::numbers::pi / 180.0;

// What every run adds to the structural claims.
struct Structure {
  double worst_excess = -std::numeric_limits<double>::infinity();  // sink beyond allowance (m)
  double worst_rise = -std::numeric_limits<double>::infinity();    // energy above start (J)
  std::vector<std::string> failures;
};

Model one_body(const maximal::Body& body, const geometry::Shape& shape, double mu,
               const geometry::HalfSpace& plane) {
  maximal::Contacts contacts;
  contacts.shapes.push_back({body.name, 0, shape, mu});
  contacts.surfaces.push_back({"surface", plane, 0.0});
  return Model({body}, {}, Vec3(0.0, 0.0, -kG), {}, contacts);
}

geometry::HalfSpace incline(double a) {
  return geometry::HalfSpace(Vec3(-std::sin(a), 0.0, std::cos(a)), 0.0);
}

// Steps `steps` times; `each` sees the data and the status after every step. Returns false
// on a failed step (named in s.failures). The energy is checked only where nothing drives
// the body.
bool run_steps(ExperimentContext& ctx, const Model& model, Data& data, const StepOptions& options,
               long steps, const std::string& label, Structure& s, bool energy,
               const std::function<void(const Data&, const maximal::StepStatus&)>& each = {}) {
  const double e0 = maximal::energy(model, data.state);
  for (long k = 0; k < steps; ++k) {
    const maximal::StepStatus status = maximal::step(model, data, options);
    if (!status.ok()) {
      s.failures.push_back(label + " at step " + std::to_string(k) + ": " +
                           maximal::describe(status.failure));
      return false;
    }
    s.worst_excess = std::max(s.worst_excess, maximal::excess_penetration(model, data, options));
    if (energy) s.worst_rise = std::max(s.worst_rise, maximal::energy(model, data.state) - e0);
    if (each) each(data, status);
    if (k % 200 == 0) ctx.poll();
  }
  return true;
}

std::string text(double x) {
  std::ostringstream o;
  o.precision(7);
  o << x;
  return o.str();
}

void contact_experiment(ExperimentContext& ctx) {
  const bool quick = ctx.quick();
  Structure s;
  const std::filesystem::path csv_path = ctx.out_dir() / "contact.csv";
  record::CsvWriter csv(csv_path, {"case", "dt", "t", "value"}, record::CsvWriter::Staging::Hidden);

  // The sliding box: distance and heading at two steps.
  ctx.part("sliding box");
  const Vec3 half(0.1, 0.1, 0.1);
  const double slide_exact = (16.0 + 0.64) / (2.0 * 0.25 * kG);
  std::vector<double> slide_error;
  double heading_error = 0.0;
  for (const double dt : {0.01, 0.005}) {
    const Model model = one_body(maximal::solid_box("box", 1.0, half), geometry::Box(half), 0.25,
                                 geometry::HalfSpace(Vec3::UnitZ(), 0.0));
    BodyState st;
    st.x = Vec3(0.0, 0.0, half.z());
    st.v = Vec3(4.0, 0.8, 0.0);
    Data data(model, {st});
    StepOptions options;
    options.dt = dt;
    int k = 0;
    const bool ok = run_steps(ctx, model, data, options, int(std::lround(2.0 / dt)),
                              "sliding box at dt " + text(dt), s, true,
                              [&](const Data& d, const maximal::StepStatus&) {
                                csv.write_row({0.0, dt, ++k * dt, d.state[0].v.norm()});
                              });
    if (!ok) continue;
    const Vec3 moved = data.state[0].x - st.x;
    slide_error.push_back(std::abs(moved.head<2>().norm() - slide_exact));
    heading_error = std::max(heading_error,
                             std::abs(std::atan2(moved.y(), moved.x()) - std::atan2(0.8, 4.0)));
  }
  const bool slide_ok = slide_error.size() == 2;
  const double slide_order = slide_ok ? std::log2(slide_error[0] / slide_error[1]) : 0.0;

  // Blocks on inclines.
  ctx.part("inclines");
  auto block_on = [&](double a, double mu) {
    const Model model = one_body(maximal::solid_box("block", 1.0, half), geometry::Box(half), mu,
                                 incline(a));
    BodyState st;
    st.x = half.z() * Vec3(-std::sin(a), 0.0, std::cos(a));
    st.q = Quat::exp(Vec3(0.0, -a, 0.0));
    return std::pair{model, st};
  };
  double drift = std::numeric_limits<double>::infinity();
  const double held_s = quick ? 2.0 : 10.0;
  {
    auto [model, st] = block_on(20.0 * kDegree, 0.5);
    Data data(model, {st});
    StepOptions options;
    if (run_steps(ctx, model, data, options, int(std::lround(held_s / options.dt)),
                  "held block", s, true))
      drift = (data.state[0].x - st.x).norm();
  }
  const double slide_a_exact = kG * (std::sin(30.0 * kDegree) - 0.15 * std::cos(30.0 * kDegree));
  double slide_a_error = std::numeric_limits<double>::infinity();
  {
    auto [model, st] = block_on(30.0 * kDegree, 0.15);
    Data data(model, {st});
    StepOptions options;
    if (run_steps(ctx, model, data, options, 100, "sliding block", s, false)) {
      const Vec3 down(-std::cos(30.0 * kDegree), 0.0, -std::sin(30.0 * kDegree));
      slide_a_error = std::abs(data.state[0].v.dot(down) - slide_a_exact);
    }
  }

  // The rolling sphere at two steps.
  ctx.part("rolling sphere");
  const double roll_exact = 5.0 / 7.0 * kG * std::sin(15.0 * kDegree);
  std::vector<double> roll_error;
  for (const double dt : {0.01, 0.005}) {
    const double r = 0.1, a = 15.0 * kDegree;
    const Model model = one_body(maximal::solid_sphere("ball", 1.0, r), geometry::Sphere(r), 1.0,
                                 incline(a));
    BodyState st;
    st.x = r * Vec3(-std::sin(a), 0.0, std::cos(a));
    Data data(model, {st});
    StepOptions options;
    options.dt = dt;
    const int steps = int(std::lround(1.0 / dt));
    if (!run_steps(ctx, model, data, options, steps, "rolling sphere at dt " + text(dt), s, false))
      continue;
    const Vec3 down(-std::cos(a), 0.0, -std::sin(a));
    roll_error.push_back(std::abs(data.state[0].v.dot(down) / (steps * dt) - roll_exact));
  }
  const bool roll_ok = roll_error.size() == 2;
  const double roll_order = roll_ok ? std::log2(roll_error[0] / roll_error[1]) : 0.0;

  // Dojo's toss.
  ctx.part("tossed box");
  const Vec3 big(0.25, 0.25, 0.25);
  double toss_speed = 0.0, toss_height = 0.0;
  int toss_runs = 0;
  const std::vector<double> toss_dts =
      quick ? std::vector<double>{0.1, 0.01} : std::vector<double>{0.1, 0.05, 0.01, 0.005};
  for (const double dt : toss_dts) {
    const Model model = one_body(maximal::solid_box("box", 1.0, big), geometry::Box(big), 0.1,
                                 geometry::HalfSpace(Vec3::UnitZ(), 0.0));
    BodyState st;
    st.x = Vec3(0.0, 0.0, 1.0);
    st.v = Vec3(1.0, 0.3, 0.2);
    st.omega = Vec3(2.5, -1.0, 2.0);
    Data data(model, {st});
    StepOptions options;
    options.dt = dt;
    int k = 0;
    if (!run_steps(ctx, model, data, options, int(std::lround(6.0 / dt)),
                   "tossed box at dt " + text(dt), s, true,
                   [&](const Data& d, const maximal::StepStatus&) {
                     csv.write_row({1.0, dt, ++k * dt, d.state[0].x.z()});
                   }))
      continue;
    ++toss_runs;
    toss_speed = std::max({toss_speed, data.state[0].v.norm(), data.state[0].omega.norm()});
    toss_height = std::max(toss_height, std::abs(data.state[0].x.z() - 0.25));
  }
  // The bouncing ball (docs/contact.md, Impacts): radius 0.1 m, released at rest with its
  // lowest point 1 m up; rest at t = 0 is the interval velocity -g dt / 2.
  ctx.part("bouncing ball");
  struct Bounce {
    double worst_time = 0.0, worst_apex = 0.0;  // against the closed forms (s, m)
    int impacts = 0;
    std::vector<double> apexes;                 // after each impact (m)
    double rest_speed = 0.0, rest_height = 0.0;
    bool ok = false;
  };
  const auto bounce = [&](double e, double dt, long steps, bool record) {
    Bounce b;
    const double r = 0.1, first = std::sqrt(2.0 / kG);
    maximal::Contacts contacts;
    contacts.shapes.push_back({"ball", 0, geometry::Sphere(r), 0.0, e});
    contacts.surfaces.push_back({"ground", geometry::HalfSpace(Vec3::UnitZ(), 0.0), 0.0});
    const Model model({maximal::solid_sphere("ball", 1.0, r)}, {}, Vec3(0.0, 0.0, -kG), {},
                      contacts);
    Data data(model);
    data.state[0].x = Vec3(0.0, 0.0, 1.0 + r);
    data.state[0].v = Vec3(0.0, 0.0, 0.5 * kG * dt);
    StepOptions options;
    options.dt = dt;
    long k = 0;
    b.ok = run_steps(ctx, model, data, options, steps,
                     "ball (e " + text(e) + ") at dt " + text(dt), s, false,
                     [&](const Data& d, const maximal::StepStatus& status) {
                       const double v = d.state[0].v.z() - 0.5 * kG * dt;  // at t_k
                       const double apex = d.state[0].x.z() - r + v * v / (2.0 * kG);
                       if (status.impacts > 0) {
                         b.apexes.push_back(apex);
                         b.worst_time =
                             std::max(b.worst_time, std::abs(d.contact[0].impact_time -
                                                             (2 * b.impacts + 1) * first));
                         b.impacts += status.impacts;
                       }
                       b.worst_apex = std::max(b.worst_apex, std::abs(apex - 1.0));
                       if (record) csv.write_row({2.0 + e, dt, ++k * dt, d.state[0].x.z() - r});
                     });
    b.rest_speed = data.state[0].v.norm();
    b.rest_height = std::abs(data.state[0].x.z() - r);
    return b;
  };
  const Bounce elastic_fine = bounce(1.0, 0.01, 500, true);
  const Bounce elastic_coarse = bounce(1.0, 0.1, 50, false);
  const long long_steps = quick ? 100000 : 1000000;
  const Bounce elastic_long = bounce(1.0, 0.01, long_steps, false);
  const Bounce inelastic = bounce(0.5, 0.01, 500, true);
  const bool bounce_ok = elastic_fine.ok && elastic_coarse.ok && elastic_long.ok && inelastic.ok;
  const double bounce_time = std::max(elastic_fine.worst_time, elastic_coarse.worst_time);
  const double bounce_apex = std::max(elastic_fine.worst_apex, elastic_coarse.worst_apex);
  double half_apex = inelastic.apexes.size() >= 3 ? 0.0 : std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < 3 && i < inelastic.apexes.size(); ++i)
    half_apex = std::max(half_apex, std::abs(inelastic.apexes[i] - std::pow(0.25, double(i + 1))));

  csv.close();
  ctx.add_data_file(csv_path, "case 0: the sliding box's speed (m/s) against t (s) at each dt; "
                              "case 1: the tossed box's height (m) against t at each dt; "
                              "cases 2.5 and 3: the bouncing ball's gap (m) with restitution 0.5 "
                              "and 1 at dt = 0.01 s");

  // A1 standing, from its scene.
  ctx.part("A1 standing");
  std::string a1_result;
  bool a1_ok = false, a1_ran = false;
  const std::filesystem::path a1 = find_shipped_file("examples/scenes/a1_standing.json");
  try {
    if (a1.empty()) throw InputError("examples/scenes/a1_standing.json not found");
    io::Scene scene = io::load_scene(a1);
    if (quick) scene.steps = std::min(scene.steps, 200);
    const std::filesystem::path dir = ctx.out_dir() / "a1_standing";
    std::filesystem::create_directories(dir);
    const run::SceneRunSummary sum = run::run_scene(scene, dir);
    a1_ran = true;
    a1_ok = sum.ok;
    a1_result = sum.ok ? "stood " + text(scene.steps * scene.dt) + " s, every step converged"
                       : "failed: " + sum.message;
  } catch (const InputError& e) {
    ctx.add_note(std::string("A1 not run: ") + e.what());
  }

  ctx.add_parameter("dt", "0.01 s (and 0.005 s for the orders; the toss at each of its steps)");
  ctx.add_parameter("complementarity_tolerance", StepOptions{}.complementarity_tolerance);
  ctx.add_parameter("contact_compliance", StepOptions{}.contact_compliance);
  for (const std::string& f : s.failures) ctx.add_note("failed: " + f);

  ctx.add_claim({"sliding-box-stops",
                 "A box sliding with mu = 0.25 from v = (4, 0.8, 0) m/s stops after |v|^2 / "
                 "(2 mu g) = 3.392457 m: within 1 % at dt = 0.01 s, the error first order in dt "
                 "(halving dt halves it), on its heading atan(0.2) to 1e-9 rad.",
                 "issue 37; Coulomb's law", slide_ok ? "error " + text(slide_error[0] / slide_exact) +
                     " (relative), order " + text(slide_order) + ", heading " + text(heading_error) + " rad"
                     : std::string("a step failed"),
                 "< 1 %, order 1 +- 0.2, heading < 1e-9",
                 slide_ok && slide_error[0] < 0.01 * slide_exact && std::abs(slide_order - 1.0) <= 0.2 &&
                     heading_error < 1e-9});
  ctx.add_claim({"incline-holds",
                 "A block on a 20 degree incline with mu = 0.5 (tan 20 degrees < 0.5) stays put.",
                 "issue 37", drift, "< 1e-9 m in " + text(held_s) + " s", drift < 1e-9});
  ctx.add_claim({"incline-slides",
                 "On a 30 degree incline with mu = 0.15 the block slides at g (sin 30 - 0.15 cos 30) = "
                 "3.630644 m/s^2 (its discrete velocity gains that times dt each step).",
                 "issue 37", slide_a_error, "< 1e-7 m/s^2", slide_a_error < 1e-7});
  ctx.add_claim({"sphere-rolls",
                 "A solid sphere rolls down a 15 degree incline without slipping at (5/7) g sin 15 = "
                 "1.813582 m/s^2: within 0.2 % at dt = 0.01 s, second order in dt.",
                 "issue 37", roll_ok ? "error " + text(roll_error[0] / roll_exact) + " (relative), order " +
                     text(roll_order) : std::string("a step failed"),
                 "< 0.2 %, order 2 +- 0.1",
                 roll_ok && roll_error[0] < 0.002 * roll_exact && std::abs(roll_order - 2.0) <= 0.1});
  ctx.add_claim({"tossed-box-rests",
                 "Dojo's tossed box (edge 0.5 m, mu = 0.1) comes to rest on a face at every step: "
                 "|v| and |omega| under 1e-8, its centre 0.25 m up within 1e-3.",
                 "Dojo's box toss; issue 37",
                 "at dt " + [&] {
                   std::string t;
                   for (double dt : toss_dts) t += (t.empty() ? "" : ", ") + text(dt);
                   return t;
                 }() + ": worst speed " + text(toss_speed) + ", worst height error " + text(toss_height),
                 "< 1e-8 and < 1e-3 at every dt",
                 toss_runs == int(toss_dts.size()) && toss_speed < 1e-8 && toss_height < 1e-3});
  ctx.add_claim({"elastic-ball-bounces",
                 "A ball released 1 m above the ground with restitution 1 bounces at sqrt(2 / g) = "
                 "0.451524 s and every 0.903047 s after, every apex at 1 m, at dt = 0.01 and 0.1 s "
                 "(the collision time is an unknown of the step).",
                 "issue 37; Fetecau, Marsden, Ortiz and West (2003)",
                 bounce_ok ? "impact times to " + text(bounce_time) + " s, apexes to " +
                                 text(bounce_apex) + " m, " + std::to_string(elastic_fine.impacts) +
                                 " and " + std::to_string(elastic_coarse.impacts) + " impacts in 5 s"
                           : std::string("a step failed"),
                 "< 1e-10 s and < 1e-10 m",
                 bounce_ok && bounce_time < 1e-10 && bounce_apex < 1e-10 &&
                     elastic_fine.impacts == 6 && elastic_coarse.impacts == 6});
  ctx.add_claim({"elastic-ball-keeps-its-energy",
                 "Over " + std::to_string(long_steps) + " steps of 0.01 s the elastic ball's apex "
                 "stays at 1 m: no energy drift.",
                 "issue 37", elastic_long.ok ? text(elastic_long.worst_apex) + " m over " +
                                                   std::to_string(elastic_long.impacts) + " impacts"
                                             : std::string("a step failed"),
                 "< 1e-9 m", elastic_long.ok && elastic_long.worst_apex < 1e-9});
  ctx.add_claim({"half-elastic-ball-rests",
                 "With restitution 0.5 the ball's apexes are 0.25, 0.0625 and 0.015625 m, then it "
                 "rests on the ground.",
                 "issue 37", inelastic.ok ? "apexes to " + text(half_apex) + " m; after 5 s speed " +
                                                text(inelastic.rest_speed) + " m/s, gap " +
                                                text(inelastic.rest_height) + " m"
                                          : std::string("a step failed"),
                 "apexes < 1e-10 m; speed < 1e-8 m/s, gap < 1e-6 m",
                 inelastic.ok && half_apex < 1e-10 && inelastic.rest_speed < 1e-8 &&
                     inelastic.rest_height < 1e-6});
  ctx.add_claim({"no-penetration",
                 "No contact is ever deeper than the step allows: dt times the tolerance plus the "
                 "compliance's sink, eps dt^2 F / m.",
                 "docs/contact.md", s.worst_excess, "<= 0 m (beyond the allowance)",
                 s.failures.empty() && s.worst_excess <= 0.0});
  ctx.add_claim({"energy-never-rises",
                 "With plastic contact and nothing driving it, the energy of the sliding boxes, the "
                 "held block and the tossed box never rises above its start.",
                 "docs/contact.md", s.worst_rise, "<= 0 J", s.failures.empty() && s.worst_rise <= 0.0});
  if (a1_ran) {
    ctx.add_claim({"a1-stands",
                   "Unitree A1 (example-robot-data) dropped 5 mm onto the ground, held in a stance by "
                   "joint springs and dampers, stands: every step converges.",
                   "issue 37; examples/scenes/a1_standing.json", a1_result, "every step converges",
                   a1_ok});
  }
  run_plot_script(ctx, "python/plots/contact.py");
}

}  // namespace

void register_contact() {
  register_experiment("contact",
                      "Hard contact with Coulomb friction and impacts in the maximal engine against "
                      "closed forms: a sliding box, blocks on inclines, a rolling sphere, Dojo's box "
                      "toss, a bouncing ball, A1 standing",
                      contact_experiment);
}

}  // namespace marsden::experiments
