// Signed distance between two shapes, or a shape and a half-space, in closed form, with
// the contact normal, the witness points and their exact derivatives with respect to the
// bodies' poses (docs/contact.md, Geometry). The contact solver (hard contact, friction,
// impacts; issue 37) is to be built on these.
//
// A query takes shape A on a body at world pose g_wa and shape B on a body at g_wb (each
// shape at its own pose in its body, shapes.hpp), or B = a fixed half-space. It returns
//   phi   the signed distance (m): the length of the shortest translation that separates
//         the shapes when they overlap, negated; > 0 apart, 0 touching, < 0 penetrating;
//   n     the unit contact normal in the world, pointing from B to A (out of a half-space):
//         moving A by +epsilon n increases phi by epsilon;
//   p_a, p_b  the witness points in the world: p_a on A's surface, p_b on B's, with
//         p_a = p_b + phi n. Apart, they are the closest points; penetrating, p_a is A's
//         point deepest along -n and p_b the point of B's surface |phi| above it along n.
// and the derivatives of each with respect to right perturbations of the bodies' poses,
// g_wa exp(xi_a^) and g_wb exp(xi_b^), xi = (omega, v) in the body frame (docs/
// conventions.md): J_phi_a = d phi / d xi_a (1 x 6), J_n_a = d n / d xi_a (3 x 6),
// J_pa_a = d p_a / d xi_a, J_pb_a = d p_b / d xi_a (3 x 6), and the same in xi_b. Against a
// half-space the B blocks are zero; an environment shape is a shape on a body that does not
// move (take g_wb = its pose and ignore the B blocks).
//
// Exactness and where the derivatives are not defined. Each query finds the active pair
// of features (a vertex, an edge or face of a box, an end or the side of a capsule's
// segment, the cap or rim of a cylinder); on each piece where that pair stays the same the
// result is smooth and its derivatives are exact (tests/geometry/ checks every block against
// central differences). `feature` numbers the piece. Where two pieces meet (a box's lowest
// vertex switching), phi is continuous but its derivative jumps; the derivatives returned
// are those of the piece the documented rule picks, one-sided.
//
// Degenerate configurations: where the witness points or the normal are not unique, a
// documented, deterministic choice is made, `unique` is false, phi is still exact, and the
// derivatives are those of the chosen points held fixed on their bodies:
//   - a box, capsule or cylinder face-on or edge-on to a half-space: the witness is the
//     centre of the lowest face, edge or segment (a direction counts as parallel to the
//     plane when |n . axis| <= kParallelTolerance). Its derivative is the mean of the
//     one-sided derivatives of phi either side;
//   - concentric spheres, a sphere centre on a capsule's segment, capsule segments that
//     touch at an end or overlap on one line (distance between centres or segments <=
//     kCoincidentTolerance times the sum of radii): n is world +z for two spheres, the
//     capsule's x axis (across its segment) for a sphere and a capsule, the segments'
//     common perpendicular (capsule A's x axis if they are parallel) for two capsules,
//     signed so that n . (x_a - x_b) >= 0 (segment centres), and held fixed (J_n = 0, and
//     J_phi = n . the relative velocity of the centres or closest points);
//   - capsule segments that cross inside both: n = +-(u_a x u_b) / |u_a x u_b|, the sign of
//     (x_a - x_b) . (u_a x u_b) (+ at zero), with its derivative: either side of the
//     crossing that is the exact normal, so only `unique` (false within
//     kCoincidentTolerance) marks it;
//   - parallel capsule segments that overlap along their length (|u_a x u_b| <=
//     kParallelTolerance): the closest point on A is the middle of the overlap;
//   - a sphere centre inside a box at equal depth below two or more faces: the face of
//     lowest axis index, the + face where the centre is on the mid-plane.
#pragma once

#include <cstdint>

#include "marsden/geometry/shapes.hpp"
#include "marsden/lie/se3.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::geometry {

using RowVec6 = Eigen::Matrix<double, 1, 6>;
using Mat36 = Eigen::Matrix<double, 3, 6>;

// Below this a sine or cosine between directions counts as zero (dimensionless).
inline constexpr double kParallelTolerance = 1e-12;
// Below this times the sum of the radii, two centres or segments count as coincident.
inline constexpr double kCoincidentTolerance = 1e-12;

struct SignedDistance {
  double phi = 0.0;              // m
  Vec3 n = Vec3::UnitZ();        // unit, world, from B to A
  Vec3 p_a = Vec3::Zero();       // witness on A, world (m)
  Vec3 p_b = Vec3::Zero();       // witness on B, world (m)
  RowVec6 J_phi_a = RowVec6::Zero(), J_phi_b = RowVec6::Zero();  // (1 x 6), m per unit xi
  Mat36 J_n_a = Mat36::Zero(), J_n_b = Mat36::Zero();            // (3 x 6)
  Mat36 J_pa_a = Mat36::Zero(), J_pa_b = Mat36::Zero();          // (3 x 6)
  Mat36 J_pb_a = Mat36::Zero(), J_pb_b = Mat36::Zero();          // (3 x 6)
  // The smooth piece (the active pair of features), numbered within each overload: while it
  // stays the same the derivatives are exact; a change marks a switch (one-sided there).
  std::uint32_t feature = 0;
  bool unique = true;         // false where the witness or normal is a documented choice
};

// Shapes against a half-space (B = the half-space, fixed in the world).
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const HalfSpace& b);
SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const HalfSpace& b);
SignedDistance signed_distance(const Box& a, const SE3& g_wa, const HalfSpace& b);
SignedDistance signed_distance(const Cylinder& a, const SE3& g_wa, const HalfSpace& b);

// Shape pairs. Each pair is also given in the other order (the same result swapped).
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Sphere& b, const SE3& g_wb);
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Capsule& b, const SE3& g_wb);
SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const Sphere& b, const SE3& g_wb);
SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const Capsule& b,
                               const SE3& g_wb);
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Box& b, const SE3& g_wb);
SignedDistance signed_distance(const Box& a, const SE3& g_wa, const Sphere& b, const SE3& g_wb);

// Any shape: whether a closed form exists for the pair (the pairs above), and the query.
// Pairs without one (box-box, box-capsule, anything with a cylinder but the half-space)
// throw InputError naming the pair: they belong to a collision library (issue 37).
bool has_signed_distance(ShapeType a, ShapeType b);
SignedDistance signed_distance(const Shape& a, const SE3& g_wa, const Shape& b, const SE3& g_wb);
SignedDistance signed_distance(const Shape& a, const SE3& g_wa, const HalfSpace& b);

// The same query with A and B exchanged: phi kept, n negated, witnesses and blocks swapped.
SignedDistance swapped(const SignedDistance& d);

}  // namespace marsden::geometry
