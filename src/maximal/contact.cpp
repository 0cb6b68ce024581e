#include "marsden/maximal/contact.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>

#include <Eigen/Geometry>

#include "marsden/error.hpp"
#include "marsden/maximal/model.hpp"

namespace marsden::maximal {

namespace {

std::string shape_label(const CollisionShape& shape, std::size_t i) {
  return "collision shape " + std::to_string(i) + (shape.name.empty() ? "" : " ('" + shape.name + "')");
}

std::string surface_label(const Surface& surface, std::size_t i) {
  return "surface " + std::to_string(i) + (surface.name.empty() ? "" : " ('" + surface.name + "')");
}

void check_friction(double mu, const std::string& label) {
  if (!std::isfinite(mu) || mu < 0.0) {
    throw InputError(label + ": friction must be non-negative and finite, got " +
                     std::to_string(mu));
  }
}

void check_restitution(double e, const std::string& label) {
  if (!(e >= 0.0 && e <= 1.0)) {
    throw InputError(label + ": restitution must be in [0, 1], got " + std::to_string(e));
  }
}

// The spheres (centre in the body frame, radius) that stand for a shape.
struct PointSphere {
  Vec3 c_b;
  double radius;
};

std::vector<PointSphere> shape_points(const geometry::Shape& shape, const std::string& label) {
  std::vector<PointSphere> points;
  if (const auto* s = std::get_if<geometry::Sphere>(&shape)) {
    points.push_back({s->g_bs().x, s->radius()});
  } else if (const auto* c = std::get_if<geometry::Capsule>(&shape)) {
    for (const double end : {-1.0, 1.0})
      points.push_back({c->g_bs().act(Vec3(0.0, 0.0, end * c->half_length())), c->radius()});
  } else if (const auto* b = std::get_if<geometry::Box>(&shape)) {
    for (int k = 0; k < 8; ++k) {
      const Vec3 corner((k & 1) ? 1.0 : -1.0, (k & 2) ? 1.0 : -1.0, (k & 4) ? 1.0 : -1.0);
      points.push_back({b->g_bs().act(corner.cwiseProduct(b->half_extents())), 0.0});
    }
  } else {
    throw InputError(label + ": a cylinder has no contact points yet (use a capsule or a "
                     "box; docs/contact.md)");
  }
  return points;
}

// An orthonormal pair completing n to a right-handed frame (t1, t2, n).
Eigen::Matrix<double, 3, 2> tangent_basis(const Vec3& n) {
  const Vec3 helper = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t1 = (helper - helper.dot(n) * n).normalized();
  Eigen::Matrix<double, 3, 2> T;
  T << t1, n.cross(t1);
  return T;
}

}  // namespace

std::vector<ContactPoint> contact_points(const std::vector<Body>& bodies,
                                         const Contacts& contacts) {
  for (std::size_t s = 0; s < contacts.surfaces.size(); ++s) {
    check_friction(contacts.surfaces[s].friction, surface_label(contacts.surfaces[s], s));
    check_restitution(contacts.surfaces[s].restitution, surface_label(contacts.surfaces[s], s));
  }
  std::vector<ContactPoint> out;
  for (std::size_t i = 0; i < contacts.shapes.size(); ++i) {
    const CollisionShape& shape = contacts.shapes[i];
    const std::string label = shape_label(shape, i);
    if (shape.body < 0 || shape.body >= static_cast<int>(bodies.size())) {
      throw InputError(label + ": body index " + std::to_string(shape.body) + " is not a body (" +
                       std::to_string(bodies.size()) + " bodies)");
    }
    check_friction(shape.friction, label);
    check_restitution(shape.restitution, label);
    const std::vector<PointSphere> points = shape_points(shape.shape, label);
    for (std::size_t s = 0; s < contacts.surfaces.size(); ++s) {
      const Surface& surface = contacts.surfaces[s];
      for (const PointSphere& p : points) {
        ContactPoint c;
        c.body = shape.body;
        c.shape = static_cast<int>(i);
        c.surface = static_cast<int>(s);
        c.c_b = p.c_b;
        c.radius = p.radius;
        c.mu = std::max(shape.friction, surface.friction);
        c.restitution = std::max(shape.restitution, surface.restitution);
        c.n = surface.half_space.n();
        c.offset = surface.half_space.offset();
        c.T = tangent_basis(c.n);
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace marsden::maximal
