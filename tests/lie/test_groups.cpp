// Property tests of the Lie group layer: one typed suite over SO(3), SE(2), SE(3) and
// unit quaternions, plus checks of the vehicles paper's printed C_cay matrices.
//
// Points: the identity, |xi| ~ 1e-8, seeded random points, and rotation angles pi - 1e-6
// and pi - 1e-3 (exp, log, ccsk); for cay, large |omega| instead of "near pi".
// Tolerances: round-off identities 1e-12; central differences with step 1e-6 against
// analytic tangents 1e-7 relative (FD error ~1e-10 from round-off, ~1e-12 truncation).
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lie/group_test_utils.hpp"
#include "marsden/lie/tangent.hpp"

namespace marsden::test {
namespace {

constexpr double kRoundoff = 1e-12;
constexpr double kFdTol = 1e-7;
constexpr int kRandom = 25;

template <class G>
using Points = std::vector<std::pair<std::string, Tan<G>>>;

// "prefix i"; built by appending (GCC 12 warns spuriously on "literal" + std::string).
std::string label(const char* prefix, int i) {
  std::string s(prefix);
  s += ' ';
  s += std::to_string(i);
  return s;
}

template <class G>
class LieGroupTest : public ::testing::Test {
 protected:
  std::mt19937 rng{20240611u};

  // Points for exp/log: rotation angle below pi, and at pi - 1e-6, pi - 1e-3.
  Points<G> exp_points() {
    Points<G> pts;
    pts.emplace_back("identity", Tan<G>::Zero());
    pts.emplace_back("near identity", tangent_with_angle<G>(rng, 1e-8, 1e-8));
    std::uniform_real_distribution<double> angle(0.0, kPi);
    for (int i = 0; i < kRandom; ++i)
      pts.emplace_back(label("random", i), tangent_with_angle<G>(rng, angle(rng), 2.0));
    pts.emplace_back("pi - 1e-6", tangent_with_angle<G>(rng, kPi - 1e-6, 2.0));
    pts.emplace_back("pi - 1e-3", tangent_with_angle<G>(rng, kPi - 1e-3, 2.0));
    return pts;
  }

  // Points for cay: |omega| up to 5 and large |omega| (rotation angle near pi).
  Points<G> cay_points() {
    Points<G> pts;
    pts.emplace_back("identity", Tan<G>::Zero());
    pts.emplace_back("near identity", tangent_with_angle<G>(rng, 1e-8, 1e-8));
    std::uniform_real_distribution<double> norm(0.0, 5.0);
    for (int i = 0; i < kRandom; ++i)
      pts.emplace_back(label("random", i), tangent_with_angle<G>(rng, norm(rng), 2.0));
    pts.emplace_back("|omega| = 100", tangent_with_angle<G>(rng, 100.0, 2.0));
    return pts;
  }

  // Points for ccsk: angles in the domain of ccsk_inv at random, and all rotational
  // coordinates at pi - 1e-6 or pi - 1e-3.
  Points<G> ccsk_points() {
    constexpr int r = Traits<G>::kRot;
    Points<G> pts;
    pts.emplace_back("identity", Tan<G>::Zero());
    Tan<G> tiny = random_unit_tangent<G>(rng);
    pts.emplace_back("near identity", 1e-8 * tiny);
    for (int i = 0; i < kRandom; ++i) pts.emplace_back(label("random", i), ccsk_domain_point());
    for (const auto& [delta, name] : {std::pair{1e-6, "pi - 1e-6"}, std::pair{1e-3, "pi - 1e-3"}}) {
      Tan<G> a = ccsk_domain_point();
      a.template head<r>().setConstant(kPi - delta);
      pts.emplace_back(name, a);
    }
    return pts;
  }

  // Inside the ccsk_inv domain: outer angles in (-pi, pi), middle angle (3-D) away from
  // gimbal lock, translations in [-2, 2].
  Tan<G> ccsk_domain_point() {
    std::uniform_real_distribution<double> outer(-kPi, kPi), middle(-1.4, 1.4), trans(-2.0, 2.0);
    Tan<G> a;
    for (int i = 0; i < G::kDim; ++i) a(i) = trans(rng);
    a(0) = outer(rng);
    if constexpr (Traits<G>::kRot == 3) {
      a(1) = middle(rng);
      a(2) = outer(rng);
    }
    return a;
  }
};

using Groups = ::testing::Types<SO3, SE2, SE3, Quat>;
TYPED_TEST_SUITE(LieGroupTest, Groups);

TYPED_TEST(LieGroupTest, GroupAxioms) {
  using G = TypeParam;
  for (int i = 0; i < kRandom; ++i) {
    const G a = random_element<G>(this->rng, 2.0 * kPi);
    const G b = random_element<G>(this->rng, 2.0 * kPi);
    const G c = random_element<G>(this->rng, 2.0 * kPi);
    EXPECT_LE(distance((a * b) * c, a * (b * c)), kRoundoff);
    EXPECT_EQ(distance(G::identity() * a, a), 0.0);
    EXPECT_EQ(distance(a * G::identity(), a), 0.0);
    EXPECT_LE(distance(a * a.inverse(), G::identity()), kRoundoff);
    EXPECT_LE(distance(a.inverse() * a, G::identity()), kRoundoff);
    // The product is the matrix product of the representation.
    EXPECT_TRUE(abs_near(Traits<G>::mat(a * b), Traits<G>::mat(a) * Traits<G>::mat(b), kRoundoff));
  }
}

TYPED_TEST(LieGroupTest, HatVeeRoundTrip) {
  using G = TypeParam;
  for (int i = 0; i < kRandom; ++i) {
    const Tan<G> xi = tangent_with_angle<G>(this->rng, 2.0, 3.0);
    EXPECT_EQ(G::vee(G::hat(xi)), xi);
    EXPECT_EQ(G::hat(G::vee(G::hat(xi))), G::hat(xi));
  }
}

TYPED_TEST(LieGroupTest, ExpLog) {
  using G = TypeParam;
  for (const auto& [name, xi] : this->exp_points()) {
    SCOPED_TRACE(name);
    const G g = G::exp(xi);
    EXPECT_TRUE(rel_near(G::log(g), xi, kRoundoff));
    EXPECT_LE(distance(G::exp(G::log(g)), g), kRoundoff);
    // Against the matrix exponential of the representation.
    EXPECT_TRUE(rel_near(Traits<G>::mat(g), expm(Traits<G>::hat(xi)), kRoundoff));
  }
  for (int i = 0; i < kRandom; ++i) {
    const G g = random_element<G>(this->rng, 2.0 * kPi);
    EXPECT_LE(distance(G::exp(G::log(g)), g), kRoundoff);
  }
}

TYPED_TEST(LieGroupTest, CayInverse) {
  using G = TypeParam;
  constexpr int r = Traits<G>::kRot;
  for (const auto& [name, xi] : this->cay_points()) {
    SCOPED_TRACE(name);
    const G g = G::cay(xi);
    // cay_inv is ill-conditioned as the angle nears pi: its condition number grows like
    // (4 + |omega|^2)/4.
    const double cond = 1.0 + 0.25 * xi.template head<r>().squaredNorm();
    EXPECT_TRUE(rel_near(G::cay_inv(g), xi, kRoundoff * cond));
    EXPECT_LE(distance(G::cay(G::cay_inv(g)), g), kRoundoff);
    // Closed form against the definition (I - X/2)^-1 (I + X/2) of vehicles §3.1.
    using M = std::remove_cvref_t<decltype(Traits<G>::hat(xi))>;
    const M X = Traits<G>::hat(xi);
    const M I = M::Identity();
    EXPECT_TRUE(rel_near(Traits<G>::mat(g), ((I - 0.5 * X).inverse() * (I + 0.5 * X)).eval(),
                         kRoundoff));
  }
  // Elements with rotation angle below pi, including very close to it (|omega| = 1000).
  for (int i = 0; i < kRandom; ++i) {
    const G g = random_element<G>(this->rng, kPi - 1e-3);
    EXPECT_LE(distance(G::cay(G::cay_inv(g)), g), kRoundoff);
  }
  const G far = G::cay(tangent_with_angle<G>(this->rng, 1000.0, 2.0));
  EXPECT_LE(distance(G::cay(G::cay_inv(far)), far), kRoundoff);
}

TYPED_TEST(LieGroupTest, Ccsk) {
  using G = TypeParam;
  for (const auto& [name, a] : this->ccsk_points()) {
    SCOPED_TRACE(name);
    const G g = G::ccsk(a);
    // The definition: exp(a_0 E_0) exp(a_1 E_1) ... in basis order.
    G prod = G::identity();
    for (int i = 0; i < G::kDim; ++i) {
      Tan<G> e = Tan<G>::Zero();
      e(i) = a(i);
      prod = prod * G::exp(e);
    }
    EXPECT_LE(distance(g, prod), kRoundoff);
    EXPECT_LE(distance(G::ccsk(G::ccsk_inv(g)), g), kRoundoff);
  }
  for (int i = 0; i < kRandom; ++i) {
    const G g = random_element<G>(this->rng, 2.0 * kPi);
    EXPECT_LE(distance(G::ccsk(G::ccsk_inv(g)), g), kRoundoff);
    // Inside the documented domain ccsk_inv is also a left inverse.
    const Tan<G> a = this->ccsk_domain_point();
    EXPECT_TRUE(rel_near(G::ccsk_inv(G::ccsk(a)), a, kRoundoff));
  }
}

TYPED_TEST(LieGroupTest, AdjointConsistency) {
  using G = TypeParam;
  for (int i = 0; i < kRandom; ++i) {
    const G g = random_element<G>(this->rng, 2.0 * kPi);
    const Tan<G> xi = tangent_with_angle<G>(this->rng, 1.5, 2.0);
    EXPECT_LE(distance(g * G::exp(xi) * g.inverse(), G::exp(g.Ad() * xi)), kRoundoff);
    const auto M = Traits<G>::mat(g);
    EXPECT_TRUE(rel_near(g.Ad() * xi, G::vee(M * Traits<G>::hat(xi) * M.inverse()), kRoundoff));
  }
}

TYPED_TEST(LieGroupTest, AdIsDerivativeOfAd) {
  using G = TypeParam;
  const double h = 1e-6;
  for (int i = 0; i < kRandom; ++i) {
    const Tan<G> eta = tangent_with_angle<G>(this->rng, 1.5, 2.0);
    const Jac<G> fd = (G::exp(h * eta).Ad() - G::exp(-h * eta).Ad()) / (2.0 * h);
    EXPECT_TRUE(rel_near(fd, G::ad(eta), kFdTol));
    // ad_eta xi = [eta, xi] in the representation.
    const Tan<G> xi = tangent_with_angle<G>(this->rng, 1.5, 2.0);
    const auto E = Traits<G>::hat(eta), X = Traits<G>::hat(xi);
    EXPECT_TRUE(rel_near(G::ad(eta) * xi, G::vee(E * X - X * E), kRoundoff));
  }
}

// Checks one right-trivialised tangent d and its inverse at xi.
template <class G>
void check_tangent(const std::function<G(const Tan<G>&)>& tau, const Jac<G>& d,
                   const Jac<G>& d_inv, const Tan<G>& xi) {
  EXPECT_TRUE(rel_near(fd_right_tangent<G>(tau, xi), d, kFdTol));
  EXPECT_TRUE(abs_near(d_inv * d, Jac<G>::Identity(), kRoundoff));
  EXPECT_TRUE(abs_near(d * d_inv, Jac<G>::Identity(), kRoundoff));
}

TYPED_TEST(LieGroupTest, Dexp) {
  using G = TypeParam;
  for (const auto& [name, xi] : this->exp_points()) {
    SCOPED_TRACE(name);
    check_tangent<G>(&G::exp, G::dexp(xi), G::dexp_inv(xi), xi);
    EXPECT_TRUE(rel_near(G::dexp(xi), dexp_series<G>(xi), kRoundoff));
    // The tangent.hpp dispatch selects the same maps.
    EXPECT_EQ(dtau<G>(DiffMap::Exp, xi), G::dexp(xi));
    EXPECT_EQ(dtau_inv<G>(DiffMap::Exp, xi), G::dexp_inv(xi));
  }
}

TYPED_TEST(LieGroupTest, Dcay) {
  using G = TypeParam;
  for (const auto& [name, xi] : this->cay_points()) {
    SCOPED_TRACE(name);
    check_tangent<G>(&G::cay, G::dcay(xi), G::dcay_inv(xi), xi);
    EXPECT_EQ(dtau<G>(DiffMap::Cay, xi), G::dcay(xi));
    EXPECT_EQ(dtau_inv<G>(DiffMap::Cay, xi), G::dcay_inv(xi));
  }
}

TYPED_TEST(LieGroupTest, Dccsk) {
  using G = TypeParam;
  for (const auto& [name, a] : this->ccsk_points()) {
    SCOPED_TRACE(name);
    check_tangent<G>(&G::ccsk, G::dccsk(a), G::dccsk_inv(a), a);
  }
}

// vehicles eq. (14): C_cay((omega, v)) as printed. It agrees with the definition
// (checked against finite differences through dcay in the typed suite, and here directly).
TEST(PaperMatrices, Se3CcayMatchesDcayInv) {
  std::mt19937 rng(7);
  for (int i = 0; i < kRandom; ++i) {
    const Vec6 xi = tangent_with_angle<SE3>(rng, 3.0 * (i + 1) / kRandom, 2.0);
    const Vec3 w = xi.head<3>();
    const Mat3 W = SO3::hat(w), V = SO3::hat(xi.tail<3>()), I = Mat3::Identity();
    Mat6 C = Mat6::Zero();
    C.topLeftCorner<3, 3>() = I - 0.5 * W + 0.25 * w * w.transpose();
    C.bottomLeftCorner<3, 3>() = -0.5 * (I - 0.5 * W) * V;
    C.bottomRightCorner<3, 3>() = I - 0.5 * W;
    EXPECT_TRUE(rel_near(SE3::dcay_inv(xi), C, 1e-15));
    const Mat6 fd = fd_right_tangent<SE3>(&SE3::cay, xi);
    EXPECT_TRUE(abs_near(C * fd, Mat6::Identity(), kFdTol));
  }
}

// vehicles eq. (22): C_cay(v) = I - ad_v/2 + (1/4) [v^1 v, 0_{3x2}].
TEST(PaperMatrices, Se2CcayMatchesDcayInv) {
  std::mt19937 rng(8);
  for (int i = 0; i < kRandom; ++i) {
    const Vec3 xi = tangent_with_angle<SE2>(rng, 3.0 * (i + 1) / kRandom, 2.0);
    Mat3 C = Mat3::Identity() - 0.5 * SE2::ad(xi);
    C.col(0) += 0.25 * xi(0) * xi;
    EXPECT_TRUE(rel_near(SE2::dcay_inv(xi), C, 1e-15));
    const Mat3 fd = fd_right_tangent<SE2>(&SE2::cay, xi);
    EXPECT_TRUE(abs_near(C * fd, Mat3::Identity(), kFdTol));
  }
}

// The printed translation part of the SE(3) Cayley map, B_cay(omega) v with
// B_cay = 2/(4 + |omega|^2)(2I + omega^), is not the translation (I - omega^/2)^-1 v of
// the definition: it misses omega (omega . v)/(4 + |omega|^2) (printed B_cay is SO3::dcay).
// The library follows the definition; this test pins the discrepancy down.
TEST(PaperMatrices, Se3PrintedBcayDiffersFromDefinition) {
  std::mt19937 rng(9);
  for (int i = 0; i < kRandom; ++i) {
    const Vec6 xi = tangent_with_angle<SE3>(rng, 2.0, 2.0);
    const Vec3 w = xi.head<3>(), v = xi.tail<3>();
    const double k = 4.0 + w.squaredNorm();
    const Vec3 printed = (2.0 / k) * (2.0 * Mat3::Identity() + SO3::hat(w)) * v;
    EXPECT_TRUE(rel_near(printed, SO3::dcay(w) * v, 1e-15));
    EXPECT_TRUE(rel_near(SE3::cay(xi).x, (printed + w * w.dot(v) / k).eval(), 1e-14));
  }
}

}  // namespace
}  // namespace marsden::test
