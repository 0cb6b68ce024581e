// Internal: pieces of the scene reader shared by scene.cpp (SE(3) vehicles),
// scene_nonholonomic.cpp (car, snakeboard, sleigh), scene_tree.cpp (tree systems) and
// scene_maximal.cpp (maximal-coordinate systems).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "json_access.hpp"
#include "marsden/error.hpp"
#include "marsden/solve/newton.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/urdf.hpp"

namespace marsden::io::detail {

// A signal of `expected` components (`what` says what they are, for messages).
std::shared_ptr<const Signal> parse_signal(const JsonNode& sig, int expected,
                                           const std::string& what);
// Controls or shape at root[key]: optional (zero when absent); null when expected == 0,
// and then the key must be absent.
std::shared_ptr<const Signal> parse_input(const JsonNode& root, std::string_view key,
                                          int expected, const std::string& what);

// Runs a call that validates its own input (a model constructor or builder) and prefixes
// its InputError with the file and field of `node`.
template <class F>
auto with_field(const JsonNode& node, F&& call) {
  try {
    return call();
  } catch (const InputError& e) {
    node.fail(e.what());
  }
}

// field = obj[key] when present, checked > lower (strict) or >= lower.
inline void set_if(const JsonNode& obj, std::string_view key, double& field, double lower,
                   bool strict) {
  if (const auto n = obj.find(key))
    field = strict ? n->number_greater(lower) : n->number_at_least(lower);
}

// The URDF file that a "system" object names in "urdf" (relative to the scene file), with
// its "base" ("fixed" or "floating") and "massless_joints" ("error", the default, or "weld":
// joints that move no mass become fixed, docs/urdf.md). Errors name the field.
struct SceneUrdf {
  UrdfModel urdf;
  std::filesystem::path file;
  bool floating_base = false;
};
SceneUrdf read_scene_urdf(const JsonNode& sys, const std::string& scene_file);

// The SE(3) vehicles of a "system" object and an orientation object ("quaternion", "rpy"
// or "rotation_vector"), shared by scene and problem files (scene.cpp).
std::shared_ptr<const HolonomicModel<SE3>> parse_helicopter(const JsonNode& sys);
std::shared_ptr<const HolonomicModel<SE3>> parse_boat(const JsonNode& sys);
Mat3 parse_orientation(const JsonNode& o);

// The car's parameters from a "system" object of type "car" (scene_nonholonomic.cpp).
CarParams parse_car(const JsonNode& sys);

// Fills scene.nonholonomic, scene.integrator (failure and Newton options), scene.controls
// and scene.shape from "system", "integrator", "initial_state", "controls", "shape".
void parse_nonholonomic(const JsonNode& root, Scene& scene);

// Fills scene.tree, scene.integrator (failure policy) and scene.controls from "system",
// "integrator", "initial_state", "kinematic", "controls" (scene_tree.cpp).
void parse_tree(const JsonNode& root, Scene& scene);

// q or qd of a tree model: an object {coordinate name: value} (others keep their value in
// out) or an array of one number per coordinate. Returns which coordinates were given.
std::vector<bool> parse_coordinates(const JsonNode& n, const tree::Model& model,
                                    tree::VecX& out);

// Fills scene.maximal from "system", "integrator" and "initial_state" (scene_maximal.cpp).
void parse_maximal(const JsonNode& root, Scene& scene);

// The integrator keys `on_failure` and `max_subdivisions` into `s`, shared by every system.
void parse_failure_policy(const JsonNode& in, sim::FailurePolicy& s);

}  // namespace marsden::io::detail
