// Path terms shared by the vehicle transcriptions: obstacles as smooth inequality
// constraints, a hazard potential near them, and path length. They act on the vehicle's
// reference point (its centre of mass) in world coordinates, read from the decision vector
// at each knot k = 1..N (knot 0 is fixed). Planar problems use (x, y) and ignore z.
// Units: metres.
#pragma once

#include <string>
#include <vector>

#include "marsden/control/nlp.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::control {

// d(p) is a signed distance (exact for spheres, cylinders, capsules and half-spaces; for a
// box, the distance to a superellipsoid that contains it: sum_i ((p_i - c_i)/s_i)^8 = 1 with
// s_i = half_i * D^(1/8), D the dimension: it passes through the corners and bulges 15 % (3D)
// or 9 % (2D) past the face centres; smooth, unlike the box itself; d = s_min (F^(1/8) - 1)
// with F the sum, a pseudo-distance). The constraint is
// d(p) >= margin.
struct Obstacle {
  enum class Kind { Sphere, Cylinder, Box, Capsule, HalfSpace };
  Kind kind = Kind::Sphere;
  std::string name;
  Vec3 center = Vec3::Zero();     // sphere, box; a point on a cylinder's vertical axis;
                                  // a point on a half-space's boundary plane
  Vec3 half_size = Vec3::Ones();  // box
  Vec3 a = Vec3::Zero(), b = Vec3::Zero();  // capsule axis end points
  Vec3 normal = Vec3::UnitZ();    // half-space: the free side is normal . (p - center) >= 0
  double radius = 1.0;            // sphere, cylinder, capsule
  double margin = 0.0;            // required clearance
};

// Signed distance of p to the obstacle (dim = 2 uses p's x, y and a planar obstacle) and
// its gradient.
double signed_distance(const Obstacle& o, int dim, const Vec3& p, Vec3* grad);

struct PathSpec {
  std::vector<Obstacle> obstacles;
  double path_length_weight = 0.0;  // w sum_k sqrt(|p_k+1 - p_k|^2 + eps^2), [cost / m]
  double hazard_weight = 0.0;       // w dt sum_k sum_obs (max(0, D - (d - margin)) / D)^2
  double hazard_distance = 1.0;     // D [m]: the hazard's reach beyond the margin
};

// Constraint rows: one per obstacle and knot k = 1..N, ordered knot-major.
class PathTerms {
 public:
  // Knot k = 0..N has its position (dim entries) at k * stage_size + position_offset in x.
  PathTerms(PathSpec spec, int dim, int steps, int stage_size, int position_offset, double dt);

  int num_constraints() const;
  void bounds(double* g_l, double* g_u) const;
  void constraints(const VecX& x, double* g) const;
  void jacobian(const VecX& x, int row0, BlockSink& sink) const;
  // Adds path length and hazard to the cost (and to grad if not null).
  double cost(const VecX& x, VecX* grad) const;
  std::string constraint_name(int i) const;
  // Smallest d - margin over knots and obstacles (positive when every obstacle is cleared).
  double min_clearance(const VecX& x) const;

  const PathSpec& spec() const { return spec_; }

 private:
  Vec3 position(const VecX& x, int k) const;
  PathSpec spec_;
  int dim_;
  std::vector<int> offsets_;
  double dt_;
};

}  // namespace marsden::control
