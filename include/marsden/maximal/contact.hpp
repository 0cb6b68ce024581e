// Hard contact between the bodies' collision shapes and the environment's surfaces in the
// maximal engine (docs/contact.md, The step with contact). A shape is reduced to
// contact points, each a sphere of some radius (zero: a vertex) fixed in its body:
//   sphere   its centre and radius
//   capsule  the two ends of its segment, with its radius
//   box      its eight vertices
// Each point against each surface is one candidate contact of the step: non-penetration at
// the next pose and Coulomb friction in its second-order cone, as complementarity
// conditions solved by a primal-dual interior point inside the step (integrator.hpp).
#pragma once

#include <string>
#include <vector>

#include "marsden/geometry/shapes.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::maximal {

struct Body;

// A collision shape on a body, at its pose g_bs in the body frame (whose origin is the
// body's centre of mass). A cylinder has no contact points yet: InputError.
struct CollisionShape {
  std::string name;
  int body = 0;
  geometry::Shape shape = geometry::Sphere(0.1);
  // Coulomb coefficient (>= 0, dimensionless); a pair uses the larger of its two, as MuJoCo
  // does, so setting either is enough.
  double friction = 0.0;
  // Newton's coefficient of restitution in [0, 1] (0: plastic impacts); a pair uses the
  // larger of its two, as for friction. Above 0 the step finds the time of each impact and
  // applies its impulse there (docs/contact.md, Impacts); only on a body without joints.
  double restitution = 0.0;
};

// A half-space of the environment (geometry::HalfSpace: the solid n . x <= offset).
struct Surface {
  std::string name;
  geometry::HalfSpace half_space{Vec3::UnitZ(), 0.0};
  double friction = 0.0;
  double restitution = 0.0;
};

struct Contacts {
  std::vector<CollisionShape> shapes;
  std::vector<Surface> surfaces;
};

// One candidate contact: the sphere of radius `radius` centred at c_b in body `body`
// against surface `surface`, with the pair's friction coefficient mu. The surface's normal
// n and offset, and an orthonormal tangent basis T (n, T's columns right-handed), are
// copied here so the step reads one record.
struct ContactPoint {
  int body = 0;
  int shape = 0;    // index into Contacts::shapes
  int surface = 0;  // index into Contacts::surfaces
  Vec3 c_b = Vec3::Zero();
  double radius = 0.0;
  double mu = 0.0;
  double restitution = 0.0;
  Vec3 n = Vec3::UnitZ();
  double offset = 0.0;
  Eigen::Matrix<double, 3, 2> T = Eigen::Matrix<double, 3, 2>::Identity();
};

// The candidate contacts of `contacts`, every shape's points against every surface;
// validates (a body index out of range, a friction that is negative or not finite, a
// restitution outside [0, 1], a cylinder: InputError naming the shape).
std::vector<ContactPoint> contact_points(const std::vector<Body>& bodies,
                                         const Contacts& contacts);

}  // namespace marsden::maximal
