// Scene files: a JSON description of one vehicle simulation (system, integrator, time
// step, initial state, inputs, output), validated field by field. The schema is
// documented in docs/scene.md.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "marsden/lie/se3.hpp"
#include "marsden/maximal/integrator.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/tree/midpoint.hpp"
#include "marsden/tree/model.hpp"
#include "marsden/vehicle/controls.hpp"
#include "marsden/vehicle/holonomic.hpp"
#include "marsden/vehicle/rdp.hpp"
#include "marsden/vehicle/rdp_models.hpp"
#include "marsden/vehicle/stepper.hpp"

namespace marsden::io {

using sim::OnFailure;

struct SceneIntegrator {
  Method method = Method::VI;
  HolonomicOptions<SE3> options;  // map, tangent and Newton options
  OnFailure on_failure = OnFailure::Stop;
  int max_subdivisions = 6;
};

// Integrators of the nonholonomic vehicles (car, snakeboard, sleigh).
enum class NhMethod {
  Rdp,          // reduced d'Alembert-Pontryagin on SE(2) (vehicle/rdp.hpp), any of the three
  RdpExplicit,  // the car's explicit RDP update (tau = exp)
  Gni,          // geometric nonholonomic integrator in full coordinates (sleigh, snakeboard)
  Rattle,       // nonholonomic RATTLE in full coordinates (sleigh, snakeboard)
  Rk4           // classical RK4 on the continuous equations
};
std::string nh_method_name(NhMethod m);

// Everything specific to a nonholonomic scene (system type "car", "snakeboard", "sleigh");
// parsed and run by src/io/scene_nonholonomic.cpp. Planar pose (theta, x, y).
struct NonholonomicScene {
  NhMethod method = NhMethod::Rdp;
  double alpha = 0.5;  // RDP quadrature point
  DiffMap map = DiffMap::Cay;
  TangentMap tangent = TangentMap::TLN;
  CarParams car;
  SnakeboardParams snakeboard;
  SleighParams sleigh;
  bool prescribe_shape = false;  // snakeboard: controls are shape rates, not torques
  // Initial state: pose, shape r_0 (car: psi, sigma; snakeboard: psi, phi), shape
  // velocities (those not prescribed by the controls) and, for the sleigh and the
  // snakeboard, the body velocity components they take as data.
  double theta = 0.0, x = 0.0, y = 0.0;  // rad, m, m
  ShapeVec shape = ShapeVec::Zero(0);
  ShapeVec shape_velocity = ShapeVec::Zero(0);
  double omega = 0.0;  // sleigh: rad/s
  double v1 = 0.0;     // sleigh, snakeboard: body forward velocity, m/s
};

// Integrators of the tree systems.
enum class TreeMethod {
  Midpoint,  // the generalized midpoint variational integrator (tree/midpoint.hpp)
  Rk4        // classical RK4 on the continuous dynamics in (q, qd)
};

// Everything specific to a tree scene (system type "tree"); parsed and run by
// src/io/scene_tree.cpp.
struct TreeScene {
  std::string source;  // "n_link_pendulum", "double_pendulum", "four_bar", "marionette",
                       // "frames" (inline) or "urdf"
  std::shared_ptr<const tree::Model> model;
  TreeMethod method = TreeMethod::Midpoint;
  tree::MidpointOptions midpoint;  // alpha, Newton options, Lagrangian algorithm
  Eigen::VectorXd q0, qd0;         // every coordinate at t = 0 (rad, m; rad/s, m/s)
  // Per kinematic coordinate (in model.kinematic_coords() order): its displacement from
  // q0 as a 1-component signal of time, or null to hold it at q0.
  std::vector<std::shared_ptr<const Signal>> kinematic;
};

// Everything specific to a maximal-coordinates scene (system type "maximal"); parsed and
// run by src/io/scene_maximal.cpp.
struct MaximalScene {
  std::string source;  // "pendulum_chain", "closed_chain", "four_bar_chain", "minitaur_leg"
                       // or "urdf"
  std::shared_ptr<const maximal::Model> model;
  std::vector<maximal::BodyState> state0;  // consistent with the joints at t = 0
  maximal::StepOptions step;               // Newton options and solver; dt is the scene's
};

struct Scene {
  std::string file;         // where the scene was read from, for messages
  std::string system_type;  // "rigid_body", "helicopter", "boat", "car", "snakeboard",
                            // "sleigh", "tree", "maximal"
  std::shared_ptr<const HolonomicModel<SE3>> model;  // SE(3) systems; null otherwise
  std::shared_ptr<const NonholonomicScene> nonholonomic;  // car, snakeboard, sleigh
  std::shared_ptr<const TreeScene> tree;                  // tree
  std::shared_ptr<const MaximalScene> maximal;            // maximal
  SceneIntegrator integrator;
  double dt = 0.0;        // s
  double duration = 0.0;  // s
  int steps = 0;          // round(duration / dt) >= 1
  VehicleState<SE3> initial_state;
  std::shared_ptr<const Signal> controls;  // null when the model has no controls
  std::shared_ptr<const Signal> shape;     // null when the model has no shape
  int output_every = 1;  // write every n-th step (and the last one)
};

// Reads and validates a scene file. Throws InputError naming the file and the field.
Scene load_scene(const std::filesystem::path& path);
// The same from text; file_label names the source in messages.
Scene parse_scene(std::string_view json_text, const std::string& file_label);

// What a run did (sim/simulate.hpp): status, Newton statistics, subdivisions, drift.
using SceneRunSummary = sim::RunSummary;

// Simulates the scene with sim::simulate and writes OUT_DIR/trajectory.csv (streamed row
// by row), OUT_DIR/trajectory.npz and OUT_DIR/summary.json, each under its final name
// only when complete; creates OUT_DIR if needed. A step that
// does not converge (and cannot be rescued by subdivision) ends the run with ok == false;
// everything computed until then is written, never a NaN. Throws InputError if an output
// file cannot be written.
SceneRunSummary run_scene(const Scene& scene, const std::filesystem::path& out_dir);

}  // namespace marsden::io
