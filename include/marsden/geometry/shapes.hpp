// Collision shapes attached to bodies, and the environment's half-spaces (docs/contact.md,
// Geometry). A layer below the engines: it knows poses (lie/se3.hpp), not bodies' mechanics.
//
// Frames: a shape sits in its body's frame at a constant pose g_bs (body <- shape; the
// identity puts the shape at the body's origin, axes aligned). A body's pose in the world
// is g_wb, so the shape's world pose is g_ws = g_wb g_bs. Each shape is symmetric about
// its own origin:
//   Sphere    radius r, centred at the origin
//   Capsule   the points within r of the segment from (0, 0, -h) to (0, 0, h), h the half
//             length (the segment, not counting the caps: total length 2 h + 2 r)
//   Box       |x_i| <= half_extents_i in the shape's axes
//   Cylinder  radius r about the shape's z axis, |z| <= h
// Units: metres. Sizes must be positive and finite; the constructors throw InputError
// naming the shape and the field otherwise, and for a pose that is not finite or whose
// rotation is off SO(3) by more than 1e-9.
#pragma once

#include <variant>

#include "marsden/lie/se3.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::geometry {

class Sphere {
 public:
  explicit Sphere(double radius, const SE3& g_bs = SE3::identity());
  double radius() const { return radius_; }
  const SE3& g_bs() const { return g_bs_; }

 private:
  double radius_;
  SE3 g_bs_;
};

class Capsule {
 public:
  Capsule(double radius, double half_length, const SE3& g_bs = SE3::identity());
  double radius() const { return radius_; }
  double half_length() const { return half_length_; }
  const SE3& g_bs() const { return g_bs_; }

 private:
  double radius_, half_length_;
  SE3 g_bs_;
};

class Box {
 public:
  explicit Box(const Vec3& half_extents, const SE3& g_bs = SE3::identity());
  const Vec3& half_extents() const { return half_extents_; }
  const SE3& g_bs() const { return g_bs_; }

 private:
  Vec3 half_extents_;
  SE3 g_bs_;
};

class Cylinder {
 public:
  Cylinder(double radius, double half_length, const SE3& g_bs = SE3::identity());
  double radius() const { return radius_; }
  double half_length() const { return half_length_; }
  const SE3& g_bs() const { return g_bs_; }

 private:
  double radius_, half_length_;
  SE3 g_bs_;
};

// A shape on a body, for code that holds shapes of any kind (the distance dispatch of
// distance.hpp, a filter's shape list).
using Shape = std::variant<Sphere, Capsule, Box, Cylinder>;
enum class ShapeType { Sphere, Capsule, Box, Cylinder };

ShapeType shape_type(const Shape& shape);
const char* shape_type_name(ShapeType type);  // "sphere", "capsule", "box", "cylinder"
const SE3& shape_pose(const Shape& shape);    // g_bs

// The environment's half-space (the ground, an incline): the solid {x : n.x <= offset} in
// world coordinates, with n the unit outward normal; points with n.x >= offset are outside.
// The ground z >= 0 is HalfSpace(Vec3::UnitZ(), 0.0). The normal must be finite with
// | |n| - 1 | <= 1e-9 (it is then normalised); the offset (m) finite.
class HalfSpace {
 public:
  HalfSpace(const Vec3& n, double offset);
  // The half-space whose boundary plane passes through the point p with outward normal n.
  static HalfSpace through(const Vec3& p, const Vec3& n);
  const Vec3& n() const { return n_; }
  double offset() const { return offset_; }
  // Signed distance of a world point to the boundary plane: n.p - offset (m).
  double distance(const Vec3& p) const { return n_.dot(p) - offset_; }

 private:
  Vec3 n_;
  double offset_;
};

}  // namespace marsden::geometry
