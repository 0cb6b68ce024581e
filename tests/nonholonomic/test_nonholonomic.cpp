// Checks of the nonholonomic integrators in full coordinates (nonholonomic paper §4,
// docs/papers.md "Simulating nonholonomic dynamics"): exact Jacobians against central
// differences, constraints, energy, reversibility, convergence order against an RK4
// reference, and the physics of the sleigh and the snakeboard.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include <Eigen/Cholesky>

#include "marsden/solve/rk.hpp"
#include "marsden/error.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "marsden/vehicle/rdp_models.hpp"

namespace marsden::nonholonomic {
namespace {

using vehicle::car_continuous_rhs;
using vehicle::CarContinuousState;

// Every term active: configuration-dependent M, a potential, nonlinear constraints and a
// configuration-dependent control direction, so every Jacobian term is exercised.
// With prescribe_last, q[3] is prescribed: a coordinate that a constraint involves and
// (through the potential) couples to q[0], the general case of the row replacement.
class TestModel final : public NonholonomicModel {
 public:
  explicit TestModel(bool prescribe_last = false)
      : NonholonomicModel(4, 2, 1), prescribe_last_(prescribe_last) {
    M0_.setZero(4, 4);
    M0_.diagonal() << 2.0, 3.0, 1.5, 2.5;
    M0_(0, 1) = M0_(1, 0) = 0.3;
    C_.setZero(4, 4);
    C_.diagonal() << 1.0, 0.5, 0.3, 0.4;
    C_(0, 1) = C_(1, 0) = 0.2;
    C_(1, 2) = C_(2, 1) = 0.1;
  }
  void mass(const NhVec& q, NhMat& M) const override { M = M0_ + s(q) * C_; }
  void mass_derivative(const NhVec& q, int i, NhMat& dM) const override {
    const double c = std::cos(q[0] + 0.5 * q[1]);
    dM = (i == 0 ? 0.3 * c : i == 1 ? 0.15 * c : 0.0) * C_;
  }
  void mass_second_derivative(const NhVec& q, int i, int j, NhMat& ddM) const override {
    const double sn = -std::sin(q[0] + 0.5 * q[1]);
    const double w[2] = {1.0, 0.5};
    ddM = (i < 2 && j < 2 ? 0.3 * w[i] * w[j] * sn : 0.0) * C_;
  }
  double potential(const NhVec& q) const override {
    double V = 0.1 * q[0] * q[3];
    for (int i = 0; i < 4; ++i) V += k_[i] * (1.0 - std::cos(q[i]));
    return V;
  }
  void potential_gradient(const NhVec& q, NhVec& g) const override {
    g.resize(4);
    for (int i = 0; i < 4; ++i) g[i] = k_[i] * std::sin(q[i]);
    g[0] += 0.1 * q[3];
    g[3] += 0.1 * q[0];
  }
  void potential_hessian(const NhVec& q, NhMat& H) const override {
    H.setZero(4, 4);
    for (int i = 0; i < 4; ++i) H(i, i) = k_[i] * std::cos(q[i]);
    H(0, 3) = H(3, 0) = 0.1;
  }
  void constraint(const NhVec& q, NhMat& mu) const override {
    mu.resize(2, 4);
    mu << 1.0, std::cos(q[0]), std::sin(q[1]), 0.5, 0.0, std::sin(q[2]), 1.0, std::cos(q[3]);
  }
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override {
    dmu.setZero(2, 4);
    if (i == 0) dmu(0, 1) = -std::sin(q[0]);
    if (i == 1) dmu(0, 2) = std::cos(q[1]);
    if (i == 2) dmu(1, 1) = std::cos(q[2]);
    if (i == 3) dmu(1, 3) = -std::sin(q[3]);
  }
  void control_directions(const NhVec& q, NhMat& B) const override {
    B.resize(4, 1);
    B << std::cos(q[1]), 0.0, 1.0, 0.5;
  }
  bool prescribed(int i) const override { return prescribe_last_ && i == 3; }

 private:
  bool prescribe_last_;
  static double s(const NhVec& q) { return 0.3 * std::sin(q[0] + 0.5 * q[1]); }
  NhMat M0_, C_;
  double k_[4] = {1.0, 0.5, 2.0, 0.8};
};

struct Named {
  const char* name;
  std::function<std::shared_ptr<const NonholonomicModel>()> make;
};
const Named kModels[] = {
    {"test", [] { return std::make_shared<const TestModel>(); }},
    {"sleigh", [] { return std::make_shared<const ChaplyginSleigh>(1.0, 2.0, 0.5); }},
    {"snakeboard", [] { return std::make_shared<const Snakeboard>(0.3, 0.1, 2.0, 0.6); }},
};

NhVec random_vec(std::mt19937& rng, int n, double scale) {
  std::normal_distribution<double> d(0.0, scale);
  NhVec v(n);
  for (int i = 0; i < n; ++i) v[i] = d(rng);
  return v;
}

// A velocity in the constraint distribution: qdot = P(q) w (P = M-orthogonal projector).
NhVec admissible_velocity(const NonholonomicModel& model, const NhVec& q, const NhVec& w) {
  NhMat P_star, Q_star;
  nh_projectors(model, q, P_star, Q_star);
  return P_star.transpose() * w;  // P = (P*)^T
}

NhVec constraint_of(const NonholonomicModel& model, const NhVec& q, const NhVec& qdot) {
  NhMat mu;
  model.constraint(q, mu);
  return mu * qdot;
}

NhVec velocity_of(const NonholonomicModel& model, const NhVec& q, const NhVec& p) {
  NhMat M;
  model.mass(q, M);
  return M.llt().solve(p);
}

// Central differences of a vector function of x, column by column.
template <class F>
Eigen::MatrixXd central_difference(F&& f, const Eigen::VectorXd& x, double eps) {
  const Eigen::VectorXd f0 = f(x);
  Eigen::MatrixXd J(f0.size(), x.size());
  for (int j = 0; j < x.size(); ++j) {
    Eigen::VectorXd xp = x, xm = x;
    xp[j] += eps;
    xm[j] -= eps;
    J.col(j) = (f(xp) - f(xm)) / (2.0 * eps);
  }
  return J;
}

void expect_close(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, double tol,
                  const char* what, const char* model) {
  ASSERT_EQ(A.rows(), B.rows());
  ASSERT_EQ(A.cols(), B.cols());
  const double err = (A - B).lpNorm<Eigen::Infinity>();
  EXPECT_LE(err, tol * (1.0 + B.lpNorm<Eigen::Infinity>())) << what << " on " << model;
}

class PerModel : public ::testing::TestWithParam<int> {
 protected:
  const Named& named() const { return kModels[GetParam()]; }
};

// Every exact Jacobian against central differences; q_prescribed (random, size n) is passed to
// the residuals when the model prescribes coordinates.
void check_residual_jacobians(const Named& named_model, bool with_prescription) {
  const auto model = named_model.make();
  const auto named = [&] { return named_model; };
  const int n = model->dof(), m = model->num_constraints(), c = model->num_controls();
  std::mt19937 rng(7);
  const double dt = 0.1;
  for (int trial = 0; trial < 5; ++trial) {
    const NhVec q0 = random_vec(rng, n, 1.0);
    const NhVec q1 = q0 + random_vec(rng, n, 0.1);
    const NhVec q2 = q1 + random_vec(rng, n, 0.1);
    const NhVec p = random_vec(rng, n, 1.0);
    const NhVec u = random_vec(rng, c, 1.0);
    const NhVec q_prescribed_v = q2 + random_vec(rng, n, 0.05);
    const NhVec* q_prescribed = with_prescription ? &q_prescribed_v : nullptr;
    // Discrete Lagrangian derivatives, with respect to q1.
    NhVec D1, D2;
    NhMat J1, J2;
    midpoint_ld_derivatives(*model, dt, q0, q1, D1, D2, &J1, &J2);
    auto d1 = [&](const Eigen::VectorXd& x) {
      NhVec a, b;
      midpoint_ld_derivatives(*model, dt, q0, NhVec(x), a, b, nullptr, nullptr);
      return Eigen::VectorXd(a);
    };
    auto d2 = [&](const Eigen::VectorXd& x) {
      NhVec a, b;
      midpoint_ld_derivatives(*model, dt, q0, NhVec(x), a, b, nullptr, nullptr);
      return Eigen::VectorXd(b);
    };
    expect_close(J1, central_difference(d1, q1, 1e-6), 1e-7, "J_D1_q1", named().name);
    expect_close(J2, central_difference(d2, q1, 1e-6), 1e-7, "J_D2_q1", named().name);
    // D1, D2 are the gradients of L_d = dt L(q_m, v): check them too.
    auto ld = [&](const Eigen::VectorXd& x) {
      const NhVec a = x.head(n), b = x.tail(n);
      const NhVec qm = 0.5 * (a + b), v = (b - a) / dt;
      Eigen::VectorXd out(1);
      out[0] = dt * (nh_energy(*model, qm, v) - 2.0 * model->potential(qm));
      return out;
    };
    Eigen::VectorXd q01(2 * n);
    q01 << q0, q1;
    Eigen::VectorXd D12(2 * n);
    D12 << D1, D2;
    if (model->has_force()) {  // D1, D2 carry f-_d = f+_d = dt/2 Q(q_m, v) (integrators.hpp)
      NhVec Q;
      model->force(NhVec(0.5 * (q0 + q1)), NhVec((q1 - q0) / dt), Q, nullptr, nullptr);
      D12.head(n) -= 0.5 * dt * Q;
      D12.tail(n) -= 0.5 * dt * Q;
    }
    expect_close(D12.transpose(), central_difference(ld, q01, 1e-6), 1e-7, "D L_d",
                 named().name);
    // GNI.
    NhVec r;
    NhMat Jg;
    gni_residual(*model, dt, q1, p, u, q2, r, &Jg, q_prescribed);
    auto gni = [&](const Eigen::VectorXd& x) {
      NhVec rr;
      gni_residual(*model, dt, q1, p, u, NhVec(x), rr, nullptr, q_prescribed);
      return Eigen::VectorXd(rr);
    };
    expect_close(Jg, central_difference(gni, q2, 1e-6), 1e-7, "GNI", named().name);
    // SHAKE and RATTLE, x = (q_k+1, lambda_k).
    NhUnknown x(n + m), rx;
    x << q2, random_vec(rng, m, 1.0);
    NhJacobian Jx;
    shake_residual(*model, dt, q0, q1, u, x, rx, &Jx, q_prescribed);
    auto shake = [&](const Eigen::VectorXd& y) {
      NhUnknown rr;
      shake_residual(*model, dt, q0, q1, u, NhUnknown(y), rr, nullptr, q_prescribed);
      return Eigen::VectorXd(rr);
    };
    expect_close(Jx, central_difference(shake, x, 1e-6), 1e-7, "SHAKE", named().name);
    rattle_residual(*model, dt, q1, p, u, x, rx, &Jx, q_prescribed);
    auto rattle = [&](const Eigen::VectorXd& y) {
      NhUnknown rr;
      rattle_residual(*model, dt, q1, p, u, NhUnknown(y), rr, nullptr, q_prescribed);
      return Eigen::VectorXd(rr);
    };
    expect_close(Jx, central_difference(rattle, x, 1e-6), 1e-7, "RATTLE", named().name);
    // Projected RATTLE, unknown q_k+1 (p_k projected to the constraint, as in a run).
    NhVec r_pr;
    NhMat J_pr;
    const NhVec p_adm = admissible_velocity(*model, q1, p);
    projected_rattle_residual(*model, dt, q1, p_adm, u, q2, r_pr, &J_pr, q_prescribed);
    auto projected = [&](const Eigen::VectorXd& y) {
      NhVec rr;
      projected_rattle_residual(*model, dt, q1, p_adm, u, NhVec(y), rr, nullptr, q_prescribed);
      return Eigen::VectorXd(rr);
    };
    expect_close(J_pr, central_difference(projected, q2, 1e-6), 1e-7, "projected RATTLE",
                 named().name);
    if (q_prescribed) {
      // The prescribed rows are exactly q_k+1[i] - q_prescribed[i].
      for (int i = 0; i < n; ++i) {
        if (!model->prescribed(i)) continue;
        EXPECT_NEAR(r[i], q2[i] - (*q_prescribed)[i], 1e-14) << named().name;
        EXPECT_NEAR(rx[i], q2[i] - (*q_prescribed)[i], 1e-14) << named().name;
        EXPECT_NEAR(r_pr[i], q2[i] - (*q_prescribed)[i], 1e-14) << named().name;
      }
    }
    // Continuous acceleration: the constraint holds to second order, d/dt (mu qdot) = 0.
    const NhVec qd = admissible_velocity(*model, q0, random_vec(rng, n, 1.0));
    NhVec qdd;
    nh_acceleration(*model, q0, qd, u, qdd);
    auto cdot = [&](const Eigen::VectorXd& t) {
      return Eigen::VectorXd(constraint_of(*model, NhVec(q0 + t[0] * qd),
                                           NhVec(qd + t[0] * qdd)));
    };
    EXPECT_LE(central_difference(cdot, Eigen::VectorXd::Zero(1), 1e-5).lpNorm<Eigen::Infinity>(),
              1e-8)
        << named().name;
  }
}

TEST_P(PerModel, ResidualJacobiansMatchCentralDifferences) {
  check_residual_jacobians(named(), false);
}

// Prescribed coordinates: the general TestModel with q[3] prescribed, and the car.
const Named kPrescribedModels[] = {
    {"test_prescribed", [] { return std::make_shared<const TestModel>(true); }},
    {"car", [] { return std::make_shared<const NhCar>(CarParams{}, 0.7); }},
};

class PerPrescribedModel : public ::testing::TestWithParam<int> {};

TEST_P(PerPrescribedModel, ResidualJacobiansMatchCentralDifferences) {
  check_residual_jacobians(kPrescribedModels[GetParam()], true);
}

TEST_P(PerPrescribedModel, StepsRequireThePrescription) {
  const auto model = kPrescribedModels[GetParam()].make();
  const int n = model->dof();
  EXPECT_TRUE(model->has_prescribed());
  NhVec q = NhVec::Constant(n, 0.1), p = NhVec::Zero(n), u = NhVec::Zero(model->num_controls());
  NhVec q1 = q, p1, lambda, wrong_size = NhVec::Zero(n - 1);
  EXPECT_THROW(gni_step(*model, 0.1, q, p, u, q1, p1), InputError);
  EXPECT_THROW(rattle_step(*model, 0.1, q, p, u, q1, p1), InputError);
  EXPECT_THROW(shake_step(*model, 0.1, q, q, u, q1, lambda), InputError);
  EXPECT_THROW(gni_step(*model, 0.1, q, p, u, q1, p1, nullptr, {}, &wrong_size), InputError);
  NhVec r;
  EXPECT_THROW(gni_residual(*model, 0.1, q, p, u, q1, r, nullptr), InputError);
  // With it, the prescribed entries are hit exactly.
  NhVec q_prescribed = q;
  for (int i = 0; i < n; ++i)
    if (model->prescribed(i)) q_prescribed[i] += 0.01;
  q1 = q;
  ASSERT_TRUE(rattle_step(*model, 0.1, q, p, u, q1, p1, {}, &q_prescribed).converged);
  for (int i = 0; i < n; ++i)
    if (model->prescribed(i)) {
      EXPECT_NEAR(q1[i], q_prescribed[i], 1e-15);
    }
  q1 = q;
  ASSERT_TRUE(gni_step(*model, 0.1, q, p, u, q1, p1, nullptr, {}, &q_prescribed).converged);
  for (int i = 0; i < n; ++i)
    if (model->prescribed(i)) {
      EXPECT_NEAR(q1[i], q_prescribed[i], 1e-15);
    }
}

INSTANTIATE_TEST_SUITE_P(Models, PerPrescribedModel, ::testing::Values(0, 1),
                         [](const auto& info) {
                           return std::string(kPrescribedModels[info.param].name);
                         });

// Initial state: a random configuration and admissible velocity of moderate size.
void initial_state(const NonholonomicModel& model, std::mt19937& rng, NhVec& q, NhVec& qd) {
  q = random_vec(rng, model.dof(), 0.5);
  qd = admissible_velocity(model, q, random_vec(rng, model.dof(), 1.0));
}


// Constant small controls where the model has them (exercises the control terms).
NhVec some_controls(const NonholonomicModel& model) {
  return NhVec::Constant(model.num_controls(), 0.2);
}

TEST_P(PerModel, RattleKeepsTheConstraintsAtEveryStep) {
  const auto model = named().make();
  std::mt19937 rng(11);
  NhVec q, qd;
  initial_state(*model, rng, q, qd);
  NhMat M;
  model->mass(q, M);
  NhVec p = M * qd, q1, p1;
  const NhVec u = some_controls(*model);
  const double dt = 0.05;
  double worst_end = 0.0, worst_mid = 0.0;
  // The snakeboard's constraints lose rank at phi = +-pi/2, which the driven steering
  // reaches after about 40 s here: stay short of it.
  const int steps = std::string(named().name) == "snakeboard" ? 500 : 2000;
  for (int k = 0; k < steps; ++k) {
    q1 = q + dt * velocity_of(*model, q, p);
    const NewtonStatus st = rattle_step(*model, dt, q, p, u, q1, p1);
    ASSERT_TRUE(st.converged) << "step " << k << " residual " << st.residual_norm;
    worst_end = std::max(worst_end, constraint_of(*model, q1, velocity_of(*model, q1, p1))
                                        .lpNorm<Eigen::Infinity>());
    worst_mid = std::max(worst_mid, constraint_of(*model, NhVec(0.5 * (q + q1)),
                                                  NhVec((q1 - q) / dt))
                                        .lpNorm<Eigen::Infinity>());
    q = q1;
    p = p1;
  }
  std::printf("[%s] RATTLE max |mu(q_k) qdot_k| = %.2e, max |mu(q_k+1/2) v_k+1/2| = %.2e\n",
              named().name, worst_end, worst_mid);
  EXPECT_LE(worst_end, 1e-12);
  EXPECT_LE(worst_mid, 1e-10);
}

// Projected RATTLE: p_k+1 = P*(q_k+1)(...) satisfies the constraints to round-off, and so
// does p-_k = -D1 L_d(q_k, q_k+1) = P*(q_k)(p_k + dt/2 B u) at q_k (midpoint velocities are
// not constrained by this scheme).
TEST_P(PerModel, ProjectedRattleKeepsTheConstraintsAtEveryStep) {
  const auto model = named().make();
  std::mt19937 rng(11);
  NhVec q, qd;
  initial_state(*model, rng, q, qd);
  NhMat M;
  model->mass(q, M);
  NhVec p = M * qd, q1, p1;
  const NhVec u = some_controls(*model);
  const double dt = 0.05;
  double worst_end = 0.0, worst_minus = 0.0;
  const int steps = std::string(named().name) == "snakeboard" ? 500 : 2000;
  for (int k = 0; k < steps; ++k) {
    q1 = q + dt * velocity_of(*model, q, p);
    const NewtonStatus st = projected_rattle_step(*model, dt, q, p, u, q1, p1);
    ASSERT_TRUE(st.converged) << "step " << k << " residual " << st.residual_norm;
    worst_end = std::max(worst_end, constraint_of(*model, q1, velocity_of(*model, q1, p1))
                                        .lpNorm<Eigen::Infinity>());
    NhVec D1, D2;
    midpoint_ld_derivatives(*model, dt, q, q1, D1, D2, nullptr, nullptr);
    worst_minus = std::max(worst_minus, constraint_of(*model, q, velocity_of(*model, q,
                                                                                NhVec(-D1)))
                                            .lpNorm<Eigen::Infinity>());
    q = q1;
    p = p1;
  }
  std::printf("[%s] projected RATTLE max |mu(q_k) M^-1 p_k| = %.2e, max |mu(q_k) M^-1 p-_k| "
              "= %.2e\n", named().name, worst_end, worst_minus);
  EXPECT_LE(worst_end, 1e-12);
  EXPECT_LE(worst_minus, 1e-9);
}

// GNI on the state (q_k, p+_k), started from (q_0, qdot_0) with p+_0 = M qdot_0 and half
// the control in the first step (see gni_step).
struct GniRun {
  NhVec q, p_plus;
  bool first = true;
};

GniRun gni_start(const NonholonomicModel& model, const NhVec& q0, const NhVec& qd0) {
  NhMat M;
  model.mass(q0, M);
  return {q0, M * qd0, true};
}

NewtonStatus gni_advance(const NonholonomicModel& model, double dt, const NhVec& u, GniRun& s,
                         NhVec* p_minus = nullptr) {
  NhVec q1 = s.q + dt * velocity_of(model, s.q, s.p_plus), p1;
  const NewtonStatus st =
      gni_step(model, dt, s.q, s.p_plus, s.first ? NhVec(0.5 * u) : u, q1, p1, p_minus);
  s.q = q1;
  s.p_plus = p1;
  s.first = false;
  return st;
}

TEST_P(PerModel, GniSatisfiesTheAveragedConstraint) {
  const auto model = named().make();
  std::mt19937 rng(13);
  NhVec q, qd;
  initial_state(*model, rng, q, qd);
  GniRun s = gni_start(*model, q, qd);
  const NhVec u = some_controls(*model);
  const double dt = 0.05;
  double worst = 0.0;
  for (int k = 0; k < 2000; ++k) {
    const NhVec q_k = s.q, p_plus = s.p_plus;
    NhVec p_minus;
    const NewtonStatus st = gni_advance(*model, dt, u, s, &p_minus);
    ASSERT_TRUE(st.converged) << "step " << k << " residual " << st.residual_norm;
    // Q*(p+ + p-) = 0  <=>  mu(q_k) M(q_k)^-1 (p+_k + p-_k) = 0 (paper eq. (5b)).
    worst = std::max(worst, constraint_of(*model, q_k,
                                          velocity_of(*model, q_k, NhVec(p_plus + p_minus)))
                                .lpNorm<Eigen::Infinity>());
  }
  std::printf("[%s] GNI max |mu M^-1 (p+ + p-)| = %.2e\n", named().name, worst);
  EXPECT_LE(worst, 1e-11);
}

TEST_P(PerModel, GniIsReversible) {
  const auto model = named().make();
  std::mt19937 rng(17);
  NhVec q, qd;
  initial_state(*model, rng, q, qd);
  GniRun s = gni_start(*model, q, qd);
  const NhVec none;
  const double dt = 0.05;
  NhVec p_minus_0;
  ASSERT_TRUE(gni_advance(*model, dt, none, s, &p_minus_0).converged);
  for (int k = 1; k < 500; ++k) ASSERT_TRUE(gni_advance(*model, dt, none, s).converged);
  // Reflect: start back from (q_N, -p-_N), p-_N = (P* - Q*) p+_N the jump at q_N.
  NhMat P_star, Q_star;
  nh_projectors(*model, s.q, P_star, Q_star);
  GniRun back{s.q, -(P_star - Q_star) * s.p_plus, false};
  for (int k = 0; k < 500; ++k) ASSERT_TRUE(gni_advance(*model, dt, none, back).converged);
  const double err_q = (back.q - q).lpNorm<Eigen::Infinity>();
  const double err_p = (back.p_plus + p_minus_0).lpNorm<Eigen::Infinity>();
  std::printf("[%s] GNI reversibility after 500 + 500 steps: |dq| = %.2e, |dp| = %.2e\n",
              named().name, err_q, err_p);
  EXPECT_LE(err_q, 1e-10);
  EXPECT_LE(err_p, 1e-10);
}

// RATTLE's positions equal SHAKE's when SHAKE starts from RATTLE's first step (adding
// RATTLE (c) at k-1 and (a) at k gives the SHAKE equation): two formulations, one scheme.
TEST_P(PerModel, RattleAndShakeGiveTheSamePositions) {
  const auto model = named().make();
  std::mt19937 rng(19);
  NhVec q, qd;
  initial_state(*model, rng, q, qd);
  NhMat M;
  model->mass(q, M);
  const NhVec u = some_controls(*model);
  const double dt = 0.05;
  NhVec p = M * qd, q1 = q + dt * qd, p1;
  ASSERT_TRUE(rattle_step(*model, dt, q, p, u, q1, p1).converged);
  NhVec s_prev = q, s_cur = q1, lambda;
  q = q1;
  p = p1;
  double worst = 0.0;
  for (int k = 0; k < 500; ++k) {
    q1 = 2.0 * q - s_prev;
    ASSERT_TRUE(rattle_step(*model, dt, q, p, u, q1, p1).converged);
    NhVec s_next = 2.0 * s_cur - s_prev;
    const NewtonStatus st = shake_step(*model, dt, s_prev, s_cur, u, s_next, lambda);
    ASSERT_TRUE(st.converged) << "SHAKE step " << k << " residual " << st.residual_norm;
    worst = std::max(worst, (s_next - q1).lpNorm<Eigen::Infinity>());
    q = q1;
    p = p1;
    s_prev = s_cur;
    s_cur = s_next;
  }
  std::printf("[%s] max |q_SHAKE - q_RATTLE| over 500 steps: %.2e\n", named().name, worst);
  EXPECT_LE(worst, 1e-9);
}

// Positions at time T from (q0, qdot0) with step dt: 0 GNI, 1 SHAKE, 2 RATTLE, 3 RK4,
// 4 projected RATTLE, 5 RK2.
NhVec run_to(const NonholonomicModel& model, int method, double T, int steps, const NhVec& q0,
             const NhVec& qd0, const NhVec& u) {
  const double dt = T / steps;
  NhMat M;
  model.mass(q0, M);
  if (method == 0) {
    GniRun s = gni_start(model, q0, qd0);
    for (int k = 0; k < steps; ++k) EXPECT_TRUE(gni_advance(model, dt, u, s).converged);
    return s.q;
  }
  if (method == 3 || method == 5) {
    NhVec q = q0, qd = qd0;
    for (int k = 0; k < steps; ++k)
      (method == 3 ? nh_rk4_step : nh_rk2_step)(model, dt, u, q, qd);
    return q;
  }
  if (method == 4) {
    NhVec q = q0, p = M * qd0, q1, p1;
    for (int k = 0; k < steps; ++k) {
      q1 = q + dt * velocity_of(model, q, p);
      EXPECT_TRUE(projected_rattle_step(model, dt, q, p, u, q1, p1).converged);
      q = q1;
      p = p1;
    }
    return q;
  }
  NhVec q = q0, p = M * qd0, q1 = q0 + dt * qd0, p1;
  EXPECT_TRUE(rattle_step(model, dt, q, p, u, q1, p1).converged);
  if (method == 2) {
    for (int k = 1; k < steps; ++k) {
      q = q1;
      p = p1;
      q1 = q + dt * velocity_of(model, q, p);
      EXPECT_TRUE(rattle_step(model, dt, q, p, u, q1, p1).converged);
    }
    return q1;
  }
  NhVec prev = q0, cur = q1, next, lambda;
  for (int k = 1; k < steps; ++k) {
    next = 2.0 * cur - prev;
    EXPECT_TRUE(shake_step(model, dt, prev, cur, u, next, lambda).converged);
    prev = cur;
    cur = next;
  }
  return cur;
}

TEST_P(PerModel, ObservedOrderAgainstRk4Reference) {
  const auto model = named().make();
  std::mt19937 rng(23);
  NhVec q0, qd0;
  initial_state(*model, rng, q0, qd0);
  const NhVec u = some_controls(*model);
  const double T = 1.0;
  const NhVec ref = run_to(*model, 3, T, 20000, q0, qd0, u);
  // Self-check of the reference: RK4 with half as many steps agrees to ~1e-13.
  EXPECT_LE((run_to(*model, 3, T, 10000, q0, qd0, u) - ref).lpNorm<Eigen::Infinity>(), 1e-11);
  const char* names[] = {"GNI", "SHAKE", "RATTLE", "RK4", "", "RK2"};
  for (int method : {0, 1, 2, 5}) {
    double e[3];
    const int steps[3] = {20, 40, 80};
    for (int i = 0; i < 3; ++i)
      e[i] = (run_to(*model, method, T, steps[i], q0, qd0, u) - ref).lpNorm<Eigen::Infinity>();
    const double order = std::log2(e[1] / e[2]);
    std::printf("[%s] %s errors %.3e %.3e %.3e, observed order %.2f %.2f\n", named().name,
                names[method], e[0], e[1], e[2], std::log2(e[0] / e[1]), order);
    EXPECT_NEAR(order, 2.0, 0.25) << names[method] << " on " << named().name;
  }
}

// Projected RATTLE against the same reference. Observed order 1, not 2 (measured 0.99-1.00
// on all three models): the first half-step carries no constraint force (P*(q_k) p_k =
// p_k), so q_k+1 - q_k misses the O(dt^2) constraint-force term of the exact flow, and the
// projection in (b) supplies that force only to first order; the local error is O(dt^2).
// This is a property of our reading of the projected form (integrators.hpp), not a bug
// in the Newton solve (its Jacobian is checked above, the constraints hold to round-off).
TEST_P(PerModel, ProjectedRattleObservedOrderAgainstRk4Reference) {
  const auto model = named().make();
  std::mt19937 rng(23);
  NhVec q0, qd0;
  initial_state(*model, rng, q0, qd0);
  const NhVec u = some_controls(*model);
  const double T = 1.0;
  const NhVec ref = run_to(*model, 3, T, 20000, q0, qd0, u);
  double e[4];
  const int steps[4] = {20, 40, 80, 160};
  for (int i = 0; i < 4; ++i)
    e[i] = (run_to(*model, 4, T, steps[i], q0, qd0, u) - ref).lpNorm<Eigen::Infinity>();
  const double order = std::log2(e[2] / e[3]);
  std::printf("[%s] projected RATTLE errors %.3e %.3e %.3e %.3e, observed order %.2f %.2f "
              "%.2f\n", named().name, e[0], e[1], e[2], e[3], std::log2(e[0] / e[1]),
              std::log2(e[1] / e[2]), order);
  EXPECT_NEAR(order, 1.0, 0.1) << named().name;  // first order: see above
}

INSTANTIATE_TEST_SUITE_P(Models, PerModel, ::testing::Values(0, 1, 2),
                         [](const auto& info) { return std::string(kModels[info.param].name); });

// Sleigh ---------------------------------------------------------------------------------

struct Body {
  double omega, v1, v2;
};
Body body_velocity(const NhVec& q, const NhVec& qd) {
  const double c = std::cos(q[0]), s = std::sin(q[0]);
  return {qd[0], c * qd[1] + s * qd[2], -s * qd[1] + c * qd[2]};
}

// Initial state with body velocity (omega, v1, v2 = -a omega) at theta = 0.
void sleigh_start(const ChaplyginSleigh& sl, double omega, double v1, NhVec& q, NhVec& qd) {
  q = NhVec::Zero(3);
  qd.resize(3);
  qd << omega, v1, -sl.a() * omega;
}

TEST(Sleigh, ReferenceAgreesWithTheBodyEquationsOfNotes) {
  // (J + m a^2) omega_dot = m a v1 omega, v1_dot = -a omega^2 (docs/papers.md), at a random state.
  const ChaplyginSleigh sl(1.3, 2.0, 0.4);
  NhVec q(3), qd(3), qdd;
  q << 0.7, 0.2, -0.1;
  const double om = 0.9, v1 = -0.6, v2 = -sl.a() * om;
  qd << om, std::cos(q[0]) * v1 - std::sin(q[0]) * v2, std::sin(q[0]) * v1 + std::cos(q[0]) * v2;
  nh_acceleration(sl, q, qd, NhVec(), qdd);
  const double J = sl.body_inertia(), m = sl.body_mass(), a = sl.a();
  EXPECT_NEAR(qdd[0], m * a * v1 * om / (J + m * a * a), 1e-14);
  // v1 = c xd + s yd: v1_dot = omega v2 + c xdd + s ydd.
  const double c = std::cos(q[0]), s = std::sin(q[0]);
  EXPECT_NEAR(om * v2 + c * qdd[1] + s * qdd[2], -a * om * om, 1e-14);
}

TEST(Sleigh, GniPreservesEnergyOver1e4Steps) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  NhVec q, qd;
  sleigh_start(sl, 1.0, 0.8, q, qd);
  GniRun s = gni_start(sl, q, qd);
  const double dt = 0.1, E0 = nh_energy(sl, q, qd);
  double worst = 0.0;
  for (int k = 0; k < 10000; ++k) {
    ASSERT_TRUE(gni_advance(sl, dt, NhVec(), s).converged);
    const NhVec v = velocity_of(sl, s.q, s.p_plus);  // p+_k = M v_k-1/2
    worst = std::max(worst, std::abs(nh_energy(sl, s.q, v) - E0) / E0);
  }
  std::printf("GNI sleigh: max relative energy error over 1e4 steps (dt = 0.1): %.2e\n", worst);
  EXPECT_LE(worst, 1e-12);
}

// With constant M and V = 0 the GNI is explicit: M v_k+1/2 = (P* - Q*) M v_k-1/2, i.e.
// v_k+1/2 = (P - Q) v_k-1/2, an M-orthogonal reflection of the constraint-normal part
// (the paper's "elastic impact"); hence the exact energy conservation above.
TEST(Sleigh, GniIsTheExplicitReflectionForConstantMass) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  NhVec q(3), v(3), q1, p1;
  q << 0.4, 1.0, -2.0;
  v << 0.7, -0.3, 0.9;  // not admissible at q: the reflection has work to do
  NhMat M, P_star, Q_star;
  sl.mass(q, M);
  nh_projectors(sl, q, P_star, Q_star);
  const double dt = 0.1;
  q1 = q + dt * v;
  ASSERT_TRUE(gni_step(sl, dt, q, NhVec(M * v), NhVec(), q1, p1).converged);
  const NhVec v_expected = (P_star - Q_star).transpose() * v;  // P - Q = (P* - Q*)^T
  EXPECT_LE(((q1 - q) / dt - v_expected).lpNorm<Eigen::Infinity>(), 1e-13);
}

TEST(Sleigh, RattleEnergyStaysBoundedOver1e5Steps) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  NhVec q, qd;
  sleigh_start(sl, 1.0, 0.8, q, qd);
  NhMat M;
  sl.mass(q, M);
  NhVec p = M * qd, q1, p1;
  const double dt = 0.1, E0 = nh_energy(sl, q, qd);
  double worst = 0.0, late = 0.0;
  for (int k = 0; k < 100000; ++k) {
    q1 = q + dt * velocity_of(sl, q, p);
    ASSERT_TRUE(rattle_step(sl, dt, q, p, NhVec(), q1, p1).converged) << "step " << k;
    q = q1;
    p = p1;
    const double err = std::abs(nh_energy(sl, q, velocity_of(sl, q, p)) - E0) / E0;
    worst = std::max(worst, err);
    if (k >= 90000) late = std::max(late, err);
  }
  std::printf("RATTLE sleigh: max relative energy error over 1e5 steps (dt = 0.1): %.2e "
              "(last 1e4 steps: %.2e)\n", worst, late);
  EXPECT_LE(worst, 1e-2);
}

// The sleigh has constant M and V = 0, so projected RATTLE is v_k+1/2 = v_k (admissible),
// v_k+1 = P(q_k+1) v_k+1/2: an M-orthogonal projection, hence the energy never increases.
// It is bounded (by E0) but not conserved: the loss is O(dt) (first order) and stops once
// the sleigh has settled to straight motion.
TEST(Sleigh, ProjectedRattleEnergyStaysBoundedOver1e4Steps) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  double loss[2], late_change[2];
  const double dts[2] = {0.1, 0.05};
  for (int run = 0; run < 2; ++run) {
    NhVec q, qd;
    sleigh_start(sl, 1.0, 0.8, q, qd);
    NhMat M;
    sl.mass(q, M);
    NhVec p = M * qd, q1, p1;
    const double dt = dts[run], E0 = nh_energy(sl, q, qd);
    double E_prev = E0, worst = 0.0, E_late = 0.0, rise = 0.0;
    for (int k = 0; k < 10000; ++k) {
      q1 = q + dt * velocity_of(sl, q, p);
      ASSERT_TRUE(projected_rattle_step(sl, dt, q, p, NhVec(), q1, p1).converged)
          << "step " << k;
      q = q1;
      p = p1;
      const double E = nh_energy(sl, q, velocity_of(sl, q, p));
      // Non-increasing up to the Newton tolerance (v_k+1/2 = v_k only to that accuracy).
      rise = std::max(rise, (E - E_prev) / E0);
      E_prev = E;
      worst = std::max(worst, std::abs(E - E0) / E0);
      if (k == 9000) E_late = E;
    }
    std::printf("projected RATTLE sleigh (dt = %g): largest one-step relative energy rise "
                "%.1e\n", dt, rise);
    EXPECT_LE(rise, 1e-10);
    loss[run] = worst;
    late_change[run] = std::abs(E_prev - E_late) / E0;
  }
  std::printf("projected RATTLE sleigh, 1e4 steps: max relative energy loss %.3e (dt = 0.1), "
              "%.3e (dt = 0.05), ratio %.2f; change over the last 1e3 steps %.1e, %.1e\n",
              loss[0], loss[1], loss[0] / loss[1], late_change[0], late_change[1]);
  EXPECT_LE(loss[0], 0.1);
  EXPECT_NEAR(loss[0] / loss[1], 2.0, 0.3);  // O(dt) loss
  EXPECT_LE(late_change[0], 1e-10);
  EXPECT_LE(late_change[1], 1e-10);
}

// omega -> 0 and v1 -> -sign(a) sqrt(2E/m): the sleigh ends up moving with the centre of
// mass ahead of the skate (docs/papers.md's equations make v1 = +sqrt(2E/m) unstable for a > 0).
TEST(Sleigh, SettlesToStraightMotion) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  NhVec q0, qd0;
  sleigh_start(sl, 1.0, 0.8, q0, qd0);
  const double E = nh_energy(sl, q0, qd0), v_inf = -std::sqrt(2.0 * E / sl.body_mass());
  const double T = 80.0;
  {
    NhVec q = q0, qd = qd0;
    for (int k = 0; k < 80000; ++k) nh_rk4_step(sl, T / 80000, NhVec(), q, qd);
    const Body b = body_velocity(q, qd);
    std::printf("RK4 sleigh at T = %g: omega = %.2e, v1 - v_inf = %.2e\n", T, b.omega,
                b.v1 - v_inf);
    EXPECT_LE(std::abs(b.omega), 1e-8);
    EXPECT_LE(std::abs(b.v1 - v_inf), 1e-8);
  }
  const double dt = 0.1;
  {
    NhMat M;
    sl.mass(q0, M);
    NhVec q = q0, p = M * qd0, q1, p1;
    for (int k = 0; k < 800; ++k) {
      q1 = q + dt * velocity_of(sl, q, p);
      ASSERT_TRUE(rattle_step(sl, dt, q, p, NhVec(), q1, p1).converged);
      q = q1;
      p = p1;
    }
    const Body b = body_velocity(q, velocity_of(sl, q, p));
    std::printf("RATTLE sleigh at T = %g: omega = %.2e, v1 - v_inf = %.2e\n", T, b.omega,
                b.v1 - v_inf);
    EXPECT_LE(std::abs(b.omega), 1e-6);
    EXPECT_LE(std::abs(b.v1 - v_inf), 1e-2);
  }
}

// GNI does NOT settle: its constraint holds only on the average of consecutive velocities
// (eq. (5b)), which leaves a period-2 mode, omega_k+1/2 ~ -omega_k-1/2, free. The mode is
// seeded at O(dt^2) and, energy being exactly conserved, ends up carrying the energy that
// the physical motion should put into v1. Measured here so that the claim stays true.
TEST(Sleigh, GniDevelopsAPeriodTwoModeInsteadOfSettling) {
  const ChaplyginSleigh sl(1.0, 2.0, 0.5);
  NhVec q0, qd0;
  sleigh_start(sl, 1.0, 0.8, q0, qd0);
  const double E0 = nh_energy(sl, q0, qd0), dt = 0.02;
  // Short times: GNI follows the reference (second order, see ObservedOrder...).
  NhVec q = q0, qd = qd0;
  for (int k = 0; k < 5000; ++k) nh_rk4_step(sl, 5.0 / 5000, NhVec(), q, qd);
  GniRun s = gni_start(sl, q0, qd0);
  for (int k = 0; k < 250; ++k) ASSERT_TRUE(gni_advance(sl, dt, NhVec(), s).converged);
  const double early = (s.q - q).lpNorm<Eigen::Infinity>();
  // Long times: alternation of omega between consecutive steps.
  double omega_prev = 0.0, alternation = 0.0, mean = 0.0, energy = 0.0;
  for (int k = 250; k < 4000; ++k) {
    ASSERT_TRUE(gni_advance(sl, dt, NhVec(), s).converged);
    const NhVec v = velocity_of(sl, s.q, s.p_plus);
    energy = std::max(energy, std::abs(nh_energy(sl, s.q, v) - E0) / E0);
    if (k >= 3990) {
      alternation = std::max(alternation, 0.5 * std::abs(v[0] - omega_prev));
      mean = std::max(mean, 0.5 * std::abs(v[0] + omega_prev));
    }
    omega_prev = v[0];
  }
  std::printf("GNI sleigh dt = %g: |q - q_RK4| at T = 5: %.2e; at T = 80 period-2 amplitude of "
              "omega %.3f, two-step mean %.3f, energy error %.1e\n", dt, early, alternation,
              mean, energy);
  EXPECT_LE(early, 1e-2);
  EXPECT_LE(energy, 1e-10);
  EXPECT_GE(alternation, 0.1);
}

// Snakeboard ------------------------------------------------------------------------------

// Shape locked (psi_dot = phi_dot = 0, no controls): the board turns on a circle of radius
// l / tan(phi) about c = p + J w / theta_dot (w the planar velocity, J the +90 rotation).
TEST(Snakeboard, LockedShapeMovesOnACircle) {
  const Snakeboard sb(0.3, 0.1, 2.0, 0.6);
  const double phi = 0.3, s = 0.7;
  NhVec q0(5), qd0(5);
  q0 << 0.0, phi, 0.0, 0.0, 0.0;
  qd0 << 0.0, 0.0, s * std::sin(2 * phi), -2 * sb.l() * std::cos(phi) * std::cos(phi) * s, 0.0;
  ASSERT_LE(constraint_of(sb, q0, qd0).lpNorm<Eigen::Infinity>(), 1e-15);
  const double R = sb.l() / std::tan(phi);
  const Eigen::Vector2d c0(q0[3] - qd0[4] / qd0[2], q0[4] + qd0[3] / qd0[2]);
  auto radius_error = [&](const NhVec& q) {
    return std::abs((Eigen::Vector2d(q[3], q[4]) - c0).norm() - R);
  };
  const double dt = 0.05;
  const int steps = 2000;
  {
    NhVec q = q0, qd = qd0;
    double worst = 0.0, psi_dot = 0.0;
    for (int k = 0; k < steps * 10; ++k) {
      nh_rk4_step(sb, dt / 10, NhVec(), q, qd);
      worst = std::max(worst, radius_error(q));
      psi_dot = std::max(psi_dot, std::abs(qd[0]) + std::abs(qd[1]));
    }
    std::printf("RK4 snakeboard: radius error %.2e, max |psi_dot| + |phi_dot| %.2e\n", worst,
                psi_dot);
    EXPECT_LE(worst, 1e-9);
    EXPECT_LE(psi_dot, 1e-9);
  }
  {
    // GNI keeps phi exactly and the circle for a while, then its period-2 mode (see the
    // sleigh) takes over: by T = 100 the board turns the other way and psi has run away.
    GniRun g = gni_start(sb, q0, qd0);
    double worst = 0.0, phi_drift = 0.0, psi_drift = 0.0;
    for (int k = 0; k < 100; ++k) {
      ASSERT_TRUE(gni_advance(sb, dt, NhVec(), g).converged);
      worst = std::max(worst, radius_error(g.q));
      phi_drift = std::max(phi_drift, std::abs(g.q[1] - q0[1]));
      psi_drift = std::max(psi_drift, std::abs(g.q[0] - q0[0]));
    }
    std::printf("GNI snakeboard to T = 5: radius error %.2e, phi drift %.1e, psi drift %.2e\n",
                worst, phi_drift, psi_drift);
    EXPECT_LE(worst, 1e-3 * R);
    EXPECT_LE(phi_drift, 1e-12);
    EXPECT_LE(psi_drift, 1e-2);
  }
  {
    // RATTLE: phi exactly locked; psi follows the O(dt^2) wobble of theta_dot (p_psi =
    // I (psi_dot + theta_dot) is conserved), so it is locked to O(dt^2), not exactly.
    NhMat M;
    sb.mass(q0, M);
    NhVec q = q0, p = M * qd0, q1, p1;
    double worst = 0.0, phi_drift = 0.0, psi_drift = 0.0;
    for (int k = 0; k < steps; ++k) {
      q1 = q + dt * velocity_of(sb, q, p);
      ASSERT_TRUE(rattle_step(sb, dt, q, p, NhVec(), q1, p1).converged);
      q = q1;
      p = p1;
      worst = std::max(worst, radius_error(q));
      phi_drift = std::max(phi_drift, std::abs(q[1] - q0[1]));
      psi_drift = std::max(psi_drift, std::abs(q[0] - q0[0]));
    }
    std::printf("RATTLE snakeboard to T = %g: radius error %.2e, phi drift %.1e, psi drift "
                "%.2e (dt = %g)\n", steps * dt, worst, phi_drift, psi_drift, dt);
    EXPECT_LE(worst, 1e-3 * R);
    EXPECT_LE(phi_drift, 1e-12);
    EXPECT_LE(psi_drift, dt * dt);
  }
}

// Snakeboard driven by rotor and steering torques from rest: projected RATTLE converges to
// the continuous controlled solution (RK4 with tiny steps) as dt -> 0.
TEST(Snakeboard, ProjectedRattleConvergesUnderTorques) {
  const Snakeboard sb(0.3, 0.1, 2.0, 0.6);
  NhVec q0(5), qd0(5), u(2);
  q0 << 0.0, 0.2, 0.1, 0.5, -0.3;
  qd0 = admissible_velocity(sb, q0, NhVec::Constant(5, 0.3));
  u << 0.4, -0.15;
  const double T = 2.0;
  const NhVec ref = run_to(sb, 3, T, 40000, q0, qd0, u);
  double e[4];
  const int steps[4] = {40, 80, 160, 320};
  for (int i = 0; i < 4; ++i)
    e[i] = (run_to(sb, 4, T, steps[i], q0, qd0, u) - ref).lpNorm<Eigen::Infinity>();
  std::printf("projected RATTLE snakeboard under torques: errors %.3e %.3e %.3e %.3e, orders "
              "%.2f %.2f %.2f\n", e[0], e[1], e[2], e[3], std::log2(e[0] / e[1]),
              std::log2(e[1] / e[2]), std::log2(e[2] / e[3]));
  for (int i = 1; i < 4; ++i) EXPECT_LT(e[i], 0.6 * e[i - 1]);
  EXPECT_NEAR(std::log2(e[2] / e[3]), 1.0, 0.1);  // first order (see the order test)
}

// Car (Kelly and Murray) in full coordinates q = (psi, sigma, theta, x, y) ------------------
// Compared with docs/papers.md's continuous car (car_continuous_rhs, reduced state (theta, x, y,
// psi, sigma, psi_dot)) integrated by RK4 with tiny steps. The steering sigma(t) is
// prescribed, sigma_dot(t) being the same steering-rate signal in both.

constexpr double kSteer = 0.3;
double steer(double t) { return kSteer * std::sin(t); }
double steer_rate(double t) { return kSteer * std::cos(t); }

NhVec car_q(const CarContinuousState& s) {
  NhVec q(5);
  q << s[3], s[4], s[0], s[1], s[2];
  return q;
}

// Admissible full velocity of the reduced state, with the given steering rate.
NhVec car_qdot(const CarParams& p, const CarContinuousState& s, double sigma_dot) {
  NhVec qd(5);
  qd << s[5], sigma_dot, p.rho / p.l * s[4] * s[5], p.rho * s[5] * std::cos(s[0]),
      p.rho * s[5] * std::sin(s[0]);
  return qd;
}

CarContinuousState car_reference(const CarParams& p, const CarContinuousState& s0, double T,
                                 int steps, double torque,
                                 const std::function<double(double)>& sigma_rate) {
  CarContinuousState s = s0;
  const double dt = T / steps;
  auto rhs = [&](double t, const CarContinuousState& y) {
    return car_continuous_rhs(p, y, torque, sigma_rate(t));
  };
  for (int k = 0; k < steps; ++k) s = rk_step(RungeKutta::Classic4, k * dt, dt, s, rhs);
  return s;
}

// Per-step observer: (q_k, q_k+1, p_k+1), p the method's momentum (RATTLE's p_k+1, GNI's
// p+_k+1, empty for SHAKE).
using CarObserver = std::function<void(const NhVec&, const NhVec&, const NhVec&)>;

// Positions at T from (q0, qdot0): 0 GNI, 1 SHAKE, 2 RATTLE, sigma prescribed by sigma(t).
NhVec car_run(const NhCar& car, int method, double T, int steps, const NhVec& q0,
              const NhVec& qd0, double torque, const std::function<double(double)>& sigma,
              const CarObserver& observe = {}) {
  const double dt = T / steps;
  NhVec u(1);
  u << torque;
  NhMat M;
  car.mass(q0, M);
  auto prescription = [&](const NhVec& q, int k) {
    NhVec q_prescribed = q;
    q_prescribed[1] = sigma((k + 1) * dt);
    return q_prescribed;
  };
  if (method == 0) {
    GniRun g = gni_start(car, q0, qd0);
    for (int k = 0; k < steps; ++k) {
      const NhVec q_prescribed = prescription(g.q, k);
      NhVec q1 = g.q + dt * velocity_of(car, g.q, g.p_plus), p1;
      q1[1] = q_prescribed[1];
      EXPECT_TRUE(gni_step(car, dt, g.q, g.p_plus, k == 0 ? NhVec(0.5 * u) : u, q1, p1, nullptr,
                           {}, &q_prescribed)
                      .converged);
      if (observe) observe(g.q, q1, p1);
      g.q = q1;
      g.p_plus = p1;
    }
    return g.q;
  }
  NhVec q = q0, p = M * qd0, q1, p1;
  NhVec prev, lambda;
  for (int k = 0; k < steps; ++k) {
    const NhVec q_prescribed = prescription(q, k);
    if (method == 2 || k == 0) {  // SHAKE starts from RATTLE's first step
      q1 = q + dt * velocity_of(car, q, p);
      q1[1] = q_prescribed[1];
      EXPECT_TRUE(rattle_step(car, dt, q, p, u, q1, p1, {}, &q_prescribed).converged);
      if (observe) observe(q, q1, method == 2 ? p1 : NhVec());
    } else {
      q1 = 2.0 * q - prev;
      q1[1] = q_prescribed[1];
      EXPECT_TRUE(shake_step(car, dt, prev, q, u, q1, lambda, {}, &q_prescribed).converged);
      if (observe) observe(q, q1, NhVec());
    }
    prev = q;
    q = q1;
    p = p1;
  }
  return q;
}

// Initial reduced state: heading, position, wheel angle, sigma(0) = 0 and wheel rate.
CarContinuousState car_initial() {
  CarContinuousState s0;
  s0 << 0.2, 0.5, -0.3, 0.1, steer(0.0), 1.0;
  return s0;
}

TEST(Car, ConstraintsAnnihilateTheReferenceVelocities) {
  const CarParams p;
  const NhCar car(p, 0.7);
  CarContinuousState s;
  s << 0.4, 1.0, 2.0, 0.3, 0.25, -0.8;
  EXPECT_LE(constraint_of(car, car_q(s), car_qdot(p, s, 0.6)).lpNorm<Eigen::Infinity>(), 1e-15);
  // The energy of an admissible velocity: 1/2 (I + m rho^2 + K rho^2 sigma^2 / l^2) psi_dot^2
  // + 1/2 J_s sigma_dot^2.
  const double k = p.I + p.m * p.rho * p.rho + p.K * p.rho * p.rho * s[4] * s[4] / (p.l * p.l);
  EXPECT_NEAR(nh_energy(car, car_q(s), car_qdot(p, s, 0.6)),
              0.5 * k * s[5] * s[5] + 0.5 * 0.7 * 0.36, 1e-14);
  EXPECT_THROW(NhCar(p, 0.0), InputError);
  CarParams bad = p;
  bad.rho = -1.0;
  EXPECT_THROW(NhCar{bad}, InputError);
}

TEST(Car, AgreesWithTheContinuousReferenceAtSecondOrder) {
  const CarParams p;
  const NhCar car(p, 0.7);
  const CarContinuousState s0 = car_initial();
  const double T = 2.0, torque = 0.2;
  const NhVec q0 = car_q(s0), qd0 = car_qdot(p, s0, steer_rate(0.0));
  const NhVec ref = car_q(car_reference(p, s0, T, 20000, torque, steer_rate));
  EXPECT_LE((car_q(car_reference(p, s0, T, 10000, torque, steer_rate)) - ref)
                .lpNorm<Eigen::Infinity>(),
            1e-12);
  const char* names[] = {"GNI", "SHAKE", "RATTLE"};
  for (int method = 0; method < 3; ++method) {
    double e[4];
    const int steps[4] = {20, 40, 80, 160};
    for (int i = 0; i < 4; ++i)
      e[i] = (car_run(car, method, T, steps[i], q0, qd0, torque, steer) - ref)
                 .lpNorm<Eigen::Infinity>();
    std::printf("[car] %s errors at T = %g (dt = %g ... %g): %.3e %.3e %.3e %.3e, observed "
                "orders %.2f %.2f %.2f\n",
                names[method], T, T / steps[0], T / steps[3], e[0], e[1], e[2], e[3],
                std::log2(e[0] / e[1]), std::log2(e[1] / e[2]), std::log2(e[2] / e[3]));
    EXPECT_NEAR(std::log2(e[2] / e[3]), 2.0, 0.2) << names[method];
    EXPECT_LE(e[3], 1e-3) << names[method];
  }
}

// J_s multiplies only sigma_dot^2, sigma is prescribed and no constraint involves
// sigma_dot: the steering inertia cannot change the motion.
TEST(Car, SteeringInertiaChangesNothing) {
  const CarParams p;
  const CarContinuousState s0 = car_initial();
  const NhVec q0 = car_q(s0), qd0 = car_qdot(p, s0, steer_rate(0.0));
  for (int method = 0; method < 3; ++method) {
    const NhVec a = car_run(NhCar(p, 1.0), method, 5.0, 100, q0, qd0, 0.2, steer);
    for (const double J_s : {1e-3, 0.7, 50.0}) {
      const NhVec b = car_run(NhCar(p, J_s), method, 5.0, 100, q0, qd0, 0.2, steer);
      EXPECT_LE((a - b).lpNorm<Eigen::Infinity>(), 1e-13) << "method " << method << " J_s "
                                                          << J_s;
    }
  }
}

TEST(Car, RattleKeepsTheThreeConstraintsAtEveryStep) {
  const CarParams p;
  const NhCar car(p, 0.7);
  const CarContinuousState s0 = car_initial();
  const double dt = 0.05;
  double worst_end = 0.0, worst_mid = 0.0, worst_sigma = 0.0;
  int k = 0;
  car_run(car, 2, 2000 * dt, 2000, car_q(s0), car_qdot(p, s0, steer_rate(0.0)), 0.2, steer,
          [&](const NhVec& q, const NhVec& q1, const NhVec& p1) {
            ++k;
            worst_end = std::max(worst_end, constraint_of(car, q1, velocity_of(car, q1, p1))
                                                .lpNorm<Eigen::Infinity>());
            worst_mid = std::max(worst_mid, constraint_of(car, NhVec(0.5 * (q + q1)),
                                                          NhVec((q1 - q) / dt))
                                                .lpNorm<Eigen::Infinity>());
            worst_sigma = std::max(worst_sigma, std::abs(q1[1] - steer(k * dt)));
          });
  std::printf("[car] RATTLE over 2000 steps: max |mu(q_k) qdot_k| = %.2e, max |mu(q_k+1/2) "
              "v_k+1/2| = %.2e, max |sigma_k - sigma(t_k)| = %.1e\n",
              worst_end, worst_mid, worst_sigma);
  EXPECT_LE(worst_end, 1e-12);
  EXPECT_LE(worst_mid, 1e-10);
  EXPECT_LE(worst_sigma, 1e-14);
}

// Free rolling (sigma constant, no torque): psi_dot and the energy
// 1/2 (I + m rho^2 + K rho^2 sigma^2 / l^2) psi_dot^2 are constant; the car turns on a circle.
TEST(Car, FreeRollingConservesEnergy) {
  const CarParams p;
  const NhCar car(p, 0.7);
  CarContinuousState s0;
  s0 << 0.2, 0.5, -0.3, 0.1, 0.4, 1.0;
  const NhVec q0 = car_q(s0), qd0 = car_qdot(p, s0, 0.0);
  const double E0 = nh_energy(car, q0, qd0), dt = 0.05;
  const int steps = 20000;
  const auto constant = [&](double) { return s0[4]; };
  const char* names[] = {"GNI", "SHAKE", "RATTLE"};
  const NhVec ref =
      car_q(car_reference(p, s0, steps * dt, 10 * steps, 0.0, [](double) { return 0.0; }));
  for (int method : {0, 2}) {
    double worst = 0.0;
    const NhVec q = car_run(car, method, steps * dt, steps, q0, qd0, 0.0, constant,
                            [&](const NhVec&, const NhVec& q1, const NhVec& p1) {
                              worst = std::max(
                                  worst,
                                  std::abs(nh_energy(car, q1, velocity_of(car, q1, p1)) - E0) /
                                      E0);
                            });
    std::printf("[car] %s free rolling: max relative energy error over %d steps (dt = %g): "
                "%.2e; |q - q_ref| at T = %g: %.2e\n", names[method], steps, dt, worst,
                steps * dt, (q - ref).lpNorm<Eigen::Infinity>());
    EXPECT_LE(worst, 1e-10) << names[method];
    // Only the phase along the circle drifts (measured 1.2e-2 for GNI, 2.1e-3 for RATTLE).
    EXPECT_LE((q - ref).lpNorm<Eigen::Infinity>(), 5e-2) << names[method];
  }
}

// GNI on the car: second order over short times (above), but, as on the sleigh, its
// constraint holds only on averages of consecutive velocities and the constraint-normal
// part of the midpoint velocity flips sign every step. The steering turns the constraint
// distribution, so that part is seeded at O(dt) every step; over long runs it grows and
// takes the rolling energy: measured (dt = 0.05, steered by 0.3 sin(t), no torque), the
// GNI error is 1e-1 at T = 50 and O(100) at T = 200, where GNI's wheel has turned about 18
// rad instead of 200 and its midpoint velocities violate the constraints by 0.43; RATTLE's
// error at T = 200 is 1e-3 with the constraints at 1e-13. Without steering (free rolling,
// FreeRollingConservesEnergy) GNI stays on the circle to 1e-2 at T = 1000: it is the
// time-varying steering that feeds the mode. Measured here so that the claim stays true.
// Prefer RATTLE for long car runs.
TEST(Car, GniLosesTheRollingMotionOnLongSteeredRuns) {
  const CarParams p;
  const NhCar car(p, 0.7);
  const CarContinuousState s0 = car_initial();
  const NhVec q0 = car_q(s0), qd0 = car_qdot(p, s0, steer_rate(0.0));
  const double T = 200.0, dt = 0.05;
  const int steps = 4000;
  const NhVec ref = car_q(car_reference(p, s0, T, 400000, 0.0, steer_rate));
  double violation[3] = {0.0, 0.0, 0.0}, err[3] = {0.0, 0.0, 0.0};
  for (int method : {0, 2}) {
    const NhVec q = car_run(car, method, T, steps, q0, qd0, 0.0, steer,
                            [&](const NhVec& qa, const NhVec& qb, const NhVec&) {
                              violation[method] = std::max(
                                  violation[method],
                                  constraint_of(car, NhVec(0.5 * (qa + qb)), NhVec((qb - qa) / dt))
                                      .lpNorm<Eigen::Infinity>());
                            });
    err[method] = (q - ref).lpNorm<Eigen::Infinity>();
    if (method == 0)
      std::printf("[car] GNI at T = %g (dt = %g): wheel angle %.2f (reference %.2f)\n", T, dt,
                  q[0], ref[0]);
  }
  std::printf("[car] T = %g, dt = %g: GNI error %.2e, max midpoint constraint %.2e; RATTLE "
              "error %.2e, max midpoint constraint %.2e\n",
              T, dt, err[0], violation[0], err[2], violation[2]);
  EXPECT_GE(err[0], 10.0);
  EXPECT_GE(violation[0], 0.1);
  EXPECT_LE(err[2], 2e-3);
  EXPECT_LE(violation[2], 1e-10);
}

TEST(NonholonomicModel, RejectsBadSizesAndParameters) {
  EXPECT_THROW(ChaplyginSleigh(-1.0, 1.0, 0.5), InputError);
  EXPECT_THROW(Snakeboard(1.0, 0.1, 1.0, 0.5), InputError);  // m l^2 < I: M not SPD
}

// Forces Q(q, qdot) ----------------------------------------------------------------------

// TestModel with a generalized force (model.hpp), has_force() true in every kind:
//   Zero: Q = 0;
//   Conservative: V moved into the force, Q = -grad V and V = 0;
//   Damped: Q = -s(q) (1 + 0.3 w) D qdot, w = qdot^T D qdot, s = 1 + 0.5 sin(q_0), D SPD:
//   dissipative (Q . qdot <= 0) and nonlinear in q and qdot, so every force term of the
//   Jacobians is exercised.
enum class ForceKind { Zero, Conservative, Damped };

class ForcedTestModel final : public NonholonomicModel {
 public:
  explicit ForcedTestModel(ForceKind kind) : NonholonomicModel(4, 2, 1), kind_(kind) {
    D_.setZero(4, 4);
    D_.diagonal() << 0.8, 0.5, 0.6, 0.4;
    D_(0, 2) = D_(2, 0) = 0.1;
  }
  void mass(const NhVec& q, NhMat& M) const override { base_.mass(q, M); }
  void mass_derivative(const NhVec& q, int i, NhMat& dM) const override {
    base_.mass_derivative(q, i, dM);
  }
  void mass_second_derivative(const NhVec& q, int i, int j, NhMat& ddM) const override {
    base_.mass_second_derivative(q, i, j, ddM);
  }
  double potential(const NhVec& q) const override {
    return kind_ == ForceKind::Conservative ? 0.0 : base_.potential(q);
  }
  void potential_gradient(const NhVec& q, NhVec& g) const override {
    if (kind_ == ForceKind::Conservative) g.setZero(4); else base_.potential_gradient(q, g);
  }
  void potential_hessian(const NhVec& q, NhMat& H) const override {
    if (kind_ == ForceKind::Conservative) H.setZero(4, 4); else base_.potential_hessian(q, H);
  }
  void constraint(const NhVec& q, NhMat& mu) const override { base_.constraint(q, mu); }
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override {
    base_.constraint_derivative(q, i, dmu);
  }
  void control_directions(const NhVec& q, NhMat& B) const override {
    base_.control_directions(q, B);
  }
  bool has_force() const override { return true; }
  void force(const NhVec& q, const NhVec& qdot, NhVec& Q, NhMat* dQ_dq,
             NhMat* dQ_dqdot) const override {
    if (kind_ == ForceKind::Zero) {
      NonholonomicModel::force(q, qdot, Q, dQ_dq, dQ_dqdot);
      return;
    }
    if (kind_ == ForceKind::Conservative) {
      base_.potential_gradient(q, Q);
      Q = -Q;
      if (dQ_dq) {
        base_.potential_hessian(q, *dQ_dq);
        *dQ_dq = -*dQ_dq;
      }
      if (dQ_dqdot) dQ_dqdot->setZero(4, 4);
      return;
    }
    const NhVec Dv = D_ * qdot;
    const double s = 1.0 + 0.5 * std::sin(q[0]), w = qdot.dot(Dv);
    Q = -s * (1.0 + 0.3 * w) * Dv;
    if (dQ_dq) {
      dQ_dq->setZero(4, 4);
      dQ_dq->col(0) = -0.5 * std::cos(q[0]) * (1.0 + 0.3 * w) * Dv;
    }
    if (dQ_dqdot) *dQ_dqdot = -s * ((1.0 + 0.3 * w) * D_ + 0.6 * Dv * Dv.transpose());
  }

 private:
  TestModel base_;
  ForceKind kind_;
  NhMat D_;
};

TEST(NonholonomicForce, ForceAndResidualJacobiansMatchCentralDifferences) {
  const ForcedTestModel model(ForceKind::Damped);
  std::mt19937 rng(5);
  const NhVec q = random_vec(rng, 4, 1.0), qd = random_vec(rng, 4, 1.0);
  NhVec Q;
  NhMat dQ_dq, dQ_dqdot;
  model.force(q, qd, Q, &dQ_dq, &dQ_dqdot);
  auto of_q = [&](const Eigen::VectorXd& x) {
    NhVec r;
    model.force(NhVec(x), qd, r, nullptr, nullptr);
    return Eigen::VectorXd(r);
  };
  auto of_qdot = [&](const Eigen::VectorXd& x) {
    NhVec r;
    model.force(q, NhVec(x), r, nullptr, nullptr);
    return Eigen::VectorXd(r);
  };
  expect_close(dQ_dq, central_difference(of_q, q, 1e-6), 1e-8, "dQ/dq", "test_damped");
  expect_close(dQ_dqdot, central_difference(of_qdot, qd, 1e-6), 1e-8, "dQ/dqdot", "test_damped");
  for (const ForceKind kind : {ForceKind::Conservative, ForceKind::Damped})
    check_residual_jacobians({kind == ForceKind::Damped ? "test_damped" : "test_conservative",
                              [kind] { return std::make_shared<const ForcedTestModel>(kind); }},
                             false);
}

// Q = 0 adds exact zeros: every method steps the unforced trajectory bit for bit.
TEST(NonholonomicForce, ZeroForceStepsTheUnforcedTrajectoryBitForBit) {
  const TestModel plain;
  const ForcedTestModel zero(ForceKind::Zero);
  std::mt19937 rng(17);
  NhVec q0, qd0;
  initial_state(plain, rng, q0, qd0);
  const NhVec u = some_controls(plain);
  for (int method : {0, 1, 2, 3, 4}) {
    const NhVec a = run_to(plain, method, 0.5, 10, q0, qd0, u);
    const NhVec b = run_to(zero, method, 0.5, 10, q0, qd0, u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]) << "method " << method << ", q" << i;
  }
}

// Q = -grad V(q_m) is how V enters D1 L_d and D2 L_d, so a conservative force written as a
// force is the scheme of the same V written as a potential: the residuals agree bit for bit,
// the trajectories to the Newton tolerance (the Jacobians differ in rounding only).
TEST(NonholonomicForce, ConservativeForceIsThePotentialScheme) {
  const TestModel potential;
  const ForcedTestModel conservative(ForceKind::Conservative);
  std::mt19937 rng(19);
  NhVec q0, qd0;
  initial_state(potential, rng, q0, qd0);
  const NhVec u = some_controls(potential);
  for (int method : {0, 1, 2, 3, 4}) {
    const NhVec a = run_to(potential, method, 1.0, 20, q0, qd0, u);
    const NhVec b = run_to(conservative, method, 1.0, 20, q0, qd0, u);
    EXPECT_LE((a - b).lpNorm<Eigen::Infinity>(), 1e-12) << "method " << method;
  }
  const NhVec q1 = q0 + 0.1 * qd0, p = random_vec(rng, 4, 1.0);
  NhVec r_a, r_b;
  gni_residual(potential, 0.1, q0, p, u, q1, r_a, nullptr);
  gni_residual(conservative, 0.1, q0, p, u, q1, r_b, nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r_a[i], r_b[i]) << i;
}

// The damped TestModel: GNI, SHAKE and RATTLE converge at order 2 to a tiny-step RK4
// reference of the Lagrange-d'Alembert equations with Q, and RATTLE keeps the constraints.
TEST(NonholonomicForce, DampedObservedOrderAgainstRk4Reference) {
  const ForcedTestModel model(ForceKind::Damped);
  std::mt19937 rng(23);
  NhVec q0, qd0;
  initial_state(model, rng, q0, qd0);
  const NhVec u = some_controls(model);
  const double T = 1.0;
  const NhVec ref = run_to(model, 3, T, 4000, q0, qd0, u);
  EXPECT_LE((run_to(model, 3, T, 2000, q0, qd0, u) - ref).lpNorm<Eigen::Infinity>(), 1e-11);
  const char* names[] = {"GNI", "SHAKE", "RATTLE"};
  for (int method : {0, 1, 2}) {
    double e[3];
    const int steps[3] = {20, 40, 80};
    for (int i = 0; i < 3; ++i)
      e[i] = (run_to(model, method, T, steps[i], q0, qd0, u) - ref).lpNorm<Eigen::Infinity>();
    std::printf("[damped] %s errors %.3e %.3e %.3e, observed order %.2f %.2f\n", names[method],
                e[0], e[1], e[2], std::log2(e[0] / e[1]), std::log2(e[1] / e[2]));
    EXPECT_NEAR(std::log2(e[1] / e[2]), 2.0, 0.25) << names[method];
  }
  // RATTLE's momentum satisfies mu M^-1 p = 0 and its midpoint velocity mu(q_m) v = 0.
  const double dt = 0.05;
  NhMat M;
  model.mass(q0, M);
  NhVec q = q0, p = M * qd0, q1, p1;
  for (int k = 0; k < 20; ++k) {
    q1 = q + dt * velocity_of(model, q, p);
    ASSERT_TRUE(rattle_step(model, dt, q, p, u, q1, p1).converged);
    EXPECT_LE(constraint_of(model, q1, velocity_of(model, q1, p1)).lpNorm<Eigen::Infinity>(),
              1e-14);
    EXPECT_LE(constraint_of(model, NhVec(0.5 * (q + q1)), NhVec((q1 - q) / dt))
                  .lpNorm<Eigen::Infinity>(), 1e-12);
    q = q1;
    p = p1;
  }
}

// The sleigh with viscous drag Q = -c M qdot (c in 1/s): since mu qdot = 0, the continuous
// energy is E0 exp(-2 c t). GNI's midpoint velocities obey
// (1 + c dt/2) v_k+1/2 = (1 - c dt/2) (P - Q) v_k-1/2 (the reflection of the unforced
// sleigh, scaled), so their energy falls by ((1 - c dt/2)/(1 + c dt/2))^2 every step;
// RATTLE's energy decreases monotonically, its constraints hold to round-off, and both
// reach E0 exp(-2 c T) at order 2.
class DraggedSleigh final : public NonholonomicModel {
 public:
  DraggedSleigh(double inertia, double mass, double a, double c)
      : NonholonomicModel(3, 1, 0), sleigh_(inertia, mass, a), c_(c) {}
  void mass(const NhVec& q, NhMat& M) const override { sleigh_.mass(q, M); }
  void constraint(const NhVec& q, NhMat& mu) const override { sleigh_.constraint(q, mu); }
  void constraint_derivative(const NhVec& q, int i, NhMat& dmu) const override {
    sleigh_.constraint_derivative(q, i, dmu);
  }
  bool has_force() const override { return true; }
  void force(const NhVec& q, const NhVec& qdot, NhVec& Q, NhMat* dQ_dq,
             NhMat* dQ_dqdot) const override {
    NhMat M;
    sleigh_.mass(q, M);
    Q = -c_ * (M * qdot);
    if (dQ_dq) dQ_dq->setZero(3, 3);
    if (dQ_dqdot) *dQ_dqdot = -c_ * M;
  }
  const ChaplyginSleigh& sleigh() const { return sleigh_; }

 private:
  ChaplyginSleigh sleigh_;
  double c_;
};

TEST(NonholonomicForce, SleighWithDragLosesEnergyAtTheContinuousRate) {
  const double c = 0.5, T = 2.0;
  const DraggedSleigh model(1.0, 2.0, 0.5, c);
  NhVec q0, qd0;
  sleigh_start(model.sleigh(), 1.0, 0.8, q0, qd0);
  const double E0 = nh_energy(model, q0, qd0), E_T = E0 * std::exp(-2.0 * c * T);
  double gni_error[2], rattle_error[2];
  for (int level = 0; level < 2; ++level) {
    const int steps = 40 << level;
    const double dt = T / steps, factor = std::pow((1 - 0.5 * c * dt) / (1 + 0.5 * c * dt), 2);
    GniRun s = gni_start(model, q0, qd0);
    NhVec q_prev = q0;
    double E_prev = 0.0;
    for (int k = 0; k < steps; ++k) {
      ASSERT_TRUE(gni_advance(model, dt, NhVec(), s).converged);
      const double E = nh_energy(model, s.q, NhVec((s.q - q_prev) / dt));
      if (k > 0) {
        EXPECT_NEAR(E / E_prev, factor, 1e-13) << k;
      }
      q_prev = s.q;
      E_prev = E;
    }
    // p+_N = M qdot(T) + O(dt) along mu^T only, which the energy does not see to O(dt^2).
    gni_error[level] = std::abs(nh_energy(model, s.q, velocity_of(model, s.q, s.p_plus)) - E_T);
    NhMat M;
    model.mass(q0, M);
    NhVec q = q0, p = M * qd0, q1, p1;
    double E = E0, worst_constraint = 0.0;
    for (int k = 0; k < steps; ++k) {
      q1 = q + dt * velocity_of(model, q, p);
      ASSERT_TRUE(rattle_step(model, dt, q, p, NhVec(), q1, p1).converged);
      const NhVec v1 = velocity_of(model, q1, p1);
      const double E1 = nh_energy(model, q1, v1);
      EXPECT_LT(E1, E) << k;
      worst_constraint = std::max(worst_constraint,
                                  constraint_of(model, q1, v1).lpNorm<Eigen::Infinity>());
      q = q1;
      p = p1;
      E = E1;
    }
    EXPECT_LE(worst_constraint, 1e-14);
    rattle_error[level] = std::abs(E - E_T);
  }
  std::printf("sleigh with drag c = %.1f: energy error at T = %.0f, dt = %.3f, %.3f: GNI %.3e "
              "%.3e (order %.2f), RATTLE %.3e %.3e (order %.2f)\n", c, T, T / 40, T / 80,
              gni_error[0], gni_error[1], std::log2(gni_error[0] / gni_error[1]),
              rattle_error[0], rattle_error[1], std::log2(rattle_error[0] / rattle_error[1]));
  EXPECT_NEAR(std::log2(gni_error[0] / gni_error[1]), 2.0, 0.25);
  EXPECT_NEAR(std::log2(rattle_error[0] / rattle_error[1]), 2.0, 0.25);
}

}  // namespace
}  // namespace marsden::nonholonomic
