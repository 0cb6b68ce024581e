// Scene files: a JSON description of one vehicle simulation (system, integrator, time
// step, initial state, inputs, output), validated field by field. The schema is
// documented in docs/scene.md.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "marsden/control/path.hpp"
#include "marsden/io/code.hpp"
#include "marsden/sim/maximal.hpp"
#include "marsden/sim/nonholonomic.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/sim/tree.hpp"
#include "marsden/sim/vehicle.hpp"
#include "marsden/urdf.hpp"

namespace marsden::io {

using sim::OnFailure;

// The SE(3) vehicles: rigid_body, helicopter, boat, generated.
using VehicleScene = sim::VehicleSetup;
// The SE(2) holonomic vehicles: generated (an object written for SE(2)).
using PlanarVehicleScene = sim::PlanarVehicleSetup;
// The nonholonomic vehicles: car, snakeboard, sleigh.
using NonholonomicScene = sim::NonholonomicSetup;
using NhMethod = sim::NonholonomicMethod;
// Tree systems (system type "tree").
using TreeScene = sim::TreeSetup;
using sim::TreeMethod;
// Mechanisms in maximal coordinates (system type "maximal").
using MaximalScene = sim::MaximalSetup;

// A scene file, parsed: timing, output, failure policy and one family's system. Parsing
// only: run::make_system builds the system to run, run::run_scene runs it.
struct Scene {
  std::string file;         // where the scene was read from, for messages
  std::string text;         // the JSON text parsed (parse_scene(text, file) reads it again)
  std::string system_type;  // "rigid_body", "helicopter", "boat", "car", "snakeboard",
                            // "sleigh", "tree", "maximal"
  std::string source;       // tree and maximal: the built-in model's name, "frames"
                            // (inline) or "urdf"
  double dt = 0.0;          // s
  double duration = 0.0;    // s
  int steps = 0;            // round(duration / dt) >= 1
  int output_every = 1;     // write every n-th step (and the last one)
  // Budgets checked before work (docs/reliability.md), raised or lowered by "limits".
  std::size_t memory_bytes = tree::kDataMemoryLimit;  // a tree's Data, the dense maximal LU
  long long output_rows = 20'000'000;                 // rows of the trajectory
  // Tree and maximal systems read from a URDF file: the description the model was built
  // from (joints welded as the scene says) and the file, for the player's <visual>
  // geometry (run/view.cpp); null otherwise.
  std::shared_ptr<const UrdfModel> urdf;
  std::filesystem::path urdf_file;
  bool urdf_floating_base = false;
  // A maximal system's "contact": the URDF collision shapes left out (cylinders, meshes,
  // the fixed base's), each "link 'NAME': why", for the run's summary.
  std::vector<std::string> contact_left_out;
  sim::FailurePolicy policy;
  std::variant<VehicleScene, NonholonomicScene, TreeScene, MaximalScene, PlanarVehicleScene>
      system;

  // The system's input signal, which every family's setup has (null: none), and its
  // replacement (batches give each run its own).
  std::shared_ptr<const sim::Signal> controls() const;
  void set_controls(std::shared_ptr<const sim::Signal> controls);
};

// A scene's "view": what the player draws beside the run, not part of the dynamics and so
// not in Scene: obstacles (an optimisation's, written into its re-simulation scene), in a
// planar (2) or spatial (3) world, and {"goal": {"kind", "position", "orientation"}}, a
// landing pad ("landing_pad") or a dock ("dock") at an optimisation's final pose.
struct SceneView {
  std::vector<control::Obstacle> obstacles;
  int dimension = 3;
  std::string goal_kind;  // empty when the scene has no goal
  SE3 goal;
};

// The "view" of a parsed scene, read from its text (parse_scene validated it); the
// defaults when it has none.
SceneView parse_scene_view(const Scene& scene);

// Reads and validates a scene file. Throws InputError naming the file and the field. The
// code the file names (a module, a library) is resolved by `code`; without it, refused
// (marsden/io/code.hpp; run::load_scene resolves it with the user's allowance).
Scene load_scene(const std::filesystem::path& path, const CodeResolver& code);
Scene load_scene(const std::filesystem::path& path);
// The same from text; file_label names the source in messages.
Scene parse_scene(std::string_view json_text, const std::string& file_label,
                  const CodeResolver& code);
Scene parse_scene(std::string_view json_text, const std::string& file_label);


}  // namespace marsden::io
