// Scene files for tree systems (tree paper): a built-in model, an inline tree of frames or
// a URDF file, run with the generalized midpoint variational integrator (tree/midpoint.hpp)
// or RK4 on the continuous dynamics. The schema is in docs/scene.md; scene.cpp dispatches
// here.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>
#include <Eigen/LU>

#include "marsden/error.hpp"
#include "marsden/support/text.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "scene_detail.hpp"

namespace marsden::io::detail {

std::vector<bool> parse_coordinates(const JsonNode& n, const tree::Model& model,
                                    tree::VecX& out) {
  std::vector<bool> given(model.num_coords(), false);
  if (n.is_array()) {
    const std::vector<double> v = n.numbers(static_cast<std::size_t>(model.num_coords()));
    for (int i = 0; i < model.num_coords(); ++i) out[i] = v[static_cast<std::size_t>(i)];
    std::fill(given.begin(), given.end(), true);
    return given;
  }
  if (!n.is_object())
    n.fail("expected an object {coordinate: value} or an array of " +
           std::to_string(model.num_coords()) + " numbers");
  for (const auto& item : n.raw().items()) {
    const JsonNode v = n.at(item.key());
    const int i = with_field(v, [&] { return model.coord_index(item.key()); });
    out[i] = v.number();
    given[static_cast<std::size_t>(i)] = true;
  }
  return given;
}

namespace {

using tree::Model;
using tree::ModelBuilder;
using tree::VecX;

// ---------------------------------------------------------------------------------------
// Parsing: the model

// An inertia: 3 numbers (principal moments, the diagonal) or a 3 x 3 matrix, kg m^2.
Mat3 parse_inertia(const JsonNode& n) {
  if (n.is_array() && n.array_size() == 3 && !n.raw()[0].is_array()) {
    for (std::size_t i = 0; i < 3; ++i) n[i].number_at_least(0.0);
    return n.vec3().asDiagonal();
  }
  return n.matrix(3, 3);
}

// A built-in model and, for the four-bar, the parameters its initial state needs.
struct BuiltinModel {
  std::shared_ptr<const Model> model;
  tree::FourBarParams four_bar;
};

BuiltinModel builtin_model(const JsonNode& sys, const std::string& name) {
  sys.expect_keys({"type", "model", "parameters", "potentials", "forces",
                   "generated_constraints"});
  // Without "parameters" every default applies (sys has none of their keys).
  const std::optional<JsonNode> given = sys.find("parameters");
  const JsonNode params = given ? *given : sys;
  BuiltinModel out;
  if (name == "n_link_pendulum" || name == "double_pendulum") {
    const bool chain = name == "n_link_pendulum";
    if (given && chain) params.expect_keys({"n", "length", "mass", "link_inertia", "damping"});
    if (given && !chain) params.expect_keys({"length", "mass", "link_inertia", "damping"});
    tree::PendulumParams p;
    set_if(params, "length", p.length, 0.0, true);
    set_if(params, "mass", p.mass, 0.0, true);
    set_if(params, "damping", p.damping, 0.0, false);
    if (const auto n = params.find("link_inertia")) p.link_inertia = parse_inertia(*n);
    // n has no default.
    const int n = chain ? sys.at("parameters").at("n").integer(1, 100000) : 2;
    out.model = with_field(params, [&] { return std::make_shared<const Model>(tree::n_link_pendulum(n, p)); });
  } else if (name == "four_bar") {
    if (given) params.expect_keys({"crank", "coupler", "rocker", "ground", "density", "rod_radius",
                                   "damping"});
    tree::FourBarParams& p = out.four_bar;
    set_if(params, "crank", p.crank, 0.0, true);
    set_if(params, "coupler", p.coupler, 0.0, true);
    set_if(params, "rocker", p.rocker, 0.0, true);
    set_if(params, "ground", p.ground, 0.0, true);
    set_if(params, "density", p.density, 0.0, true);
    set_if(params, "rod_radius", p.rod_radius, 0.0, true);
    set_if(params, "damping", p.damping, 0.0, false);
    out.model = with_field(params, [&] { return std::make_shared<const Model>(tree::four_bar(p)); });
  } else {
    if (given) params.expect_keys({"total_mass", "height", "string_length", "damping"});
    tree::MarionetteParams p;
    set_if(params, "total_mass", p.total_mass, 0.0, true);
    set_if(params, "height", p.height, 0.0, true);
    set_if(params, "string_length", p.string_length, 0.0, true);
    set_if(params, "damping", p.damping, 0.0, false);
    out.model = with_field(params, [&] { return std::make_shared<const Model>(tree::marionette(p)); });
  }
  return out;
}

int frame_ref(const ModelBuilder& b, const JsonNode& n) {
  const std::string name = n.string();
  return with_field(n, [&] { return b.frame_index(name); });
}

int coord_ref(const ModelBuilder& b, const JsonNode& n) {
  const std::string name = n.string();
  return with_field(n, [&] { return b.coord_index(name); });
}

// A pair of frame names [a, b].
std::pair<int, int> frame_pair(const ModelBuilder& b, const JsonNode& n) {
  if (!n.is_array() || n.array_size() != 2) n.fail("expected an array of 2 frame names");
  return {frame_ref(b, n[0]), frame_ref(b, n[1])};
}

void parse_frame(ModelBuilder& b, const JsonNode& f) {
  f.expect_keys({"name", "parent", "type", "coordinate", "kinematic", "value", "translation",
                 "rpy", "limits", "mass"});
  const std::string name = f.at("name").string();
  int parent = tree::kWorld;
  if (const auto p = f.find("parent"); p && p->string() != "world") parent = frame_ref(b, *p);
  const JsonNode type_node = f.at("type");
  const std::string type = type_node.one_of({"tx", "ty", "tz", "rx", "ry", "rz", "const"});
  const tree::Transform t = *tree::transform_from_name(type);
  int frame = -1;
  if (t == tree::Transform::Const) {
    for (const char* key : {"coordinate", "kinematic", "value", "limits"})
      if (const auto n = f.find(key)) n->fail("does not apply to a \"const\" frame");
    SE3 g;
    if (const auto x = f.find("translation")) g.x = x->vec3();
    if (const auto r = f.find("rpy")) {
      const Vec3 a = r->vec3();
      // Roll about x, then pitch about y, then yaw about z (fixed axes): R = Rz Ry Rx.
      g.R = (Eigen::AngleAxisd(a[2], Vec3::UnitZ()) * Eigen::AngleAxisd(a[1], Vec3::UnitY()) *
             Eigen::AngleAxisd(a[0], Vec3::UnitX()))
                .toRotationMatrix();
    }
    frame = with_field(f, [&] { return b.add_const_frame(name, parent, g); });
  } else {
    for (const char* key : {"translation", "rpy"})
      if (const auto n = f.find(key)) n->fail("applies to \"const\" frames only");
    if (const auto c = f.find("coordinate")) {
      if (f.has("value")) f.at("value").fail("a frame has a coordinate or a value, not both");
      const std::string coord = c->string();
      const bool prescribed = f.find("kinematic") ? f.at("kinematic").boolean() : false;
      frame = with_field(f, [&] { return b.add_joint_frame(name, parent, t, coord, prescribed); });
      if (const auto l = f.find("limits")) {
        const std::vector<double> lim = l->numbers(2);
        with_field(*l, [&] { b.set_limits(b.coord_index(coord), lim[0], lim[1]); });
      }
    } else {
      for (const char* key : {"kinematic", "limits"})
        if (const auto n = f.find(key)) n->fail("applies to frames with a coordinate only");
      const double value = f.find("value") ? f.at("value").number() : 0.0;
      frame = with_field(f, [&] { return b.add_fixed_frame(name, parent, t, value); });
    }
  }
  if (const auto m = f.find("mass")) {
    m->expect_keys({"mass", "com", "inertia"});
    const double mass = m->at("mass").number_greater(0.0);
    const Vec3 com = m->find("com") ? m->at("com").vec3() : Vec3::Zero();
    const Mat3 inertia = m->find("inertia") ? parse_inertia(m->at("inertia")) : Mat3::Zero();
    with_field(*m, [&] { b.add_mass(frame, mass, com, inertia); });
  }
}

std::shared_ptr<const Model> inline_model(const JsonNode& sys) {
  sys.expect_keys({"type", "frames", "gravity", "springs", "dampers", "constraints", "inputs",
                   "potentials", "forces", "generated_constraints"});
  ModelBuilder b;
  if (const auto g = sys.find("gravity")) {
    const Vec3 gravity = g->vec3();
    b.set_gravity(gravity);
  }
  const JsonNode frames = sys.at("frames");
  if (!frames.is_array() || frames.array_size() == 0)
    frames.fail("expected a non-empty array of frames");
  for (std::size_t i = 0; i < frames.array_size(); ++i) parse_frame(b, frames[i]);

  if (const auto springs = sys.find("springs"))
    for (std::size_t i = 0; i < springs->array_size(); ++i) {
      const JsonNode s = (*springs)[i];
      s.expect_keys({"coordinate", "frames", "stiffness", "rest", "rest_length"});
      const double k = s.at("stiffness").number_at_least(0.0);
      if (const auto c = s.find("coordinate")) {
        const int coord = coord_ref(b, *c);
        const double rest = s.find("rest") ? s.at("rest").number() : 0.0;
        with_field(s, [&] { b.add_coordinate_spring(coord, k, rest); });
      } else {
        // Plain variables: clang 14 cannot capture structured bindings.
        const std::pair<int, int> ends = frame_pair(b, s.at("frames"));
        const int fa = ends.first, fb = ends.second;
        const double rest = s.find("rest_length") ? s.at("rest_length").number_at_least(0.0) : 0.0;
        with_field(s, [&] { b.add_frame_spring(fa, fb, k, rest); });
      }
    }
  if (const auto dampers = sys.find("dampers"))
    for (std::size_t i = 0; i < dampers->array_size(); ++i) {
      const JsonNode d = (*dampers)[i];
      d.expect_keys({"coordinate", "frames", "damping"});
      const double c = d.at("damping").number_at_least(0.0);
      if (const auto n = d.find("coordinate")) {
        const int coord = coord_ref(b, *n);
        with_field(d, [&] { b.add_coordinate_damper(coord, c); });
      } else {
        const std::pair<int, int> ends = frame_pair(b, d.at("frames"));
        const int fa = ends.first, fb = ends.second;
        with_field(d, [&] { b.add_frame_damper(fa, fb, c); });
      }
    }
  if (const auto constraints = sys.find("constraints"))
    for (std::size_t i = 0; i < constraints->array_size(); ++i) {
      const JsonNode c = (*constraints)[i];
      const std::string kind = c.at("type").one_of({"distance", "point_on_plane", "point_to_point"});
      const std::string name = c.find("name") ? c.at("name").string() : kind + std::to_string(i);
      if (kind == "distance") {
        c.expect_keys({"type", "name", "frames", "distance", "distance_coordinate"});
        const std::pair<int, int> ends = frame_pair(b, c.at("frames"));
        const int fa = ends.first, fb = ends.second;
        if (const auto dc = c.find("distance_coordinate")) {
          if (c.has("distance")) c.fail("give \"distance\" or \"distance_coordinate\", not both");
          const int coord = coord_ref(b, *dc);
          with_field(c, [&] { b.add_prescribed_distance_constraint(name, fa, fb, coord); });
        } else {
          const double d = c.at("distance").number_at_least(0.0);
          with_field(c, [&] { b.add_distance_constraint(name, fa, fb, d); });
        }
      } else if (kind == "point_on_plane") {
        c.expect_keys({"type", "name", "frame", "plane_frame", "normal"});
        const int fa = frame_ref(b, c.at("frame"));
        const int fb = frame_ref(b, c.at("plane_frame"));
        const Vec3 normal = c.at("normal").vec3();
        with_field(c, [&] { b.add_point_on_plane_constraint(name, fa, fb, normal); });
      } else {
        c.expect_keys({"type", "name", "frames"});
        const std::pair<int, int> ends = frame_pair(b, c.at("frames"));
        const int fa = ends.first, fb = ends.second;
        with_field(c, [&] { b.add_point_to_point_constraint(name, fa, fb); });
      }
    }
  if (const auto inputs = sys.find("inputs"))
    for (std::size_t i = 0; i < inputs->array_size(); ++i) {
      const JsonNode in = (*inputs)[i];
      if (in.at("type").one_of({"force", "wrench"}) == "force") {
        in.expect_keys({"type", "coordinate"});
        const int coord = coord_ref(b, in.at("coordinate"));
        with_field(in, [&] { b.add_coordinate_force_input(coord); });
      } else {
        in.expect_keys({"type", "frame", "axes"});
        const int frame = frame_ref(b, in.at("frame"));
        const bool body = !in.find("axes") || in.at("axes").one_of({"body", "world"}) == "body";
        with_field(in, [&] { b.add_wrench_input(frame, body); });
      }
    }
  return with_field(sys, [&] { return std::make_shared<const Model>(b.build()); });
}

std::shared_ptr<const Model> urdf_model(const JsonNode& sys, Scene& scene) {
  sys.expect_keys({"type", "urdf", "mjcf", "gravity", "base", "massless_joints", "potentials",
                   "forces", "generated_constraints"});
  const SceneUrdf in = read_scene_urdf(sys, scene.file);
  scene.urdf = std::make_shared<const UrdfModel>(in.urdf);
  scene.urdf_file = in.file;
  scene.urdf_floating_base = in.floating_base;
  UrdfTreeOptions options;
  options.gravity = in.gravity(sys);
  options.floating_base = in.floating_base;
  // MJCF coordinates are zero at the file's pose (MuJoCo's qpos0), a free root's included.
  if (in.mjcf) options.base_pose = in.urdf.root_pose;
  return with_field(sys.at(in.key()), [&] {
    return std::make_shared<const Model>(tree::model_from_urdf(in.urdf, options));
  });
}

// The model with the generated elements of "potentials", "forces" and
// "generated_constraints": [{"library": path}, ...] added, each path relative to the scene
// file (marsden.symbolic.TreePotential, TreeForce and TreeConstraint, docs/own-system.md),
// each loaded by `code`.
std::shared_ptr<const Model> with_generated_elements(std::shared_ptr<const Model> model,
                                                     const JsonNode& sys,
                                                     const CodeResolver& code) {
  if (!sys.has("potentials") && !sys.has("forces") && !sys.has("generated_constraints"))
    return model;
  ModelBuilder b(*model);
  constexpr std::pair<const char*, const char*> kElements[] = {
      {"potentials", "potential"}, {"forces", "force"}, {"generated_constraints", "constraint"}};
  for (const auto& [key, role] : kElements) {
    const auto elements = sys.find(key);
    if (!elements) continue;
    if (!elements->is_array()) elements->fail("expected an array of {\"library\": path}");
    for (std::size_t i = 0; i < elements->array_size(); ++i) {
      const JsonNode e = (*elements)[i];
      e.expect_keys({"library"});
      code.add_tree_element(b, library_reference(e.at("library"), role));
    }
  }
  return with_field(sys, [&] { return std::make_shared<const Model>(b.build()); });
}

// ---------------------------------------------------------------------------------------
// Parsing: integrator and initial state

void parse_integrator(const JsonNode& in, TreeScene& tree, sim::FailurePolicy& policy) {
  in.expect_keys({"method", "alpha", "stages", "quadrature", "tolerance", "max_iterations",
                  "line_search", "lagrangian", "on_failure", "max_subdivisions"});
  if (const auto n = in.find("method")) {
    const std::string method = n->one_of({"midpoint", "galerkin", "rk4"});
    tree.method = method == "midpoint"   ? TreeMethod::Midpoint
                  : method == "galerkin" ? TreeMethod::Galerkin
                                         : TreeMethod::Rk4;
  }
  const bool midpoint = tree.method == TreeMethod::Midpoint;
  const bool galerkin = tree.method == TreeMethod::Galerkin;
  if (const auto n = in.find("alpha"); n && !midpoint) n->fail("applies to method \"midpoint\" only");
  for (const char* key : {"stages", "quadrature"})
    if (const auto n = in.find(key); n && !galerkin) n->fail("applies to method \"galerkin\" only");
  for (const char* key : {"tolerance", "max_iterations", "line_search"})
    if (const auto n = in.find(key); n && !midpoint && !galerkin)
      n->fail("applies to methods \"midpoint\" and \"galerkin\" only");
  if (galerkin && tree.model->num_prescribed() > 0)
    in.at("method").fail("the galerkin integrator needs every coordinate dynamic; the model has "
                         "kinematic coordinates (first: '" +
                         tree.model->coords()[tree.model->prescribed_coords()[0]].name +
                         "'): use \"midpoint\"");
  if (const auto n = in.find("alpha")) {
    tree.midpoint.alpha = n->number_at_least(0.0);
    if (tree.midpoint.alpha > 1.0)
      n->fail("must be <= 1 (got " + number_text(tree.midpoint.alpha) + ")");
  }
  if (const auto n = in.find("stages")) tree.galerkin.stages = n->integer(1, tree::kGalerkinMaxStages);
  if (const auto n = in.find("quadrature"))
    tree.galerkin.quadrature =
        *tree::galerkin_quadrature_from_name(n->one_of({"lobatto", "gauss", "radau"}));
  NewtonOptions& newton = galerkin ? tree.galerkin.newton : tree.midpoint.newton;
  if (const auto n = in.find("tolerance")) newton.tolerance = n->number_greater(0.0);
  if (const auto n = in.find("max_iterations")) newton.max_iterations = n->integer(1, 1000);
  if (const auto n = in.find("line_search")) newton.line_search = n->boolean();
  if (const auto n = in.find("lagrangian")) {
    const std::string a = n->one_of({"spatial", "paper_cached", "paper_uncached"});
    const tree::LagrangianAlgorithm algorithm =
        a == "spatial"        ? tree::LagrangianAlgorithm::Spatial
        : a == "paper_cached" ? tree::LagrangianAlgorithm::PaperCached
                              : tree::LagrangianAlgorithm::PaperUncached;
    tree.midpoint.algorithm = tree.galerkin.algorithm = algorithm;
  }
  parse_failure_policy(in, policy);
}

void parse_initial_state(const JsonNode& root, TreeScene& tree, const std::string& source,
                         const tree::FourBarParams& four_bar_params) {
  const Model& model = *tree.model;
  const int n = model.num_coords();
  tree.q0 = VecX::Zero(n);
  tree.qd0 = VecX::Zero(n);
  const bool four_bar = source == "four_bar";
  const std::optional<JsonNode> s = root.find("initial_state");
  if (s) {
    if (four_bar) s->expect_keys({"q", "qd", "crank_angle", "crank_rate", "branch"});
    else s->expect_keys({"q", "qd"});
  }
  std::vector<bool> q_given(static_cast<std::size_t>(n), false);
  const bool by_crank = s && (s->has("crank_angle") || s->has("crank_rate") || s->has("branch"));
  // The four-bar is assembled from its crank (at angle 0 and at rest unless given q).
  if (four_bar && (by_crank || !s || !(s->has("q") || s->has("qd")))) {
    if (by_crank)
      for (const char* key : {"q", "qd"})
        if (const auto k = s->find(key)) k->fail("give q and qd, or crank_angle and crank_rate, not both");
    const double angle = s && s->has("crank_angle") ? s->at("crank_angle").number() : 0.0;
    const double rate = s && s->has("crank_rate") ? s->at("crank_rate").number() : 0.0;
    int branch = 1;
    if (const auto b = s ? s->find("branch") : std::nullopt) {
      branch = b->integer(-1, 1);
      if (branch == 0) b->fail("must be 1 or -1");
    }
    const tree::FourBarState st = with_field(s ? *s : root, [&] {
      return tree::four_bar_state(four_bar_params, angle, rate, branch);
    });
    tree.q0 = st.q;
    tree.qd0 = st.qd;
    return;
  }
  if (s) {
    if (const auto q = s->find("q")) q_given = parse_coordinates(*q, model, tree.q0);
    if (const auto qd = s->find("qd")) parse_coordinates(*qd, model, tree.qd0);
  }
  if (source == "marionette") {
    // String ends not given hang straight above their attachments at the body's pose.
    const VecX hung = tree::marionette_configuration(model, tree.q0);
    for (int i : model.prescribed_coords())
      if (!q_given[static_cast<std::size_t>(i)]) tree.q0[i] = hung[i];
  }
  tree::Data data(model, tree.memory_limit);
  const auto [h, name] = worst_constraint(model, data, tree.q0);
  // Hand-written numbers carry a few digits; a larger gap is a configuration that the
  // first step would have to jerk into place.
  if (h > 1e-8) {
    const std::string msg = "the constraint '" + name + "' does not hold at the initial "
                            "configuration (|h| = " + number_text(h) + ")" +
                            (four_bar ? "; give crank_angle (and crank_rate) instead" : "");
    if (s && s->has("q")) s->at("q").fail(msg);
    if (s) s->fail(msg);
    root.at("system").fail(msg);
  }
}

// Memory before work: a run's Data must fit under tree.memory_limit (limits.memory_bytes).
// The error names the field that asked for the size (the model's n, the paper's cached
// Lagrangian).
void check_memory(const JsonNode& root, const JsonNode& sys, const TreeScene& tree) {
  const Model& model = *tree.model;
  const bool cached = tree.midpoint.algorithm == tree::LagrangianAlgorithm::PaperCached;
  const std::size_t need = tree::data_memory_estimate(model, cached ? 2 : 0);
  if (need <= tree.memory_limit) return;
  std::ostringstream msg;
  msg << "the model (" << model.num_coords() << " coordinates, " << model.num_frames()
      << " frames) needs about " << bytes_text(double(need))
      << " for a run, over limits.memory_bytes = " << bytes_text(double(tree.memory_limit));
  if (cached && tree::data_memory_estimate(model, 0) <= tree.memory_limit)
    root.at("integrator").at("lagrangian").fail(msg.str() + " with the paper's cached "
                                                "recursion (n^3 on a chain); use \"spatial\"");
  if (const auto p = sys.find("parameters"); p && p->has("n")) p->at("n").fail(msg.str());
  sys.fail(msg.str());
}

}  // namespace

void parse_tree(const JsonNode& root, Scene& scene, const CodeResolver& code) {
  auto tree = std::make_shared<TreeScene>();
  const JsonNode sys = root.at("system");
  const int sources = int(sys.has("model")) + int(sys.has("frames")) + int(sys.has("urdf")) +
                      int(sys.has("mjcf"));
  if (sources != 1)
    sys.fail("expected exactly one of \"model\", \"frames\", \"urdf\", \"mjcf\"");
  tree::FourBarParams four_bar_params;
  if (const auto m = sys.find("model")) {
    scene.source = m->one_of({"n_link_pendulum", "double_pendulum", "four_bar", "marionette"});
    BuiltinModel built = builtin_model(sys, scene.source);
    tree->model = std::move(built.model);
    four_bar_params = built.four_bar;
  } else if (sys.has("frames")) {
    scene.source = "frames";
    tree->model = inline_model(sys);
  } else {
    scene.source = sys.has("mjcf") ? "mjcf" : "urdf";
    tree->model = urdf_model(sys, scene);
  }
  tree->model = with_generated_elements(std::move(tree->model), sys, code);
  const Model& model = *tree->model;

  if (const auto in = root.find("integrator")) parse_integrator(*in, *tree, scene.policy);
  tree->memory_limit = scene.memory_bytes;
  check_memory(root, sys, *tree);
  parse_initial_state(root, *tree, scene.source, four_bar_params);

  // One signal per prescribed coordinate, by name: its displacement from the initial value.
  tree->prescribed.assign(static_cast<std::size_t>(model.num_prescribed()), nullptr);
  if (const auto k = root.find("kinematic")) {
    if (model.num_prescribed() == 0)
      k->fail("the model has no kinematic coordinates; remove this field");
    if (!k->is_object()) k->fail("expected an object {kinematic coordinate: signal}");
    for (const auto& item : k->raw().items()) {
      const JsonNode sig = k->at(item.key());
      const int coord = with_field(sig, [&] { return model.coord_index(item.key()); });
      const int i = model.prescribed_index(coord);
      if (i < 0) sig.fail("coordinate '" + shown(item.key()) + "' is not kinematic");
      tree->prescribed[static_cast<std::size_t>(i)] =
          parse_signal(sig, 1, "displacement of '" + item.key() + "' [m or rad]");
    }
  }
  if (const auto s = root.find("shape")) s->fail("tree systems take no shape input; use \"kinematic\"");
  tree->controls = parse_input(root, "controls", model.num_inputs(), "tree inputs");
  scene.system = std::move(*tree);
}

}  // namespace marsden::io::detail
