// Unit quaternion tests: the matrix identities of the maximal-coordinates paper §2.1
// (eqs. (11)-(16)), the rotation action, from_rotation (including at and near pi), and
// agreement with SO(3).
#include <gtest/gtest.h>

#include "lie/group_test_utils.hpp"

namespace marsden::test {
namespace {

constexpr double kRoundoff = 1e-12;

Vec4 random_unit_quat(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Vec4 q;
  for (int i = 0; i < 4; ++i) q(i) = normal(rng);
  return q.normalized();
}

Vec3 random_vec(std::mt19937& rng) {
  std::uniform_real_distribution<double> uni(-2.0, 2.0);
  return Vec3(uni(rng), uni(rng), uni(rng));
}

TEST(Quaternion, MatrixIdentities) {
  std::mt19937 rng(11);
  const Mat4 T = quat::T();
  const Mat34 V = quat::V();
  for (int i = 0; i < 25; ++i) {
    const Vec4 q = random_unit_quat(rng), p = random_unit_quat(rng);
    const Vec3 x = random_vec(rng);
    const Vec4 qp = (Quat{q} * Quat{p}).q;
    // eq. (3) written out, and eq. (11): q (x) p = L(q) p = R(p) q.
    Vec4 ref;
    ref << q(0) * p(0) - q.tail<3>().dot(p.tail<3>()),
        q(0) * p.tail<3>() + p(0) * q.tail<3>() + q.tail<3>().cross(p.tail<3>());
    EXPECT_TRUE(abs_near(qp, ref, kRoundoff));
    EXPECT_TRUE(abs_near(quat::L(q) * p, qp, kRoundoff));
    EXPECT_TRUE(abs_near(quat::R(p) * q, qp, kRoundoff));
    // eq. (12): q^dagger = T q, and it is the group inverse.
    EXPECT_TRUE(abs_near(T * q, Quat{q}.inverse().q, 0.0));
    EXPECT_TRUE(abs_near((Quat{q} * Quat{T * q}).q, Vec4(1, 0, 0, 0), kRoundoff));
    // eqs. (13), (14): vector part and expansion.
    EXPECT_EQ(V * q, q.tail<3>());
    Vec4 xhat;
    xhat << 0.0, x;
    EXPECT_EQ(V.transpose() * x, xhat);
    // eq. (15): (q (x) x^ (x) q^dagger)^v = V R(q)^T L(q) V^T x = V L(q) R(q)^T V^T x.
    const Vec3 rotated = V * (Quat{q} * Quat{xhat} * Quat{T * q}).q;
    EXPECT_TRUE(abs_near(V * quat::R(q).transpose() * quat::L(q) * V.transpose() * x, rotated,
                         kRoundoff));
    EXPECT_TRUE(abs_near(V * quat::L(q) * quat::R(q).transpose() * V.transpose() * x, rotated,
                         kRoundoff));
    EXPECT_TRUE(abs_near(Quat{q}.act(x), rotated, kRoundoff));
    // L and R commute (associativity) and are orthogonal for unit q.
    EXPECT_TRUE(abs_near(quat::L(q) * quat::R(p), quat::R(p) * quat::L(q), kRoundoff));
    EXPECT_TRUE(abs_near(quat::L(q).transpose() * quat::L(q), Mat4::Identity(), kRoundoff));
    EXPECT_TRUE(abs_near(quat::L(q).transpose(), quat::L(T * q), 0.0));
  }
}

// eq. (16): the body angular velocity of q(t) = q (x) exp(t omega) is
// omega = 2 V L(q)^T q_dot (checked with a central difference of q(t)).
TEST(Quaternion, AngularVelocity) {
  std::mt19937 rng(12);
  const double h = 1e-6;
  for (int i = 0; i < 25; ++i) {
    const Quat q{random_unit_quat(rng)};
    const Vec3 w = random_vec(rng);
    const Vec4 qdot = ((q * Quat::exp(h * w)).q - (q * Quat::exp(-h * w)).q) / (2.0 * h);
    EXPECT_TRUE(rel_near((2.0 * quat::V() * quat::L(q.q).transpose() * qdot).eval(), w, 1e-8));
    // and q_dot = (1/2) q (x) (0, omega).
    Vec4 what;
    what << 0.0, w;
    EXPECT_TRUE(rel_near(qdot, (0.5 * quat::L(q.q) * what).eval(), 1e-8));
  }
}

TEST(Quaternion, ActEqualsMatrix) {
  std::mt19937 rng(13);
  for (int i = 0; i < 25; ++i) {
    const Quat q{random_unit_quat(rng)};
    const Vec3 p = random_vec(rng);
    EXPECT_TRUE(abs_near(q.act(p), (q.matrix() * p).eval(), kRoundoff));
    EXPECT_TRUE(abs_near(q.matrix().transpose() * q.matrix(), Mat3::Identity(), kRoundoff));
    EXPECT_NEAR(q.matrix().determinant(), 1.0, kRoundoff);
  }
}

// from_rotation returns the q_w >= 0 representative: q up to sign, the matrix exactly.
void expect_from_rotation(const Quat& q) {
  const Quat r = Quat::from_rotation(q.matrix());
  EXPECT_GE(r.q(0), 0.0);
  EXPECT_LE(std::min((r.q - q.q).norm(), (r.q + q.q).norm()), kRoundoff);
  EXPECT_TRUE(abs_near(r.matrix(), q.matrix(), kRoundoff));
}

TEST(Quaternion, FromRotationRoundTrip) {
  std::mt19937 rng(14);
  for (int i = 0; i < 50; ++i) expect_from_rotation(Quat{random_unit_quat(rng)});
  expect_from_rotation(Quat::identity());
  // Near and at pi about random axes and the coordinate axes (the trace is ~ -1 and
  // one of the diagonal branches is taken).
  for (double angle : {kPi - 1e-3, kPi - 1e-6, kPi - 1e-12, kPi}) {
    for (int i = 0; i < 10; ++i)
      expect_from_rotation(Quat::exp(angle * random_vec(rng).normalized()));
    for (int k = 0; k < 3; ++k) {
      Vec3 axis = Vec3::Zero();
      axis(k) = (k == 1) ? -1.0 : 1.0;
      expect_from_rotation(Quat::exp(angle * axis));
    }
  }
}

TEST(Quaternion, AgreesWithSO3) {
  std::mt19937 rng(15);
  for (int i = 0; i < 25; ++i) {
    const Vec3 w = tangent_with_angle<SO3>(rng, 3.0 * (i + 1) / 25.0);
    EXPECT_TRUE(abs_near(Quat::exp(w).matrix(), SO3::exp(w).R, kRoundoff));
    EXPECT_TRUE(abs_near(Quat::cay(w).matrix(), SO3::cay(w).R, kRoundoff));
    EXPECT_TRUE(abs_near(Quat::ccsk(w).matrix(), SO3::ccsk(w).R, kRoundoff));
    EXPECT_GT(Quat::cay(w).q(0), 0.0);
    // Below pi the two logs agree.
    EXPECT_TRUE(abs_near(Quat::log(Quat::exp(w)), SO3::log(SO3::exp(w)), kRoundoff));
    EXPECT_TRUE(abs_near(Quat::cay_inv(Quat::cay(w)), SO3::cay_inv(SO3::cay(w)), kRoundoff));
    const Quat a{random_unit_quat(rng)}, b{random_unit_quat(rng)};
    EXPECT_TRUE(abs_near((a * b).matrix(), a.matrix() * b.matrix(), kRoundoff));
    EXPECT_TRUE(abs_near(a.inverse().matrix(), a.matrix().transpose(), kRoundoff));
    EXPECT_TRUE(abs_near(a.Ad(), a.matrix(), 0.0));
  }
}

// log covers [0, 2 pi]: exp(log q) = q on both sheets, including near q = -1.
TEST(Quaternion, LogOnBothSheets) {
  std::mt19937 rng(16);
  for (double angle : {1e-8, 1.0, kPi, 4.0, 2.0 * kPi - 1e-3, 2.0 * kPi - 1e-6}) {
    for (int i = 0; i < 10; ++i) {
      const Vec3 w = angle * random_vec(rng).normalized();
      const Quat q = Quat::exp(w);
      EXPECT_TRUE(rel_near(Quat::log(q), w, 1e-12 / (2.0 * kPi - angle)));
      EXPECT_TRUE(abs_near(Quat::exp(Quat::log(q)).q, q.q, kRoundoff));
      EXPECT_TRUE(abs_near(Quat::exp(Quat::log(Quat{-q.q})).q, -q.q, kRoundoff));
    }
  }
  EXPECT_TRUE(abs_near(Quat::log(Quat::identity()), Vec3::Zero(), 0.0));
  const Vec4 minus_one(-1.0, 0.0, 0.0, 0.0);
  EXPECT_TRUE(abs_near(Quat::exp(Quat::log(Quat{minus_one})).q, minus_one, kRoundoff));
}

}  // namespace
}  // namespace marsden::test
