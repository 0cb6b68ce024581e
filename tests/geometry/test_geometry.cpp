// Closed-form signed distances (geometry/distance.hpp): hand-computed distances in simple
// configurations; at random configurations, witness points on their shapes (against
// independently written point distances), separation bounds from points sampled inside
// the shapes, symmetry under exchanging A and B, invariance under a common rigid motion,
// and every derivative block against central differences on the manifold; the documented
// choices in degenerate configurations; bad input; collision filtering; no allocation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <string>

#include <Eigen/Dense>
#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/geometry/distance.hpp"
#include "marsden/geometry/filter.hpp"
#include "marsden/geometry/shapes.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::geometry {
namespace {

constexpr double kPi = 3.14159265358979323846;

SE3 translation(double x, double y, double z) { return SE3{Mat3::Identity(), Vec3(x, y, z)}; }
SE3 rotation(const Vec3& omega) { return SE3{SO3::exp(omega).R, Vec3::Zero()}; }
SE3 pose(const Vec3& omega, const Vec3& x) { return SE3{SO3::exp(omega).R, x}; }

double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
Vec3 uniform3(std::mt19937& rng, double lo, double hi) {
  return Vec3(uniform(rng, lo, hi), uniform(rng, lo, hi), uniform(rng, lo, hi));
}
Vec3 unit3(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return Vec3(n(rng), n(rng), n(rng)).normalized();
}
SE3 random_pose(std::mt19937& rng, double spread) {
  return pose(unit3(rng) * uniform(rng, 0.0, kPi), uniform3(rng, -spread, spread));
}
Vec3 in_ball(std::mt19937& rng) {
  for (;;) {
    const Vec3 p = uniform3(rng, -1.0, 1.0);
    if (p.squaredNorm() <= 1.0) return p;
  }
}

// ---- independent point distances and samples of each shape -------------------------------

// A point's signed distance to a shape on a body at g_wb, written from the definitions.
double point_distance(const Sphere& s, const SE3& g_wb, const Vec3& p) {
  return (p - g_wb.act(s.g_bs().x)).norm() - s.radius();
}
double point_distance(const Capsule& s, const SE3& g_wb, const Vec3& p) {
  const Vec3 l = (g_wb * s.g_bs()).inverse().act(p);
  const double z = std::clamp(l.z(), -s.half_length(), s.half_length());
  return (l - Vec3(0.0, 0.0, z)).norm() - s.radius();
}
double point_distance(const Box& s, const SE3& g_wb, const Vec3& p) {
  const Vec3 q = (g_wb * s.g_bs()).inverse().act(p).cwiseAbs() - s.half_extents();
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}
double point_distance(const Cylinder& s, const SE3& g_wb, const Vec3& p) {
  const Vec3 l = (g_wb * s.g_bs()).inverse().act(p);
  const Vec2 q(std::hypot(l.x(), l.y()) - s.radius(), std::abs(l.z()) - s.half_length());
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}

// A point inside the shape.
Vec3 sample_inside(const Sphere& s, const SE3& g_wb, std::mt19937& rng) {
  return g_wb.act(s.g_bs().x + s.radius() * in_ball(rng));
}
Vec3 sample_inside(const Capsule& s, const SE3& g_wb, std::mt19937& rng) {
  const Vec3 l = Vec3(0.0, 0.0, uniform(rng, -s.half_length(), s.half_length())) +
                 s.radius() * in_ball(rng);
  return (g_wb * s.g_bs()).act(l);
}
Vec3 sample_inside(const Box& s, const SE3& g_wb, std::mt19937& rng) {
  return (g_wb * s.g_bs()).act(s.half_extents().cwiseProduct(uniform3(rng, -1.0, 1.0)));
}
Vec3 sample_inside(const Cylinder& s, const SE3& g_wb, std::mt19937& rng) {
  Vec3 l = s.radius() * in_ball(rng);
  l.z() = uniform(rng, -s.half_length(), s.half_length());
  return (g_wb * s.g_bs()).act(l);
}

// Random shapes: sizes 0.1 to 0.8 m, placed off their bodies' origins.
SE3 random_offset(std::mt19937& rng) { return random_pose(rng, 0.3); }
Sphere random_sphere(std::mt19937& rng) {
  return Sphere(uniform(rng, 0.1, 0.8), random_offset(rng));
}
Capsule random_capsule(std::mt19937& rng) {
  return Capsule(uniform(rng, 0.1, 0.5), uniform(rng, 0.2, 0.8), random_offset(rng));
}
Box random_box(std::mt19937& rng) { return Box(uniform3(rng, 0.1, 0.8), random_offset(rng)); }
Cylinder random_cylinder(std::mt19937& rng) {
  return Cylinder(uniform(rng, 0.1, 0.6), uniform(rng, 0.1, 0.8), random_offset(rng));
}

// The half-space of the pairs' tests is carried by a frame g_wb (its normal n_b and offset
// given in that frame), so that a common rigid motion moves it with the shapes.
HalfSpace moved(const Vec3& n_b, double offset_b, const SE3& g_wb) {
  const Vec3 n = g_wb.R * n_b;
  return HalfSpace(n, offset_b + n.dot(g_wb.x));
}

// One pair of shapes at random sizes, for the property tests.
struct Pair {
  std::function<SignedDistance(const SE3&, const SE3&)> query;     // A at g_wa, B at g_wb
  std::function<SignedDistance(const SE3&, const SE3&)> reversed;  // B first (none: half-space)
  std::function<double(const SE3&, const Vec3&)> distance_a, distance_b;
  // Points inside each shape (inside_b: none for a half-space).
  std::function<Vec3(const SE3&, std::mt19937&)> inside_a, inside_b;
  bool b_moves = true;
};

template <class A, class B>
Pair shape_pair(const A& a, const B& b) {
  Pair p;
  p.query = [a, b](const SE3& g_a, const SE3& g_b) { return signed_distance(a, g_a, b, g_b); };
  p.reversed = [a, b](const SE3& g_a, const SE3& g_b) { return signed_distance(b, g_b, a, g_a); };
  p.distance_a = [a](const SE3& g, const Vec3& x) { return point_distance(a, g, x); };
  p.distance_b = [b](const SE3& g, const Vec3& x) { return point_distance(b, g, x); };
  p.inside_a = [a](const SE3& g, std::mt19937& rng) { return sample_inside(a, g, rng); };
  p.inside_b = [b](const SE3& g, std::mt19937& rng) { return sample_inside(b, g, rng); };
  return p;
}

template <class A>
Pair halfspace_pair(const A& a, const Vec3& n_b, double offset_b) {
  Pair p;
  p.query = [a, n_b, offset_b](const SE3& g_a, const SE3& g_b) {
    return signed_distance(a, g_a, moved(n_b, offset_b, g_b));
  };
  p.distance_a = [a](const SE3& g, const Vec3& x) { return point_distance(a, g, x); };
  p.distance_b = [n_b, offset_b](const SE3& g, const Vec3& x) {
    return moved(n_b, offset_b, g).distance(x);
  };
  p.inside_a = [a](const SE3& g, std::mt19937& rng) { return sample_inside(a, g, rng); };
  p.b_moves = false;
  return p;
}

enum class PairKind {
  SphereHalfSpace, CapsuleHalfSpace, BoxHalfSpace, CylinderHalfSpace, SphereSphere,
  SphereCapsule, CapsuleSphere, CapsuleCapsule, SphereBox, BoxSphere
};

const char* pair_name(PairKind k) {
  static const char* const kNames[] = {"SphereHalfSpace", "CapsuleHalfSpace", "BoxHalfSpace",
                                       "CylinderHalfSpace", "SphereSphere", "SphereCapsule",
                                       "CapsuleSphere", "CapsuleCapsule", "SphereBox",
                                       "BoxSphere"};
  return kNames[static_cast<int>(k)];
}

Pair random_pair(PairKind kind, std::mt19937& rng) {
  const Vec3 n_b = unit3(rng);
  const double offset_b = uniform(rng, -0.5, 0.5);
  switch (kind) {
    case PairKind::SphereHalfSpace: return halfspace_pair(random_sphere(rng), n_b, offset_b);
    case PairKind::CapsuleHalfSpace: return halfspace_pair(random_capsule(rng), n_b, offset_b);
    case PairKind::BoxHalfSpace: return halfspace_pair(random_box(rng), n_b, offset_b);
    case PairKind::CylinderHalfSpace: return halfspace_pair(random_cylinder(rng), n_b, offset_b);
    case PairKind::SphereSphere: return shape_pair(random_sphere(rng), random_sphere(rng));
    case PairKind::SphereCapsule: return shape_pair(random_sphere(rng), random_capsule(rng));
    case PairKind::CapsuleSphere: return shape_pair(random_capsule(rng), random_sphere(rng));
    case PairKind::CapsuleCapsule: return shape_pair(random_capsule(rng), random_capsule(rng));
    case PairKind::SphereBox: return shape_pair(random_sphere(rng), random_box(rng));
    case PairKind::BoxSphere: return shape_pair(random_box(rng), random_sphere(rng));
  }
  return {};
}

// ---- the checks ---------------------------------------------------------------------------

constexpr double kFdStep = 1e-6;
constexpr double kFdTolerance = 1e-6;  // relative, per column: |fd - J| <= tol max(1, |J|)

double column_error(const Eigen::VectorXd& fd, const Eigen::VectorXd& exact) {
  return (fd - exact).lpNorm<Eigen::Infinity>() / std::max(1.0, exact.lpNorm<Eigen::Infinity>());
}

// Every block against central differences in xi_a (and xi_b where B moves); false when a
// perturbation crossed onto another piece (the sample is then not a test of the formulas).
bool derivative_error(const Pair& pair, const SE3& g_a, const SE3& g_b, double& worst) {
  const SignedDistance d = pair.query(g_a, g_b);
  double err = 0.0;
  for (int body = 0; body < (pair.b_moves ? 2 : 1); ++body) {
    for (int i = 0; i < 6; ++i) {
      const Vec6 e = kFdStep * Vec6::Unit(i);
      const SE3 a_p = body == 0 ? g_a * SE3::exp(e) : g_a;
      const SE3 a_m = body == 0 ? g_a * SE3::exp(-e) : g_a;
      const SE3 b_p = body == 1 ? g_b * SE3::exp(e) : g_b;
      const SE3 b_m = body == 1 ? g_b * SE3::exp(-e) : g_b;
      const SignedDistance dp = pair.query(a_p, b_p), dm = pair.query(a_m, b_m);
      if (dp.feature != d.feature || dm.feature != d.feature) return false;
      const double h2 = 2.0 * kFdStep;
      const auto& J_phi = body == 0 ? d.J_phi_a : d.J_phi_b;
      const auto& J_n = body == 0 ? d.J_n_a : d.J_n_b;
      const auto& J_pa = body == 0 ? d.J_pa_a : d.J_pa_b;
      const auto& J_pb = body == 0 ? d.J_pb_a : d.J_pb_b;
      err = std::max(err, std::abs((dp.phi - dm.phi) / h2 - J_phi(i)) /
                              std::max(1.0, std::abs(J_phi(i))));
      err = std::max(err, column_error((dp.n - dm.n) / h2, J_n.col(i)));
      err = std::max(err, column_error((dp.p_a - dm.p_a) / h2, J_pa.col(i)));
      err = std::max(err, column_error((dp.p_b - dm.p_b) / h2, J_pb.col(i)));
    }
  }
  worst = std::max(worst, err);
  return true;
}

void expect_same(const SignedDistance& x, const SignedDistance& y, double tol) {
  EXPECT_NEAR(x.phi, y.phi, tol);
  EXPECT_LE((x.n - y.n).norm(), tol);
  EXPECT_LE((x.p_a - y.p_a).norm(), tol);
  EXPECT_LE((x.p_b - y.p_b).norm(), tol);
  EXPECT_LE((x.J_phi_a - y.J_phi_a).norm() + (x.J_phi_b - y.J_phi_b).norm(), tol);
  EXPECT_LE((x.J_n_a - y.J_n_a).norm() + (x.J_n_b - y.J_n_b).norm(), tol);
  EXPECT_LE((x.J_pa_a - y.J_pa_a).norm() + (x.J_pa_b - y.J_pa_b).norm(), tol);
  EXPECT_LE((x.J_pb_a - y.J_pb_a).norm() + (x.J_pb_b - y.J_pb_b).norm(), tol);
}

class PairProperties : public ::testing::TestWithParam<PairKind> {};

TEST_P(PairProperties, HoldAtRandomConfigurations) {
  std::mt19937 rng(20240 + static_cast<int>(GetParam()));
  constexpr int kSamples = 1000;
  int apart = 0, penetrating = 0, switched = 0;
  double worst = 0.0;
  std::set<std::uint32_t> features;
  for (int k = 0; k < kSamples; ++k) {
    const Pair pair = random_pair(GetParam(), rng);
    const SE3 g_a = random_pose(rng, 0.8), g_b = random_pose(rng, 0.8);
    const SignedDistance d = pair.query(g_a, g_b);
    SCOPED_TRACE("sample " + std::to_string(k) + ", phi " + std::to_string(d.phi));
    ASSERT_TRUE(d.unique);
    features.insert(d.feature);
    (d.phi > 0.0 ? apart : penetrating) += 1;

    // The normal is unit, the witnesses on their surfaces and phi n apart.
    EXPECT_NEAR(d.n.norm(), 1.0, 1e-12);
    EXPECT_LE((d.p_a - d.p_b - d.phi * d.n).norm(), 1e-12);
    EXPECT_NEAR(pair.distance_a(g_a, d.p_a), 0.0, 1e-12);
    EXPECT_NEAR(pair.distance_b(g_b, d.p_b), 0.0, 1e-12);
    if (d.phi > 0.0) {
      // Apart: each witness is phi from the other shape, and no point of either shape is
      // nearer the other.
      EXPECT_NEAR(pair.distance_a(g_a, d.p_b), d.phi, 1e-12);
      EXPECT_NEAR(pair.distance_b(g_b, d.p_a), d.phi, 1e-12);
      for (int j = 0; j < 50; ++j) {
        EXPECT_GE(pair.distance_b(g_b, pair.inside_a(g_a, rng)), d.phi - 1e-12);
        if (pair.inside_b) {
          EXPECT_GE(pair.distance_a(g_a, pair.inside_b(g_b, rng)), d.phi - 1e-12);
        }
      }
    } else {
      // Penetrating: A moved by -phi n (and a hair) lies outside B.
      const SE3 shift{Mat3::Identity(), (1e-9 - d.phi) * d.n};
      for (int j = 0; j < 50; ++j)
        EXPECT_GE(pair.distance_b(g_b, shift.act(pair.inside_a(g_a, rng))), -1e-12);
    }
    if (!pair.b_moves) {
      EXPECT_EQ(d.J_phi_b.norm() + d.J_n_b.norm() + d.J_pa_b.norm() + d.J_pb_b.norm(), 0.0);
    }

    // Exchanging A and B: the same distance, the normal reversed, the witnesses swapped.
    if (pair.reversed) expect_same(pair.reversed(g_a, g_b), swapped(d), 1e-12);

    // A common rigid motion: phi and the body-frame derivatives unchanged, the world
    // quantities moved.
    const SE3 g_0 = random_pose(rng, 2.0);
    const SignedDistance m = pair.query(g_0 * g_a, g_0 * g_b);
    EXPECT_NEAR(m.phi, d.phi, 1e-12);
    EXPECT_LE((m.n - g_0.R * d.n).norm(), 1e-12);
    EXPECT_LE((m.p_a - g_0.act(d.p_a)).norm(), 1e-12);
    EXPECT_LE((m.p_b - g_0.act(d.p_b)).norm(), 1e-12);
    // (round-off relative to the size of each block: near-parallel segments make J_n large)
    auto near = [](const auto& x, const auto& y) {
      return (x - y).norm() <= 1e-12 * (1.0 + y.norm());
    };
    EXPECT_TRUE(near(m.J_phi_a, d.J_phi_a) && near(m.J_phi_b, d.J_phi_b));
    EXPECT_TRUE(near(m.J_n_a, g_0.R * d.J_n_a) && near(m.J_n_b, g_0.R * d.J_n_b));
    EXPECT_TRUE(near(m.J_pa_a, g_0.R * d.J_pa_a) && near(m.J_pa_b, g_0.R * d.J_pa_b));
    EXPECT_TRUE(near(m.J_pb_a, g_0.R * d.J_pb_a) && near(m.J_pb_b, g_0.R * d.J_pb_b));

    // Every derivative against central differences on the manifold.
    if (!derivative_error(pair, g_a, g_b, worst)) ++switched;
  }
  std::printf("[ %s ] %d samples (%d apart, %d penetrating, %zu pieces), %d skipped across "
              "a switch; worst relative derivative error %.2e\n",
              pair_name(GetParam()), kSamples, apart, penetrating, features.size(), switched,
              worst);
  EXPECT_LE(worst, kFdTolerance);
  EXPECT_LE(switched, kSamples / 100);
  EXPECT_GE(apart, kSamples / 10);
  EXPECT_GE(penetrating, kSamples / 10);
}

INSTANTIATE_TEST_SUITE_P(
    AllPairs, PairProperties,
    ::testing::Values(PairKind::SphereHalfSpace, PairKind::CapsuleHalfSpace,
                      PairKind::BoxHalfSpace, PairKind::CylinderHalfSpace, PairKind::SphereSphere,
                      PairKind::SphereCapsule, PairKind::CapsuleSphere, PairKind::CapsuleCapsule,
                      PairKind::SphereBox, PairKind::BoxSphere),
    [](const ::testing::TestParamInfo<PairKind>& info) { return pair_name(info.param); });

// Close to the degenerate configurations, still on one smooth piece: capsule segments a
// small angle from parallel (the closest points then slide fast, ds ~ 1 / sin^2), and
// segments that nearly cross (the normal is then the common perpendicular, well defined).
TEST(NearDegenerate, CapsuleDerivatives) {
  const Capsule a(0.1, 1.0), b(0.15, 1.0);
  for (const double angle : {1e-1, 1e-2, 1e-3}) {
    // Both along z, 0.5 apart in x, B turned by `angle` about x: interior closest points.
    const Pair pair = shape_pair(a, b);
    double worst = 0.0;
    const SE3 g_a = translation(0.5, 0.0, 0.2), g_b = pose(Vec3(angle, 0, 0), Vec3(0, 0, 0));
    ASSERT_TRUE(derivative_error(pair, g_a, g_b, worst));
    EXPECT_EQ(pair.query(g_a, g_b).feature, 0u);
    std::printf("[ nearly parallel capsules, %.0e rad ] worst relative derivative error %.2e\n",
                angle, worst);
    // The central difference's own error grows as (h / sin)^2: 1e-6 at 1e-3 rad.
    EXPECT_LE(worst, angle >= 1e-2 ? kFdTolerance : 1e-5);
  }
  for (const double gap : {1e-2, 1e-4}) {
    // Crossing at right angles, `gap` apart.
    const Capsule c(0.1, 1.0, rotation(Vec3(0, kPi / 2, 0)));
    const Pair pair = shape_pair(c, b);
    double worst = 0.0;
    ASSERT_TRUE(derivative_error(pair, pose(Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, gap)),
                                 pose(Vec3(0.1, 0.2, 0.3), Vec3(0.0, 0.0, 0.0)), worst));
    std::printf("[ nearly crossing capsules, %.0e m ] worst relative derivative error %.2e\n",
                gap, worst);
    EXPECT_LE(worst, kFdTolerance);
  }
}

// Every smooth piece of the pairs with several is visited by the random samples above, so
// that each derivative formula is tested: capsule-capsule (both points inside, one at an
// end, both at ends), sphere-box (faces, edges, vertices, inside).
TEST(PairPieces, RandomSamplesVisitEveryPiece) {
  std::mt19937 rng(99);
  std::set<std::uint32_t> capsules, boxes;
  for (int k = 0; k < 4000; ++k) {
    const Capsule a = random_capsule(rng), b = random_capsule(rng);
    const SE3 g_a = random_pose(rng, 0.8), g_b = random_pose(rng, 0.8);
    capsules.insert(signed_distance(a, g_a, b, g_b).feature);
    boxes.insert(signed_distance(random_sphere(rng), g_a, random_box(rng), g_b).feature);
  }
  EXPECT_EQ(capsules.size(), 9u);     // (inside, -end, +end) for s and for t
  EXPECT_EQ(boxes.size(), 26u + 6u);  // 26 outside regions, 6 faces from inside
}

// ---- hand-computed distances ---------------------------------------------------------------

const HalfSpace kGround(Vec3::UnitZ(), 0.0);

TEST(ClosedForm, SphereOverTheGround) {
  const SignedDistance d = signed_distance(Sphere(0.5), translation(0.3, -0.2, 1.2), kGround);
  EXPECT_NEAR(d.phi, 0.7, 1e-15);
  EXPECT_EQ(d.n, Vec3::UnitZ());
  EXPECT_LE((d.p_a - Vec3(0.3, -0.2, 0.7)).norm(), 1e-15);
  EXPECT_LE((d.p_b - Vec3(0.3, -0.2, 0.0)).norm(), 1e-15);
  // Raising the body by v_z raises phi; turning it about its centre does not.
  EXPECT_LE((d.J_phi_a - (RowVec6() << 0, 0, 0, 0, 0, 1).finished()).norm(), 1e-15);
  // A sphere off the body's origin: turning the body about x lowers it.
  const Sphere off(0.5, translation(0.0, 1.0, 0.0));
  const SignedDistance e = signed_distance(off, translation(0.0, 0.0, 1.2), kGround);
  EXPECT_NEAR(e.phi, 0.7, 1e-15);
  EXPECT_NEAR(e.J_phi_a(0), 1.0, 1e-15);  // d z / d omega_x of the point (0, 1, 0): +1
}

TEST(ClosedForm, SphereOnAnIncline) {
  // A 30 degree incline through the origin: the sphere at distance 2 along its normal.
  const double a = kPi / 6.0;
  const Vec3 n(-std::sin(a), 0.0, std::cos(a));
  const HalfSpace incline = HalfSpace::through(Vec3::Zero(), n);
  const SignedDistance d = signed_distance(Sphere(0.25), SE3{Mat3::Identity(), 2.0 * n}, incline);
  EXPECT_NEAR(d.phi, 1.75, 1e-15);
  EXPECT_LE((d.p_b).norm(), 1e-15);
}

TEST(ClosedForm, CapsuleOverTheGround) {
  // Tilted by 0.4 rad about x: the lower end at z - h cos 0.4, minus the radius.
  const double r = 0.1, h = 0.5, z = 1.0, theta = 0.4;
  const SignedDistance d =
      signed_distance(Capsule(r, h), pose(Vec3(theta, 0, 0), Vec3(0, 0, z)), kGround);
  EXPECT_NEAR(d.phi, z - h * std::cos(theta) - r, 1e-15);
  EXPECT_LE((d.p_a - Vec3(0.0, h * std::sin(theta), z - h * std::cos(theta) - r)).norm(), 1e-15);
  EXPECT_TRUE(d.unique);
}

TEST(ClosedForm, BoxOverTheGround) {
  const Vec3 h(0.5, 0.3, 0.2);
  const double theta = 0.3, z = 1.0;
  // Turned about x: the lowest edge's end, z - (h_y sin + h_z cos).
  const SignedDistance d =
      signed_distance(Box(h, rotation(Vec3(0.0, 0.0, 0.0))), pose(Vec3(theta, 0, 0), Vec3(0, 0, z)),
                      HalfSpace(Vec3::UnitZ(), 0.0));
  EXPECT_NEAR(d.phi, z - h.y() * std::sin(theta) - h.z() * std::cos(theta), 1e-15);
  // Turned about a general axis: the lowest vertex against all eight.
  const SE3 g = pose(Vec3(0.3, -0.7, 0.2), Vec3(0.1, 0.2, 1.5));
  double lowest = 1e9;
  for (int k = 0; k < 8; ++k) {
    const Vec3 v((k & 1 ? 1 : -1) * h.x(), (k & 2 ? 1 : -1) * h.y(), (k & 4 ? 1 : -1) * h.z());
    lowest = std::min(lowest, g.act(v).z());
  }
  EXPECT_NEAR(signed_distance(Box(h), g, kGround).phi, lowest, 1e-15);
}

TEST(ClosedForm, CylinderOverTheGround) {
  const double r = 0.3, h = 0.5, z = 1.0, theta = 0.6;
  // Tilted: the rim point z - h cos - r sin; lying on its side: z - r.
  const SignedDistance d =
      signed_distance(Cylinder(r, h), pose(Vec3(theta, 0, 0), Vec3(0, 0, z)), kGround);
  EXPECT_NEAR(d.phi, z - h * std::cos(theta) - r * std::sin(theta), 1e-15);
  const SE3 lying = pose(Vec3(kPi / 2, 0, 0), Vec3(0, 0, z));
  EXPECT_NEAR(signed_distance(Cylinder(r, h), lying, kGround).phi, z - r, 1e-15);
}

TEST(ClosedForm, TwoSpheres) {
  const SignedDistance d = signed_distance(Sphere(1.0), translation(3, 0, 0), Sphere(0.5), SE3());
  EXPECT_NEAR(d.phi, 1.5, 1e-15);
  EXPECT_EQ(d.n, Vec3::UnitX());
  EXPECT_LE((d.p_a - Vec3(2, 0, 0)).norm() + (d.p_b - Vec3(0.5, 0, 0)).norm(), 1e-15);
  // Overlapping by 0.25 m.
  EXPECT_NEAR(signed_distance(Sphere(1.0), translation(1.25, 0, 0), Sphere(0.5), SE3()).phi,
              -0.25, 1e-15);
}

TEST(ClosedForm, SphereAndCapsule) {
  const Capsule c(0.2, 1.0);  // along z, from z = -1 to 1
  // Beside the segment, and beyond its end.
  const SignedDistance side = signed_distance(Sphere(0.3), translation(1, 0, 0.5), c, SE3());
  EXPECT_NEAR(side.phi, 0.5, 1e-15);
  EXPECT_LE((side.n - Vec3::UnitX()).norm(), 1e-15);
  EXPECT_LE((side.p_b - Vec3(0.2, 0, 0.5)).norm(), 1e-15);
  const SignedDistance end = signed_distance(Sphere(0.3), translation(0, 0, 2), c, SE3());
  EXPECT_NEAR(end.phi, 0.5, 1e-15);
  EXPECT_LE((end.p_b - Vec3(0, 0, 1.2)).norm(), 1e-15);
  // Diagonally off the end: distance to the end point (0, 0, 1).
  const SignedDistance off = signed_distance(Sphere(0.3), translation(1, 0, 2), c, SE3());
  EXPECT_NEAR(off.phi, std::sqrt(2.0) - 0.5, 1e-15);
}

TEST(ClosedForm, TwoCapsules) {
  // A along x at height 1, B along y at the origin: crossing at right angles.
  const Capsule a(0.1, 1.0, rotation(Vec3(0, kPi / 2, 0)));  // along x
  const Capsule b(0.2, 1.0, rotation(Vec3(kPi / 2, 0, 0)));  // along -y
  const SignedDistance d = signed_distance(a, translation(0.3, 0, 1), b, translation(0, -0.4, 0));
  EXPECT_NEAR(d.phi, 1.0 - 0.3, 1e-15);
  EXPECT_LE((d.n - Vec3::UnitZ()).norm(), 1e-15);
  EXPECT_LE((d.p_a - Vec3(0, 0, 0.9)).norm() + (d.p_b - Vec3(0, 0, 0.2)).norm(), 1e-15);
  // A beyond B's end: A's segment at y = 1.5 misses B's (|y| <= 0.6 after the shift),
  // closest B's end (0, 0.6, 0) to A's point (0, 1.5, 1).
  const SignedDistance e = signed_distance(a, translation(0.3, 1.5, 1), b, translation(0, -0.4, 0));
  EXPECT_NEAR(e.phi, std::hypot(0.9, 1.0) - 0.3, 1e-15);
  // Skew, both inside: the distance of the lines, |(x_b - x_a) . (u_a x u_b)| / |u_a x u_b|.
  const Vec3 ua = Vec3(1, 0.2, 0.1).normalized(), ub = Vec3(-0.3, 1, 0.4).normalized();
  auto along = [](const Vec3& u) -> Vec3 {  // the rotation vector taking z to u
    return Vec3::UnitZ().cross(u).normalized() * std::acos(u.z());
  };
  const SE3 ga = pose(along(ua), Vec3(0.1, 0.2, 0.3)), gb = pose(along(ub), Vec3(-0.2, 0.1, 1.1));
  const Vec3 w = ua.cross(ub);
  const double line = std::abs((gb.x - ga.x).dot(w)) / w.norm();
  const SignedDistance skew = signed_distance(Capsule(0.1, 2.0), ga, Capsule(0.15, 2.0), gb);
  EXPECT_EQ(skew.feature, 0u);  // both closest points inside their segments
  EXPECT_NEAR(skew.phi, line - 0.25, 1e-14);
}

TEST(ClosedForm, SphereAndBox) {
  const Box box(Vec3(1, 2, 3));
  const Sphere s(0.5);
  auto at = [&](double x, double y, double z) {
    return signed_distance(s, translation(x, y, z), box, SE3());
  };
  EXPECT_NEAR(at(2, 0, 0).phi, 0.5, 1e-15);                      // face
  EXPECT_EQ(at(2, 0, 0).n, Vec3::UnitX());
  EXPECT_NEAR(at(2, 3, 0).phi, std::sqrt(2.0) - 0.5, 1e-15);     // edge
  EXPECT_NEAR(at(2, 3, 4).phi, std::sqrt(3.0) - 0.5, 1e-15);     // vertex
  EXPECT_LE((at(2, 3, 4).p_b - Vec3(1, 2, 3)).norm(), 1e-15);
  const SignedDistance in = at(0.8, 0.5, -0.5);                  // inside, nearest the +x face
  EXPECT_NEAR(in.phi, -(1.0 - 0.8) - 0.5, 1e-15);
  EXPECT_EQ(in.n, Vec3::UnitX());
  EXPECT_LE((in.p_b - Vec3(1, 0.5, -0.5)).norm(), 1e-15);
  EXPECT_LE((in.p_a - Vec3(0.3, 0.5, -0.5)).norm(), 1e-15);
  const SignedDistance low = at(0.1, 0.2, -2.9);                 // inside, nearest the -z face
  EXPECT_NEAR(low.phi, -0.1 - 0.5, 1e-15);
  EXPECT_EQ(low.n, -Vec3::UnitZ());
}

// ---- degenerate configurations: finite, and the documented choice -------------------------

void expect_finite(const SignedDistance& d) {
  EXPECT_TRUE(std::isfinite(d.phi));
  EXPECT_TRUE(d.n.allFinite() && d.p_a.allFinite() && d.p_b.allFinite());
  EXPECT_TRUE(d.J_phi_a.allFinite() && d.J_phi_b.allFinite() && d.J_n_a.allFinite() &&
              d.J_n_b.allFinite() && d.J_pa_a.allFinite() && d.J_pa_b.allFinite() &&
              d.J_pb_a.allFinite() && d.J_pb_b.allFinite());
  EXPECT_NEAR(d.n.norm(), 1.0, 1e-15);
  EXPECT_LE((d.p_a - d.p_b - d.phi * d.n).norm(), 1e-14);
}

// phi at the pose moved by exp(h e_i): the one-sided slopes either way.
template <class Query>
void expect_mean_of_one_sided(const Query& query, const SE3& g, const RowVec6& J_phi) {
  const double h = 1e-7;
  for (int i = 0; i < 6; ++i) {
    const double f0 = query(g), fp = query(g * SE3::exp(h * Vec6::Unit(i))),
                 fm = query(g * SE3::exp(-h * Vec6::Unit(i)));
    const double forward = (fp - f0) / h, backward = (f0 - fm) / h;
    EXPECT_NEAR(J_phi(i), 0.5 * (forward + backward), 1e-6) << "direction " << i;
  }
}

TEST(Degenerate, FaceOnAndEdgeOnToAPlaneTakeTheMiddle) {
  const Vec3 h(0.5, 0.3, 0.2);
  // A box face-on, turned about z: the witness is under its centre.
  const SE3 g = pose(Vec3(0, 0, 0.7), Vec3(0.4, -0.1, 1.0));
  const SignedDistance d = signed_distance(Box(h), g, kGround);
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, 0.8, 1e-15);
  EXPECT_LE((d.p_a - Vec3(0.4, -0.1, 0.8)).norm(), 1e-15);
  // The derivative of the face's centre: the mean of the one-sided derivatives of phi.
  expect_mean_of_one_sided([&](const SE3& x) { return signed_distance(Box(h), x, kGround).phi; },
                           g, d.J_phi_a);
  // Edge-on (turned 45 degrees about x): the middle of the lowest edge.
  const SE3 e = pose(Vec3(kPi / 4, 0, 0), Vec3(0, 0, 1));
  const SignedDistance de = signed_distance(Box(Vec3(0.5, 0.3, 0.3)), e, kGround);
  EXPECT_FALSE(de.unique);
  EXPECT_NEAR(de.p_a.x(), 0.0, 1e-15);
  EXPECT_NEAR(de.phi, 1.0 - 0.3 * std::sqrt(2.0), 1e-15);
  // A capsule lying flat: the middle of its segment.
  const SE3 flat = pose(Vec3(kPi / 2, 0, 0), Vec3(0.2, 0.3, 0.5));
  const SignedDistance c = signed_distance(Capsule(0.1, 0.6), flat, kGround);
  expect_finite(c);
  EXPECT_FALSE(c.unique);
  EXPECT_LE((c.p_a - Vec3(0.2, 0.3, 0.4)).norm(), 1e-15);
  expect_mean_of_one_sided(
      [&](const SE3& x) { return signed_distance(Capsule(0.1, 0.6), x, kGround).phi; }, flat,
      c.J_phi_a);
  // A cylinder standing on its cap: the cap's centre; lying on its side: the middle of
  // the lowest line of its rim.
  const SE3 standing = translation(0.1, 0.2, 1.0);
  const SignedDistance s = signed_distance(Cylinder(0.3, 0.5), standing, kGround);
  expect_finite(s);
  EXPECT_FALSE(s.unique);
  EXPECT_LE((s.p_a - Vec3(0.1, 0.2, 0.5)).norm(), 1e-15);
  expect_mean_of_one_sided(
      [&](const SE3& x) { return signed_distance(Cylinder(0.3, 0.5), x, kGround).phi; }, standing,
      s.J_phi_a);
  const SignedDistance l = signed_distance(Cylinder(0.3, 0.5), flat, kGround);
  expect_finite(l);
  EXPECT_FALSE(l.unique);
  EXPECT_LE((l.p_a - Vec3(0.2, 0.3, 0.2)).norm(), 1e-15);
}

TEST(Degenerate, ConcentricSpheresTakeWorldUp) {
  const SE3 g = pose(Vec3(0.3, 0.2, 0.1), Vec3(1, 2, 3));
  const SignedDistance d = signed_distance(Sphere(0.5), g, Sphere(0.25), g);
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, -0.75, 1e-15);
  EXPECT_EQ(d.n, Vec3::UnitZ());
  EXPECT_EQ(d.J_n_a.norm() + d.J_n_b.norm(), 0.0);
  // The derivative of phi = n . (c_a - c_b) - r_a - r_b at the fixed normal.
  EXPECT_LE((d.J_phi_a.tail<3>() - (g.R.transpose() * Vec3::UnitZ()).transpose()).norm(), 1e-15);
}

TEST(Degenerate, SphereCentreOnACapsuleSegmentTakesItsXAxis) {
  const SE3 g_b = pose(Vec3(0.4, -0.3, 0.2), Vec3(0.5, 0, 0));
  const SE3 g_a = SE3{Mat3::Identity(), g_b.act(Vec3(0, 0, 0.3))};
  const SignedDistance d = signed_distance(Sphere(0.2), g_a, Capsule(0.1, 1.0), g_b);
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, -0.3, 1e-15);
  EXPECT_LE((d.n - g_b.R.col(0)).norm(), 1e-15);
}

TEST(Degenerate, CrossingCapsuleSegmentsTakeTheirCommonPerpendicular) {
  const Capsule a(0.1, 1.0, rotation(Vec3(0, kPi / 2, 0)));  // along x
  const Capsule b(0.2, 1.0, rotation(Vec3(kPi / 2, 0, 0)));  // along -y
  // The segments cross at (0.1, 0.2, 0); B's centre a little below A's.
  const SignedDistance d = signed_distance(a, translation(0, 0.2, 0), b, translation(0.1, 0, 0));
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, -0.3, 1e-15);
  EXPECT_NEAR(std::abs(d.n.z()), 1.0, 1e-15);
  // Signed from B's centre towards A's where that has a part along it: lift A.
  const SignedDistance up =
      signed_distance(a, translation(0, 0.2, 1e-14), b, translation(0.1, 0, 0));
  EXPECT_GT(up.n.z(), 0.0);
}

TEST(Degenerate, ParallelCapsulesTakeTheMiddleOfTheirOverlap) {
  // Both along z, 0.5 apart in x; A spans z in [0.5, 2.5], B [-1, 1]: overlap [0.5, 1].
  const Capsule a(0.1, 1.0), b(0.15, 1.0);
  const SignedDistance d = signed_distance(a, translation(0.5, 0, 1.5), b, SE3());
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, 0.25, 1e-15);
  EXPECT_LE((d.p_a - Vec3(0.4, 0, 0.75)).norm() + (d.p_b - Vec3(0.15, 0, 0.75)).norm(), 1e-15);
  // Antiparallel: the same.
  const Capsule flipped(0.1, 1.0, rotation(Vec3(kPi, 0, 0)));
  const SignedDistance anti = signed_distance(flipped, translation(0.5, 0, 1.5), b, SE3());
  EXPECT_LE((anti.p_a - d.p_a).norm(), 1e-15);
  // Parallel without overlap: the nearest ends, unique.
  const SignedDistance apart = signed_distance(a, translation(0.5, 0, 3.0), b, SE3());
  EXPECT_TRUE(apart.unique);
  EXPECT_NEAR(apart.phi, std::hypot(0.5, 1.0) - 0.25, 1e-15);
  // On one line, overlapping: A's x axis.
  const SignedDistance line = signed_distance(a, pose(Vec3(0, 0, 0.3), Vec3(0, 0, 1.5)), b, SE3());
  expect_finite(line);
  EXPECT_NEAR(line.phi, -0.25, 1e-15);
  EXPECT_LE((line.n - SO3::exp(Vec3(0, 0, 0.3)).R.col(0)).norm(), 1e-15);
}

TEST(Degenerate, SphereCentreInsideABoxTakesTheLowestFace) {
  // At the centre of a cube: every face at the same depth; face +x by the rule.
  const SE3 g = pose(Vec3(0.1, 0.5, -0.3), Vec3(1, 1, 1));
  const SignedDistance d = signed_distance(Sphere(0.2), g, Box(Vec3(0.5, 0.5, 0.5)), g);
  expect_finite(d);
  EXPECT_FALSE(d.unique);
  EXPECT_NEAR(d.phi, -0.7, 1e-15);
  EXPECT_LE((d.n - g.R.col(0)).norm(), 1e-15);
  // Equal depth below the +y and +z faces: y (lower index).
  const SignedDistance yz = signed_distance(Sphere(0.2), translation(0, 0.3, 0.3),
                                            Box(Vec3(0.5, 0.5, 0.5)), SE3());
  EXPECT_FALSE(yz.unique);
  EXPECT_EQ(yz.n, Vec3::UnitY());
  // On the mid-plane of the thinnest axis: the + face.
  const SignedDistance mid = signed_distance(Sphere(0.2), translation(0.1, 0.2, 0),
                                             Box(Vec3(1, 1, 0.5)), SE3());
  EXPECT_FALSE(mid.unique);
  EXPECT_EQ(mid.n, Vec3::UnitZ());
}

TEST(Degenerate, SwitchingPiecesKeepPhiContinuous) {
  // A box rocking through face-on: phi is continuous through the switch of its lowest
  // vertex, and each side's derivative is that side's vertex.
  const Box box(Vec3(0.5, 0.3, 0.2));
  auto at = [&](double theta) {
    return signed_distance(box, pose(Vec3(theta, 0, 0), Vec3(0, 0, 1)), kGround);
  };
  EXPECT_NEAR(at(1e-9).phi, at(0.0).phi, 1e-9);
  EXPECT_NEAR(at(-1e-9).phi, at(0.0).phi, 1e-9);
  EXPECT_NEAR(at(0.1).J_phi_a(0), -0.3 * std::cos(0.1) + 0.2 * std::sin(0.1), 1e-12);
  EXPECT_NEAR(at(-0.1).J_phi_a(0), 0.3 * std::cos(0.1) - 0.2 * std::sin(0.1), 1e-12);
}

// ---- any shape ------------------------------------------------------------------------------

TEST(AnyShape, DispatchesEveryClosedFormAndRefusesTheRest) {
  const std::vector<Shape> shapes = {Sphere(0.3), Capsule(0.2, 0.5), Box(Vec3(0.3, 0.4, 0.5)),
                                     Cylinder(0.3, 0.4)};
  const SE3 g_a = pose(Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, 1.3));
  const SE3 g_b = pose(Vec3(-0.3, 0.1, 0.2), Vec3(0, 0, 0));
  for (const Shape& a : shapes) {
    // Every shape against a half-space, as its own overload.
    const SignedDistance h = signed_distance(a, g_a, kGround);
    std::visit([&](const auto& s) { EXPECT_EQ(h.phi, signed_distance(s, g_a, kGround).phi); }, a);
    for (const Shape& b : shapes) {
      const ShapeType ta = shape_type(a), tb = shape_type(b);
      if (!has_signed_distance(ta, tb)) {
        try {
          signed_distance(a, g_a, b, g_b);
          ADD_FAILURE() << "no error for " << shape_type_name(ta) << "-" << shape_type_name(tb);
        } catch (const InputError& e) {
          const std::string pair = std::string(shape_type_name(ta)) + "-" + shape_type_name(tb);
          EXPECT_NE(std::string(e.what()).find(pair), std::string::npos) << e.what();
        }
        continue;
      }
      const SignedDistance d = signed_distance(a, g_a, b, g_b);
      expect_finite(d);
      EXPECT_NEAR(signed_distance(b, g_b, a, g_a).phi, d.phi, 1e-15);
    }
  }
  EXPECT_TRUE(has_signed_distance(ShapeType::Box, ShapeType::Sphere));
  EXPECT_FALSE(has_signed_distance(ShapeType::Box, ShapeType::Box));
  EXPECT_FALSE(has_signed_distance(ShapeType::Cylinder, ShapeType::Sphere));
}

TEST(AnyShape, QueriesDoNotAllocate) {
  const Shape a = Capsule(0.2, 0.5), b = Box(Vec3(0.3, 0.4, 0.5)), s = Sphere(0.3);
  const SE3 g_a = pose(Vec3(0.1, 0.2, 0.3), Vec3(0.1, 0.2, 1.3)), g_b = SE3();
  double sink = 0.0;
  const long n = test_support::allocations_during([&] {
    sink += signed_distance(a, g_a, s, g_b).phi + signed_distance(s, g_a, b, g_b).phi;
    sink += signed_distance(b, g_a, kGround).phi + signed_distance(a, g_a, a, g_b).phi;
  });
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(std::isfinite(sink));
}

// ---- bad input ------------------------------------------------------------------------------

template <class F>
void expect_input_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one naming '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BadInput, ShapesNameTheField) {
  const double nan = std::nan("");
  expect_input_error([] { (void)Sphere(0.0); }, "sphere: radius");
  expect_input_error([] { (void)Sphere(-1.0); }, "sphere: radius");
  expect_input_error([&] { (void)Sphere(nan); }, "sphere: radius");
  expect_input_error([] { (void)Capsule(0.1, 0.0); }, "capsule: half_length");
  expect_input_error([] { (void)Capsule(-0.1, 1.0); }, "capsule: radius");
  expect_input_error([] { (void)Box(Vec3(1.0, 0.0, 1.0)); }, "box: half_extents[1]");
  expect_input_error([&] { (void)Box(Vec3(1.0, 1.0, nan)); }, "box: half_extents[2]");
  expect_input_error([] { (void)Cylinder(0.1, INFINITY); }, "cylinder: half_length");
  expect_input_error([] { (void)Cylinder(0.0, 1.0); }, "cylinder: radius");
  SE3 sheared;
  sheared.R(0, 1) = 0.1;
  expect_input_error([&] { (void)Sphere(1.0, sheared); }, "sphere: pose g_bs");
  SE3 mirrored;
  mirrored.R(2, 2) = -1.0;
  expect_input_error([&] { (void)Box(Vec3::Ones(), mirrored); }, "box: pose g_bs");
  SE3 far;
  far.x.x() = nan;
  expect_input_error([&] { (void)Capsule(1.0, 1.0, far); }, "capsule: pose g_bs");
}

TEST(BadInput, HalfSpacesNameTheField) {
  expect_input_error([] { (void)HalfSpace(Vec3::Zero(), 0.0); }, "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3(0, 0, 2), 0.0); }, "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3(std::nan(""), 0, 1), 0.0); },
                     "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3::UnitZ(), INFINITY); }, "half-space: offset");
  expect_input_error([] { (void)HalfSpace::through(Vec3(0, std::nan(""), 0), Vec3::UnitZ()); },
                     "half-space: point p");
  EXPECT_NEAR(HalfSpace(Vec3(0, 0, 1.0 + 1e-12), 0.0).n().norm(), 1.0, 1e-16);
}

// ---- collision filtering ----------------------------------------------------------------------

TEST(CollisionFilter, BodiesJointsGroupsAndMasks) {
  CollisionFilter f;
  const int ground = f.add_shape(kWorld), wall = f.add_shape(kWorld);
  const int a0 = f.add_shape(0), a1 = f.add_shape(0), b = f.add_shape(1), c = f.add_shape(2);
  EXPECT_FALSE(f.should_collide(ground, wall));  // the environment with itself
  EXPECT_FALSE(f.should_collide(a0, a1));        // one body
  EXPECT_TRUE(f.should_collide(a0, ground));
  EXPECT_TRUE(f.should_collide(a0, b));
  // Bodies 0 and 1 joined by a joint: excluded, in either order, until asked for.
  f.exclude_bodies(1, 0);
  EXPECT_TRUE(f.bodies_excluded(0, 1));
  EXPECT_FALSE(f.should_collide(a0, b));
  EXPECT_FALSE(f.should_collide(b, a1));
  EXPECT_TRUE(f.should_collide(b, c));
  f.exclude_bodies(0, 1);  // twice is once
  f.allow_bodies(0, 1);
  EXPECT_TRUE(f.should_collide(a0, b));
  // Groups and masks: both sides must accept.
  CollisionFilter g;
  const int feet = g.add_shape(0, 0b01, 0b10);   // group 1, collides with group 2
  const int floor = g.add_shape(kWorld, 0b10, 0b01);
  const int ghost = g.add_shape(1, 0b100, ~0u);  // its group is in nobody's mask but its own
  const int other = g.add_shape(2, 0b01, 0b10);
  EXPECT_TRUE(g.should_collide(feet, floor));
  EXPECT_FALSE(g.should_collide(feet, other));   // group 1 is not in group 1's mask
  EXPECT_FALSE(g.should_collide(ghost, floor));  // floor's mask lacks ghost's group
  EXPECT_EQ(g.candidate_pairs(), (std::vector<std::pair<int, int>>{{feet, floor}, {floor, other}}));
}

TEST(CollisionFilter, BadInputNamesTheBodyOrShape) {
  CollisionFilter f;
  f.add_shape(0);
  expect_input_error([&] { f.add_shape(-2); }, "body -2");
  expect_input_error([&] { f.should_collide(0, 3); }, "shape 3 is not registered");
  expect_input_error([&] { f.exclude_bodies(2, 2); }, "got 2 twice");
  expect_input_error([&] { f.exclude_bodies(-5, 2); }, "body_a -5");
}

}  // namespace
}  // namespace marsden::geometry
