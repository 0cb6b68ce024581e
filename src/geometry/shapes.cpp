// Shapes and half-spaces: validation at construction, so a query never sees a bad size.
#include "marsden/geometry/shapes.hpp"

#include <cmath>
#include <string>

#include <Eigen/LU>

#include "marsden/error.hpp"
#include "marsden/support/text.hpp"

namespace marsden::geometry {

namespace {

void check_size(const char* shape, const char* field, double value) {
  if (!std::isfinite(value) || value <= 0.0)
    throw InputError(std::string(shape) + ": " + field + " must be positive and finite, got " +
                     number_text(value) + " m");
}

// A shape's pose in its body: finite, and a rotation to 1e-9.
void check_pose(const char* shape, const SE3& g_bs) {
  if (!g_bs.R.allFinite() || !g_bs.x.allFinite())
    throw InputError(std::string(shape) + ": pose g_bs is not finite");
  const double off = (g_bs.R.transpose() * g_bs.R - Mat3::Identity()).cwiseAbs().maxCoeff();
  if (off > 1e-9 || g_bs.R.determinant() < 0.0)
    throw InputError(std::string(shape) + ": pose g_bs has a rotation that is not in SO(3) "
                     "(|R^T R - I| = " + number_text(off) + ", det R = " +
                     number_text(g_bs.R.determinant()) + ")");
}

}  // namespace

Sphere::Sphere(double radius, const SE3& g_bs) : radius_(radius), g_bs_(g_bs) {
  check_size("sphere", "radius", radius);
  check_pose("sphere", g_bs);
}

Capsule::Capsule(double radius, double half_length, const SE3& g_bs)
    : radius_(radius), half_length_(half_length), g_bs_(g_bs) {
  check_size("capsule", "radius", radius);
  check_size("capsule", "half_length", half_length);
  check_pose("capsule", g_bs);
}

Box::Box(const Vec3& half_extents, const SE3& g_bs) : half_extents_(half_extents), g_bs_(g_bs) {
  static const char* const kFields[] = {"half_extents[0]", "half_extents[1]", "half_extents[2]"};
  for (int i = 0; i < 3; ++i) check_size("box", kFields[i], half_extents[i]);
  check_pose("box", g_bs);
}

Cylinder::Cylinder(double radius, double half_length, const SE3& g_bs)
    : radius_(radius), half_length_(half_length), g_bs_(g_bs) {
  check_size("cylinder", "radius", radius);
  check_size("cylinder", "half_length", half_length);
  check_pose("cylinder", g_bs);
}

ShapeType shape_type(const Shape& shape) { return static_cast<ShapeType>(shape.index()); }

const char* shape_type_name(ShapeType type) {
  switch (type) {
    case ShapeType::Sphere: return "sphere";
    case ShapeType::Capsule: return "capsule";
    case ShapeType::Box: return "box";
    case ShapeType::Cylinder: return "cylinder";
  }
  return "shape";
}

const SE3& shape_pose(const Shape& shape) {
  return std::visit([](const auto& s) -> const SE3& { return s.g_bs(); }, shape);
}

HalfSpace::HalfSpace(const Vec3& n, double offset) : n_(n), offset_(offset) {
  if (!n.allFinite()) throw InputError("half-space: normal n is not finite");
  const double norm = n.norm();
  if (std::abs(norm - 1.0) > 1e-9)
    throw InputError("half-space: normal n must be a unit vector, got |n| = " +
                     number_text(norm));
  if (!std::isfinite(offset))
    throw InputError("half-space: offset must be finite, got " + number_text(offset));
  n_ /= norm;
}

HalfSpace HalfSpace::through(const Vec3& p, const Vec3& n) {
  if (!p.allFinite()) throw InputError("half-space: point p is not finite");
  const HalfSpace unit(n, 0.0);  // checks n
  return HalfSpace(unit.n(), unit.n().dot(p));
}

}  // namespace marsden::geometry
