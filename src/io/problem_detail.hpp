// Internal: pieces of the problem-file reader (problem.cpp) meant to serve every family's
// parser: bounds, obstacles, path-cost weights, solver options. Errors name the file and the
// field, as in scene files.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json_access.hpp"
#include "marsden/control/ocp.hpp"
#include "marsden/control/path.hpp"
#include "marsden/vehicle/controls.hpp"
#include "marsden/vehicle/holonomic.hpp"

namespace marsden::io::detail {

// An array of `size` numbers where null stands for null_value (an absent bound).
std::vector<double> numbers_or_null(const JsonNode& n, std::size_t size, double null_value);
// parent[key] = {"lower": [...], "upper": [...]} (nulls: unbounded) into lower/upper.
void parse_range(const JsonNode& parent, std::string_view key, std::size_t size, double* lower,
                 double* upper);
// root["obstacles"] for a planar (dim 2) or spatial (dim 3) problem.
std::vector<control::Obstacle> parse_obstacles(const JsonNode& root, int dim);
// The "path_length" and "hazard" entries of the cost object into path.
void parse_path_weights(const JsonNode& cost, control::PathSpec& path);
control::IpoptOptions parse_solver(const JsonNode& root);
// root["final_time"] = {"free", "lower", "upper", "weight"} (s; upper may be absent): a free
// final time T = N dt with lower <= T <= upper, costing weight * T, and dt * steps its guess.
// Untouched outputs when absent or not free.
void parse_final_time(const JsonNode& root, double dt, int steps, bool& free, double& dt_min,
                      double& dt_max, double& weight);
InputVec input_vec(const JsonNode& n, int size, const std::string& what);
// The largest magnitude of a number in an initial guess or a warm start (docs/dmoc.md): no
// quantity of these problems comes near it, and beyond it the transcription's values (a
// guess's squared distances, its energies) overflow to inf and the solver to NaN.
inline constexpr double kMaxGuessMagnitude = 1e9;
// Every number in the initial_guess object, at any depth, within kMaxGuessMagnitude;
// else the error names its field.
void check_guess_magnitudes(const JsonNode& guess);
// "map" ("cay" | "exp") and "tangent" ("tln" | "exact") of an integrator object.
void parse_map_and_tangent(const JsonNode& in, DiffMap& map, TangentMap& tangent);

// The families' parsers: the car with RDP (problem_car.cpp), tree systems with the midpoint
// integrator (problem_tree.cpp; file locates a URDF).
std::unique_ptr<control::Ocp> parse_car_problem(const JsonNode& root);
std::unique_ptr<control::Ocp> parse_tree_problem(const JsonNode& root, const std::string& file);

}  // namespace marsden::io::detail
