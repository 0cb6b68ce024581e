#include "marsden/control/path.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "marsden/error.hpp"

namespace marsden::control {

namespace {

constexpr double kLengthEps = 1e-6;  // m: keeps sqrt smooth at zero displacement

// |v| - r and its gradient, safe at v = 0 (inside the obstacle: any unit direction).
double radial(const Vec3& v, double r, Vec3* grad) {
  const double n = v.norm();
  if (grad) *grad = n > 0.0 ? Vec3(v / n) : Vec3::UnitX();
  return n - r;
}

Vec3 planar(const Vec3& p, int dim) { return dim == 2 ? Vec3(p.x(), p.y(), 0.0) : p; }

}  // namespace

double signed_distance(const Obstacle& o, int dim, const Vec3& p_in, Vec3* grad) {
  const Vec3 p = planar(p_in, dim);
  switch (o.kind) {
    case Obstacle::Kind::Sphere:
      return radial(p - planar(o.center, dim), o.radius, grad);
    case Obstacle::Kind::Cylinder: {
      Vec3 v = p - o.center;
      v.z() = 0.0;
      const double d = radial(v, o.radius, grad);
      if (grad) grad->z() = 0.0;
      return d;
    }
    case Obstacle::Kind::Capsule: {
      const Vec3 a = planar(o.a, dim), ab = planar(o.b, dim) - a;
      const double len2 = ab.squaredNorm();
      // Clamped projection: the distance to a segment is C1 off the segment.
      const double s = len2 > 0.0 ? std::clamp((p - a).dot(ab) / len2, 0.0, 1.0) : 0.0;
      return radial(p - (a + s * ab), o.radius, grad);
    }
    case Obstacle::Kind::HalfSpace: {
      Vec3 n = planar(o.normal, dim);
      n.normalize();
      if (grad) *grad = n;
      return n.dot(p - planar(o.center, dim));
    }
    case Obstacle::Kind::Box: {
      const double scale = std::pow(static_cast<double>(dim), 1.0 / 8.0);
      double F = 0.0, s_min = std::numeric_limits<double>::infinity();
      Vec3 dF = Vec3::Zero();
      for (int i = 0; i < dim; ++i) {
        const double s = o.half_size[i] * scale;
        const double y = (p[i] - o.center[i]) / s;
        const double y7 = std::pow(y, 7);
        F += y7 * y;
        dF[i] = 8.0 * y7 / s;
        s_min = std::min(s_min, s);
      }
      const double root = std::pow(F, 1.0 / 8.0);
      if (grad) *grad = F > 0.0 ? Vec3(s_min * root / (8.0 * F) * dF) : Vec3::Zero();
      return s_min * (root - 1.0);
    }
  }
  return 0.0;
}

PathTerms::PathTerms(PathSpec spec, int dim, int steps, int stage_size, int position_offset,
                     double dt)
    : spec_(std::move(spec)), dim_(dim), dt_(dt) {
  if (dim_ != 2 && dim_ != 3) throw InputError("path terms: dimension must be 2 or 3");
  if (steps < 1) throw InputError("path terms: need at least two knots");
  for (int k = 0; k <= steps; ++k) offsets_.push_back(k * stage_size + position_offset);
  if (!(spec_.hazard_distance > 0.0))
    throw InputError("path terms: hazard_distance must be positive");
  for (const auto& o : spec_.obstacles) {
    const bool radius_used = o.kind == Obstacle::Kind::Sphere ||
                             o.kind == Obstacle::Kind::Cylinder ||
                             o.kind == Obstacle::Kind::Capsule;
    if (radius_used && !(o.radius > 0.0))
      throw InputError("obstacle '" + o.name + "': radius must be positive");
    if (o.kind == Obstacle::Kind::Box && !(o.half_size.head(dim_).minCoeff() > 0.0))
      throw InputError("obstacle '" + o.name + "': half sizes must be positive");
    if (o.kind == Obstacle::Kind::HalfSpace && !(o.normal.head(dim_).norm() > 0.0))
      throw InputError("obstacle '" + o.name + "': the normal must not be zero");
  }
}

int PathTerms::num_constraints() const {
  return static_cast<int>(spec_.obstacles.size()) * (static_cast<int>(offsets_.size()) - 1);
}

Vec3 PathTerms::position(const VecX& x, int k) const {
  Vec3 p = Vec3::Zero();
  for (int i = 0; i < dim_; ++i) p[i] = x[offsets_[k] + i];
  return p;
}

void PathTerms::bounds(double* g_l, double* g_u) const {
  const int n_obs = static_cast<int>(spec_.obstacles.size());
  for (int i = 0; i < num_constraints(); ++i) {
    g_l[i] = spec_.obstacles[i % n_obs].margin;
    g_u[i] = std::numeric_limits<double>::infinity();
  }
}

void PathTerms::constraints(const VecX& x, double* g) const {
  int row = 0;
  for (std::size_t k = 1; k < offsets_.size(); ++k) {
    const Vec3 p = position(x, static_cast<int>(k));
    for (const auto& o : spec_.obstacles) g[row++] = signed_distance(o, dim_, p, nullptr);
  }
}

void PathTerms::jacobian(const VecX& x, int row0, BlockSink& sink) const {
  int row = row0;
  for (std::size_t k = 1; k < offsets_.size(); ++k) {
    const Vec3 p = position(x, static_cast<int>(k));
    for (const auto& o : spec_.obstacles) {
      Vec3 grad;
      signed_distance(o, dim_, p, &grad);
      sink.block(row++, offsets_[k], grad.head(dim_).transpose());
    }
  }
}

double PathTerms::cost(const VecX& x, VecX* grad) const {
  double c = 0.0;
  const int N = static_cast<int>(offsets_.size()) - 1;
  if (spec_.path_length_weight != 0.0) {
    const double w = spec_.path_length_weight;
    for (int k = 0; k < N; ++k) {
      const Vec3 d = position(x, k + 1) - position(x, k);
      const double len = std::sqrt(d.squaredNorm() + kLengthEps * kLengthEps);
      c += w * len;
      if (grad) {
        const Vec3 g = w * d / len;
        for (int i = 0; i < dim_; ++i) {
          (*grad)[offsets_[k + 1] + i] += g[i];
          (*grad)[offsets_[k] + i] -= g[i];
        }
      }
    }
  }
  if (spec_.hazard_weight != 0.0) {
    const double w = spec_.hazard_weight * dt_, D = spec_.hazard_distance;
    for (int k = 1; k <= N; ++k) {
      const Vec3 p = position(x, k);
      for (const auto& o : spec_.obstacles) {
        Vec3 dd;
        const double gap = D - (signed_distance(o, dim_, p, &dd) - o.margin);
        if (gap <= 0.0) continue;
        c += w * gap * gap / (D * D);
        if (grad)
          for (int i = 0; i < dim_; ++i) (*grad)[offsets_[k] + i] -= 2.0 * w * gap / (D * D) * dd[i];
      }
    }
  }
  return c;
}

std::string PathTerms::constraint_name(int i) const {
  const int n_obs = static_cast<int>(spec_.obstacles.size());
  const auto& o = spec_.obstacles[i % n_obs];
  return "clearance of obstacle '" + o.name + "' at knot " + std::to_string(i / n_obs + 1);
}

double PathTerms::min_clearance(const VecX& x) const {
  double m = std::numeric_limits<double>::infinity();
  for (std::size_t k = 1; k < offsets_.size(); ++k)
    for (const auto& o : spec_.obstacles)
      m = std::min(m, signed_distance(o, dim_, position(x, static_cast<int>(k)), nullptr) - o.margin);
  return m;
}

}  // namespace marsden::control
