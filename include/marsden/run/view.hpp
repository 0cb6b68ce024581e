// What a run writes for the 3-D player (`marsden view`, docs/viewer.md): model.json, the
// bodies to draw, their shapes and where their poses are, and for a tree frames.npz, the
// pose of every frame at every recorded row. The player reads these and never repeats
// the kinematics: every pose it draws comes from the run.
#pragma once

#include <filesystem>
#include <memory>

#include "marsden/io/scene.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::run {

// The description of the scene's system for the player (docs/viewer.md, "model.json").
record::Json view_model(const io::Scene& scene);

// Semi-axes of the solid ellipsoid with the rotational inertia's principal moments and
// the mass (zero where the inertia is degenerate), and the principal axes as a quaternion
// (w, x, y, z) in the body frame.
struct InertiaShape {
  Vec3 semi_axes = Vec3::Zero();
  Vec4 rotation = Vec4(1, 0, 0, 0);
};
InertiaShape inertia_shape(double mass, const Mat3& inertia);

// Whether a run of the scene writes frames.npz: a tree's frames, or the bodies of a
// generated system in full coordinates (or its board at (theta, x, y)).
bool writes_frames(const io::Scene& scene);

// Forwards every row to `inner` and, where writes_frames, keeps the world pose of every
// frame (a tree's frames, a generated system's bodies) at that row; finish() writes
// OUT_DIR/frames.npz ("position": rows x frames x 3, "quaternion": rows x frames x 4,
// w first), published whole. For other families it only forwards (their trajectories
// hold the poses).
std::unique_ptr<sim::Recorder> view_recorder(const io::Scene& scene, sim::Recorder& inner,
                                             const std::filesystem::path& out_dir);

}  // namespace marsden::run
