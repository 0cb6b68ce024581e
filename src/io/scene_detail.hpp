// Internal: pieces of the scene reader shared by scene.cpp (SE(3) vehicles) and
// scene_nonholonomic.cpp (car, snakeboard, sleigh).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "json_access.hpp"
#include "marsden/io/scene.hpp"

namespace marsden::io::detail {

// A signal of `expected` components (`what` says what they are, for messages).
std::shared_ptr<const Signal> parse_signal(const JsonNode& sig, int expected,
                                           const std::string& what);
// Controls or shape at root[key]: optional (zero when absent); null when expected == 0,
// and then the key must be absent.
std::shared_ptr<const Signal> parse_input(const JsonNode& root, std::string_view key,
                                          int expected, const std::string& what);

// Fills scene.nonholonomic, scene.integrator (failure and Newton options), scene.controls
// and scene.shape from "system", "integrator", "initial_state", "controls", "shape".
void parse_nonholonomic(const JsonNode& root, Scene& scene);

SceneRunSummary run_nonholonomic_scene(const Scene& scene, const std::filesystem::path& out_dir);

}  // namespace marsden::io::detail
