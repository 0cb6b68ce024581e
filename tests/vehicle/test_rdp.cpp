// The RDP nonholonomic integrator (vehicles §3.2, §5, eqs. (16)-(19)): every Jacobian block
// against finite differences, constraints by construction, the car's explicit update
// against the general Newton path, observed order against continuous references, and the
// physics of the sleigh and the snakeboard.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "marsden/solve/rk.hpp"
#include "marsden/lie/tangent.hpp"
#include "marsden/vehicle/rdp_models.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::vehicle {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A model with every term active: l depends on r (kinetic and potential parts, mixed
// r-u and r-xi couplings), A(r) and E(r) vary with r. n_r = 2.
template <class G>
class GenericTestModel final : public RdpModel<G> {
 public:
  static constexpr int dG = G::kDim;
  using Tangent = typename G::Tangent;
  // Inline storage, so that the model itself can run under the no-malloc check.
  using ZVec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 2 + dG, 1>;
  using ZMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 2 + dG, 2 + dG>;
  // k: stiffness of the potential k |r|^2 / 2 in l.
  GenericTestModel(int nb, bool prescribe_second, unsigned seed, double k = 0.7)
      : nb_(nb), prescribe_(prescribe_second), k_(k) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> n(0.0, 1.0);
    const int nz = 2 + dG;
    Eigen::MatrixXd B(nz, nz);
    for (int i = 0; i < nz; ++i)
      for (int j = 0; j < nz; ++j) B(i, j) = 0.3 * n(rng);
    M_ = B * B.transpose() + 2.0 * Eigen::MatrixXd::Identity(nz, nz);
    auto rnd = [&](int rows, int cols) {
      Eigen::MatrixXd X(rows, cols);
      for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) X(i, j) = n(rng);
      return X;
    };
    A0_ = rnd(dG, 2), A1_ = rnd(dG, 2), A2_ = rnd(dG, 2);
    E0_ = rnd(dG, nb), E1_ = rnd(dG, nb), E2_ = rnd(dG, nb);
  }
  int num_shape() const override { return 2; }
  int num_symmetry() const override { return nb_; }
  bool prescribed(int i) const override { return prescribe_ && i == 1; }

  // l = 1/2 z^T M z + 1/2 c(r) |u|^2 + s(r) xi_0 u_1 - k |r|^2 / 2, z = (u, xi).
  double lagrangian(const ShapeVec& r, const ShapeVec& u, const Tangent& xi, LagVec* grad,
                    LagMat* hess) const override {
    const int nz = 2 + dG, N = 2 + nz;
    ZVec z(nz);
    z << u, xi;
    const ZVec Mz = M_ * z;
    const double c = 0.3 * std::sin(r[0]) + 0.2 * std::cos(r[1]);
    const Eigen::Vector2d c_r(0.3 * std::cos(r[0]), -0.2 * std::sin(r[1]));
    const Eigen::Vector2d c_rr(-0.3 * std::sin(r[0]), -0.2 * std::cos(r[1]));
    const double s = 0.1 * std::sin(r[0] + r[1]), s_r = 0.1 * std::cos(r[0] + r[1]),
                 s_rr = -0.1 * std::sin(r[0] + r[1]);
    const double uu = u.squaredNorm();
    const int iu1 = 3, ixi0 = 4;  // positions of u_1 and xi_0 in (r, u, xi)
    if (grad) {
      grad->setZero(N);
      for (int j = 0; j < 2; ++j) (*grad)[j] = 0.5 * c_r[j] * uu + s_r * xi[0] * u[1] - k_ * r[j];
      grad->tail(nz) = Mz;
      grad->segment(2, 2) += c * u;
      (*grad)[iu1] += s * xi[0];
      (*grad)[ixi0] += s * u[1];
    }
    if (hess) {
      hess->setZero(N, N);
      hess->bottomRightCorner(nz, nz) = M_;
      hess->block(2, 2, 2, 2) += c * Eigen::Matrix2d::Identity();
      (*hess)(iu1, ixi0) += s;
      (*hess)(ixi0, iu1) += s;
      for (int j = 0; j < 2; ++j) {
        for (int i = 0; i < 2; ++i) (*hess)(j, i) = s_rr * xi[0] * u[1] - (i == j ? k_ : 0.0);
        (*hess)(j, j) += 0.5 * c_rr[j] * uu;
        for (int i = 0; i < 2; ++i) (*hess)(j, 2 + i) = (*hess)(2 + i, j) = c_r[j] * u[i];
        (*hess)(j, iu1) += s_r * xi[0];
        (*hess)(iu1, j) += s_r * xi[0];
        (*hess)(j, ixi0) = (*hess)(ixi0, j) = s_r * u[1];
      }
    }
    return 0.5 * z.dot(Mz) + 0.5 * c * uu + s * xi[0] * u[1] - 0.5 * k_ * r.squaredNorm();
  }
  // A = A0 + A1 sin r0 + A2 cos r1.
  void connection(const ShapeVec& r, ConnectionMat<G>& A,
                  std::array<ConnectionMat<G>, kRdpMaxShape>* dA) const override {
    A = A0_ + A1_ * std::sin(r[0]) + A2_ * std::cos(r[1]);
    if (dA) {
      (*dA)[0] = A1_ * std::cos(r[0]);
      (*dA)[1] = -A2_ * std::sin(r[1]);
    }
  }
  // E = E0 + E1 sin r1 + E2 r0.
  void symmetry_basis(const ShapeVec& r, SymBasisMat<G>& E,
                      std::array<SymBasisMat<G>, kRdpMaxShape>* dE) const override {
    E = E0_ + E1_ * std::sin(r[1]) + E2_ * r[0];
    if (dE) {
      (*dE)[0] = E2_;
      (*dE)[1] = E1_ * std::cos(r[1]);
    }
  }

 private:
  int nb_;
  bool prescribe_;
  double k_;
  ZMat M_;
  ConnectionMat<G> A0_, A1_, A2_;
  SymBasisMat<G> E0_, E1_, E2_;
};

// `base` with a shape force depending on all of (r, u, xi), scaled by `scale`:
//   f_i = scale (-c u_i - k r_i + b xi_0 r_j u_i),  j = i + 1 mod n_r,
// a damper, a spring and a coupling to the body velocity. scale = 0 gives a
// model that evaluates a shape force of zero (has_shape_force() stays true).
template <class G>
class WithShapeForce final : public RdpModel<G> {
 public:
  using Tangent = typename G::Tangent;
  WithShapeForce(const RdpModel<G>& base, double scale, double c = 0.4, double k = 0.9,
                 double b = 0.3)
      : base_(base), scale_(scale), c_(c), k_(k), b_(b) {}
  int num_shape() const override { return base_.num_shape(); }
  int num_symmetry() const override { return base_.num_symmetry(); }
  bool prescribed(int i) const override { return base_.prescribed(i); }
  double lagrangian(const ShapeVec& r, const ShapeVec& u, const Tangent& xi, LagVec* grad,
                    LagMat* hess) const override {
    return base_.lagrangian(r, u, xi, grad, hess);
  }
  void connection(const ShapeVec& r, ConnectionMat<G>& A,
                  std::array<ConnectionMat<G>, kRdpMaxShape>* dA) const override {
    base_.connection(r, A, dA);
  }
  void symmetry_basis(const ShapeVec& r, SymBasisMat<G>& E,
                      std::array<SymBasisMat<G>, kRdpMaxShape>* dE) const override {
    base_.symmetry_basis(r, E, dE);
  }
  bool has_shape_force() const override { return true; }
  void shape_force(const ShapeVec& r, const ShapeVec& u, const Tangent& xi, ShapeVec& f,
                   ShapeForceJac* J) const override {
    const int nr = num_shape();
    f.resize(nr);
    if (J) J->setZero(nr, 2 * nr + G::kDim);
    for (int i = 0; i < nr; ++i) {
      const int j = (i + 1) % nr;
      f[i] = scale_ * (-c_ * u[i] - k_ * r[i] + b_ * xi[0] * r[j] * u[i]);
      if (!J) continue;
      (*J)(i, i) += -scale_ * k_;
      (*J)(i, j) += scale_ * b_ * xi[0] * u[i];
      (*J)(i, nr + i) = scale_ * (-c_ + b_ * xi[0] * r[j]);
      (*J)(i, 2 * nr) = scale_ * b_ * r[j] * u[i];
    }
  }

 private:
  const RdpModel<G>& base_;
  double scale_, c_, k_, b_;
};

#ifdef EIGEN_RUNTIME_NO_MALLOC
// Built into test_rdp_no_malloc (tests/CMakeLists.txt) with Eigen's allocation check and
// assertions on (that build also reruns every other test here with Eigen's size checks): a
// step of each vehicle, residual and Jacobians included, must not touch the heap.
template <class G = SE2>
void steps_without_malloc(const RdpModel<G>& model, const ShapeVec& r0, const ShapeVec& u0,
                          const RdpVec& w0, const ShapeVec& f, const ShapeVec& u_prescribed) {
  for (DiffMap map : {DiffMap::Cay, DiffMap::Exp})
    for (TangentMap tan : {TangentMap::TLN, TangentMap::Exact}) {
      RdpOptions opt;
      opt.map = map;
      opt.tangent = tan;
      RdpState<G> s = rdp_initial_state<G>(model, r0, G::identity(), u0, w0);
      RdpResidual<G> res;
      EXPECT_EQ(test_support::allocations_during([&] {
                  for (int k = 0; k < 5; ++k) {
                    rdp_residual(model, opt, 0.05, s.r, s.x, s.x, f, f, u_prescribed, true, res);
                    rdp_advance(model, opt, 0.05, f, u_prescribed, s, k);
                  }
                }),
                0);
    }
}

TEST(RdpNoMalloc, VehicleStepsDoNotAllocate) {
  ShapeVec r2(2), u2(2), f2(2), up2(2);
  r2 << 0.1, 0.3;
  u2 << 1.0, 0.2;
  f2 << 0.3, 0.1;
  up2 << 0.5, 0.2;
  steps_without_malloc(CarModel(CarParams{}), r2, u2, RdpVec(0), f2, up2);
  steps_without_malloc(SnakeboardModel(SnakeboardParams{}, true), r2, u2, RdpVec::Ones(1), f2, up2);
  steps_without_malloc(SnakeboardModel(SnakeboardParams{}, false), r2, u2, RdpVec::Ones(1), f2,
                       up2);
  RdpVec w(2);
  w << 1.0, 0.5;
  steps_without_malloc(SleighModel(SleighParams{}), ShapeVec(0), ShapeVec(0), w, ShapeVec(0),
                       ShapeVec(0));
  // The largest sizes: SE(3), n_r = 2, n_b = 3, all Jacobian blocks.
  steps_without_malloc<SE3>(GenericTestModel<SE3>(3, false, 4), r2, 0.1 * u2,
                            RdpVec::Constant(3, 0.1), f2, up2);
  steps_without_malloc<SE3>(GenericTestModel<SE3>(3, true, 4), r2, 0.1 * u2,
                            RdpVec::Constant(3, 0.1), f2, up2);
  const GenericTestModel<SE3> generic(3, false, 4);
  steps_without_malloc<SE3>(WithShapeForce<SE3>(generic, 1.0), r2, 0.1 * u2,
                            RdpVec::Constant(3, 0.1), f2, up2);
}
#endif  // EIGEN_RUNTIME_NO_MALLOC

// ------------------------------------------------------------------ finite differences

using Fn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

Eigen::MatrixXd fd_jacobian(const Fn& f, const Eigen::VectorXd& x0, double eps = 1e-6) {
  const Eigen::VectorXd f0 = f(x0);
  Eigen::MatrixXd J(f0.size(), x0.size());
  for (int i = 0; i < x0.size(); ++i) {
    Eigen::VectorXd xp = x0, xm = x0;
    xp[i] += eps;
    xm[i] -= eps;
    J.col(i) = (f(xp) - f(xm)) / (2.0 * eps);
  }
  return J;
}

void expect_close(const Eigen::MatrixXd& analytic, const Eigen::MatrixXd& fd, double tol,
                  const char* what) {
  ASSERT_EQ(analytic.rows(), fd.rows()) << what;
  ASSERT_EQ(analytic.cols(), fd.cols()) << what;
  if (analytic.size() == 0) return;
  const double scale = 1.0 + fd.lpNorm<Eigen::Infinity>();
  EXPECT_LE((analytic - fd).lpNorm<Eigen::Infinity>(), tol * scale) << what << "\nanalytic:\n"
                                                                    << analytic << "\nfd:\n"
                                                                    << fd;
}

// Checks every block of rdp_residual at one point.
template <class G>
void check_all_blocks(const RdpModel<G>& model, const RdpOptions& opt, double dt,
                      const ShapeVec& r_k, const RdpVec& x_km1, const RdpVec& x_k,
                      const ShapeVec& f_km1a, const ShapeVec& f_ka, const ShapeVec& u_prescribed) {
  RdpResidual<G> res;
  rdp_residual(model, opt, dt, r_k, x_km1, x_k, f_km1a, f_ka, u_prescribed, true, res);
  auto eval = [&](const RdpVec& a, const RdpVec& b, const ShapeVec& r, const ShapeVec& f1,
                  const ShapeVec& f2, const ShapeVec& up) {
    RdpResidual<G> t;
    rdp_residual(model, opt, dt, r, a, b, f1, f2, up, false, t);
    return Eigen::VectorXd(t.r);
  };
  const double tol = 2e-7;
  expect_close(res.J_r_x_k,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(x_km1, RdpVec(v), r_k, f_km1a, f_ka, u_prescribed);
                   },
                   Eigen::VectorXd(x_k)),
               tol, "J_r_x_k");
  expect_close(res.J_r_x_km1,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(RdpVec(v), x_k, r_k, f_km1a, f_ka, u_prescribed);
                   },
                   Eigen::VectorXd(x_km1)),
               tol, "J_r_x_km1");
  expect_close(res.J_r_dt,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     RdpResidual<G> t;
                     rdp_residual(model, opt, v[0], r_k, x_km1, x_k, f_km1a, f_ka, u_prescribed,
                                  false, t);
                     return Eigen::VectorXd(t.r);
                   },
                   Eigen::VectorXd::Constant(1, dt)),
               tol, "J_r_dt");
  if (model.num_shape() == 0) return;
  expect_close(res.J_r_r_k,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(x_km1, x_k, ShapeVec(v), f_km1a, f_ka, u_prescribed);
                   },
                   Eigen::VectorXd(r_k)),
               tol, "J_r_r_k");
  expect_close(res.J_r_f_km1a,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(x_km1, x_k, r_k, ShapeVec(v), f_ka, u_prescribed);
                   },
                   Eigen::VectorXd(f_km1a)),
               tol, "J_r_f_km1a");
  expect_close(res.J_r_f_ka,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(x_km1, x_k, r_k, f_km1a, ShapeVec(v), u_prescribed);
                   },
                   Eigen::VectorXd(f_ka)),
               tol, "J_r_f_ka");
  expect_close(res.J_r_u_prescribed,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     return eval(x_km1, x_k, r_k, f_km1a, f_ka, ShapeVec(v));
                   },
                   Eigen::VectorXd(u_prescribed)),
               tol, "J_r_u_prescribed");
}

struct Choice {
  DiffMap map;
  TangentMap tangent;
};
const char* name(const Choice& c) {
  if (c.map == DiffMap::Cay) return c.tangent == TangentMap::TLN ? "cay/TLN" : "cay/exact";
  return c.tangent == TangentMap::TLN ? "exp/TLN" : "exp/exact";
}
const Choice kChoices[] = {{DiffMap::Cay, TangentMap::TLN},
                           {DiffMap::Cay, TangentMap::Exact},
                           {DiffMap::Exp, TangentMap::TLN},
                           {DiffMap::Exp, TangentMap::Exact}};
const double kAlphas[] = {0.0, 0.3, 0.5, 1.0};

RdpVec random_vec(std::mt19937& rng, int n, double scale) {
  std::normal_distribution<double> d(0.0, scale);
  RdpVec v(n);
  for (int i = 0; i < n; ++i) v[i] = d(rng);
  return v;
}

template <class G>
void check_model_blocks(const RdpModel<G>& model, unsigned seed) {
  std::mt19937 rng(seed);
  const int nr = model.num_shape(), n = nr + model.num_symmetry();
  for (const Choice& c : kChoices)
    for (double alpha : kAlphas) {
      SCOPED_TRACE(testing::Message() << name(c) << " alpha " << alpha);
      RdpOptions opt;
      opt.alpha = alpha;
      opt.map = c.map;
      opt.tangent = c.tangent;
      const ShapeVec r_k = random_vec(rng, nr, 0.5);
      check_all_blocks(model, opt, 0.1, r_k, random_vec(rng, n, 0.8), random_vec(rng, n, 0.8),
                       ShapeVec(random_vec(rng, nr, 1.0)), ShapeVec(random_vec(rng, nr, 1.0)),
                       ShapeVec(random_vec(rng, nr, 1.0)));
    }
}

TEST(RdpJacobians, GenericModelSE2) {
  check_model_blocks(GenericTestModel<SE2>(1, false, 1), 11);
  check_model_blocks(GenericTestModel<SE2>(2, true, 2), 12);
}

TEST(RdpJacobians, GenericModelSE3) {
  check_model_blocks(GenericTestModel<SE3>(2, false, 3), 13);
  check_model_blocks(GenericTestModel<SE3>(3, true, 4), 14);
}

// The test model's own shape-force derivatives, then every residual block with the force.
TEST(RdpJacobians, ShapeForce) {
  const GenericTestModel<SE2> se2(2, true, 2);
  const GenericTestModel<SE3> se3(3, false, 3);
  const SnakeboardModel board(SnakeboardParams{}, false);
  const WithShapeForce<SE2> forced_se2(se2, 1.0), forced_board(board, 1.0);
  const WithShapeForce<SE3> forced_se3(se3, 1.0);
  std::mt19937 rng(31);
  const ShapeVec r = random_vec(rng, 2, 0.5), u = random_vec(rng, 2, 0.8);
  const Vec3 xi = random_vec(rng, 3, 0.8);
  ShapeVec f;
  ShapeForceJac J;
  forced_se2.shape_force(r, u, xi, f, &J);
  Eigen::VectorXd z(7);
  z << r, u, xi;
  expect_close(J,
               fd_jacobian(
                   [&](const Eigen::VectorXd& v) {
                     ShapeVec fv;
                     forced_se2.shape_force(ShapeVec(v.head(2)), ShapeVec(v.segment(2, 2)),
                                            Vec3(v.tail(3)), fv, nullptr);
                     return Eigen::VectorXd(fv);
                   },
                   z),
               2e-8, "df_r/d(r, u, xi)");
  check_model_blocks(forced_se2, 41);
  check_model_blocks(forced_board, 42);
  check_model_blocks(forced_se3, 43);
}

TEST(RdpJacobians, VehicleModels) {
  check_model_blocks(CarModel(CarParams{}), 21);
  check_model_blocks(SnakeboardModel(SnakeboardParams{}, false), 22);
  check_model_blocks(SnakeboardModel(SnakeboardParams{}, true), 23);
  check_model_blocks(SleighModel(SleighParams{}), 24);
}

// --------------------------------------------------------------------------------- car

double car_force(double t) { return 0.5 * std::sin(t) + 0.2; }
double car_steer_rate(double t) { return 0.4 * std::cos(1.3 * t); }

struct CarPose {
  double theta, x, y, psi, sigma;
};

CarPose run_car_general(const CarModel& car, const RdpOptions& opt, double dt, int steps,
                        double sigma0, double psid0, std::vector<double>* u_psi = nullptr) {
  ShapeVec r0(2), u0(2);
  r0 << 0.0, sigma0;
  u0 << psid0, car_steer_rate(0.0);
  RdpState<SE2> s = rdp_initial_state<SE2>(car, r0, SE2::identity(), u0, RdpVec(0));
  ShapeVec f(2), u_prescribed(2);
  for (int k = 0; k < steps; ++k) {
    const double t = (k + opt.alpha) * dt;
    f << car_force(t), 0.0;
    u_prescribed << 0.0, car_steer_rate(t);
    rdp_advance(car, opt, dt, f, u_prescribed, s, k);
    if (u_psi) u_psi->push_back(s.x[0]);
  }
  return {s.g.angle(), s.g.x[0], s.g.x[1], s.r[0], s.r[1]};
}

CarPose run_car_explicit(const CarParams& p, double alpha, double dt, int steps, double sigma0,
                         double psid0, std::vector<double>* u_psi = nullptr) {
  CarExplicitState s = car_explicit_initial(p, 0.0, 0.0, 0.0, 0.0, sigma0, psid0);
  for (int k = 0; k < steps; ++k) {
    const double t = (k + alpha) * dt;
    car_explicit_step(p, dt, alpha, car_force(t), car_steer_rate(t), s);
    if (u_psi) u_psi->push_back(s.u_psi);
  }
  return {s.theta, s.x, s.y, s.psi, s.sigma};
}

CarPose run_car_reference(const CarParams& p, double T, double sigma0, double psid0,
                          bool rk2 = false) {
  CarContinuousState y;
  y << 0.0, 0.0, 0.0, 0.0, sigma0, psid0;
  auto f = [&](double t, const CarContinuousState& s) {
    return car_continuous_rhs(p, s, car_force(t), car_steer_rate(t));
  };
  const int n = rk2 ? 200000 : 20000;
  const double dt = T / n;
  for (int k = 0; k < n; ++k)
    y = rk_step(rk2 ? RungeKutta::Midpoint2 : RungeKutta::Classic4, k * dt, dt, y,
                     f);
  return {y[0], y[1], y[2], y[3], y[4]};
}

// Headings compared modulo 2 pi: SE2::angle() lies in (-pi, pi], the explicit theta does not.
double angle_diff(double a, double b) { return std::abs(std::remainder(a - b, 2.0 * kPi)); }

double pose_error(const CarPose& a, const CarPose& b) {
  return std::max({angle_diff(a.theta, b.theta), std::abs(a.x - b.x), std::abs(a.y - b.y),
                   std::abs(a.psi - b.psi), std::abs(a.sigma - b.sigma)});
}

TEST(RdpCar, ExplicitUpdateEqualsGeneralNewtonPath) {
  const CarParams p;
  const CarModel car(p);
  for (double alpha : kAlphas) {
    RdpOptions opt;
    opt.alpha = alpha;
    opt.map = DiffMap::Exp;
    opt.tangent = TangentMap::TLN;  // see below for the exact d exp^-1
    std::vector<double> ug, ue;
    const CarPose g = run_car_general(car, opt, 0.05, 400, 0.3, 2.0, &ug);
    const CarPose e = run_car_explicit(p, alpha, 0.05, 400, 0.3, 2.0, &ue);
    double du = 0.0;
    for (size_t i = 0; i < ug.size(); ++i) du = std::max(du, std::abs(ug[i] - ue[i]));
    std::printf("car alpha %.1f: |explicit - general| pose %.2e, u_psi %.2e\n", alpha,
                pose_error(g, e), du);
    EXPECT_LT(pose_error(g, e), 1e-11) << "alpha " << alpha;
    EXPECT_LT(du, 1e-11) << "alpha " << alpha;
  }
  // With C = d exp^-1 exactly, A(r_k)^T (ad_xi^T)^2 mu no longer vanishes once sigma
  // varies, so the paper's simplification DEP -> mu_k - mu_k-1 is O(dt^3) per step off.
  RdpOptions opt;
  opt.map = DiffMap::Exp;
  opt.tangent = TangentMap::Exact;
  const double d1 = pose_error(run_car_general(car, opt, 0.05, 400, 0.3, 2.0),
                               run_car_explicit(p, 0.5, 0.05, 400, 0.3, 2.0));
  const double d2 = pose_error(run_car_general(car, opt, 0.025, 800, 0.3, 2.0),
                               run_car_explicit(p, 0.5, 0.025, 800, 0.3, 2.0));
  std::printf("car exact dexp^-1 vs explicit: %.2e (dt = 0.05), %.2e (dt = 0.025)\n", d1, d2);
  EXPECT_LT(d2, d1 / 3.0);
}

TEST(RdpCar, SecondOrderAgainstContinuousReference) {
  const CarParams p;
  const CarModel car(p);
  const double T = 4.0;
  const CarPose ref = run_car_reference(p, T, 0.3, 2.0);
  const CarPose ref2 = run_car_reference(p, T, 0.3, 2.0, true);
  EXPECT_LT(pose_error(ref, ref2), 1e-8);  // RK4 and RK2 references agree
  for (const Choice& c : kChoices) {
    RdpOptions opt;
    opt.map = c.map;
    opt.tangent = c.tangent;
    double e[3];
    for (int i = 0; i < 3; ++i) {
      const int steps = 50 << i;
      e[i] = pose_error(run_car_general(car, opt, T / steps, steps, 0.3, 2.0), ref);
    }
    const double o1 = std::log2(e[0] / e[1]), o2 = std::log2(e[1] / e[2]);
    std::printf("car %s: errors %.2e %.2e %.2e, orders %.2f %.2f\n", name(c), e[0], e[1], e[2], o1,
                o2);
    EXPECT_NEAR(o2, 2.0, 0.2);
  }
  double e[3];
  for (int i = 0; i < 3; ++i) {
    const int steps = 50 << i;
    e[i] = pose_error(run_car_explicit(p, 0.5, T / steps, steps, 0.3, 2.0), ref);
  }
  std::printf("car explicit: errors %.2e %.2e %.2e, order %.2f\n", e[0], e[1], e[2],
              std::log2(e[1] / e[2]));
  EXPECT_NEAR(std::log2(e[1] / e[2]), 2.0, 0.2);
}

// ------------------------------------------------------------------------------ sleigh

struct SleighRun {
  double theta, x, y;
};

SleighRun run_sleigh(const SleighModel& sl, const RdpOptions& opt, double dt, int steps, double w0,
                     double v0, double* max_constraint = nullptr) {
  RdpVec w(2);
  w << w0, v0;
  RdpState<SE2> s = rdp_initial_state<SE2>(sl, ShapeVec(0), SE2::identity(), ShapeVec(0), w);
  const double a = sl.params().a;
  for (int k = 0; k < steps; ++k) {
    const SE2 g_k = s.g;
    rdp_advance(sl, opt, dt, ShapeVec(0), ShapeVec(0), s, k);
    if (max_constraint) {
      // Body velocity of the segment, and the one read off the poses themselves.
      const Vec3 xi = rdp_segment_velocity(sl, opt, dt, ShapeVec(0), s.x);
      const Vec3 xi_g = tau_inv<SE2>(opt.map, g_k.inverse() * s.g) / dt;
      *max_constraint =
          std::max({*max_constraint, std::abs(xi[2] + a * xi[0]), std::abs(xi_g[2] + a * xi_g[0])});
    }
  }
  return {s.g.angle(), s.g.x[0], s.g.x[1]};
}

TEST(RdpSleigh, ConstraintHoldsEveryStep) {
  const SleighModel sl(SleighParams{});
  for (const Choice& c : kChoices) {
    RdpOptions opt;
    opt.map = c.map;
    opt.tangent = c.tangent;
    double worst = 0.0;
    run_sleigh(sl, opt, 0.05, 400, 1.0, 0.5, &worst);
    EXPECT_LT(worst, 1e-12);
  }
}

TEST(RdpSleigh, SecondOrderAgainstContinuousReference) {
  const SleighParams p;
  const SleighModel sl(p);
  const double T = 3.0;
  SleighContinuousState y;
  y << 0.0, 0.0, 0.0, 1.0, 0.5;
  const int nref = 30000;
  for (int k = 0; k < nref; ++k)
    y = rk_step(RungeKutta::Classic4, k * T / nref, T / nref, y,
                     [&](double, const SleighContinuousState& s) { return sleigh_continuous_rhs(p, s); });
  for (const Choice& c : kChoices) {
    RdpOptions opt;
    opt.map = c.map;
    opt.tangent = c.tangent;
    double e[3];
    for (int i = 0; i < 3; ++i) {
      const int steps = 60 << i;
      const SleighRun r = run_sleigh(sl, opt, T / steps, steps, 1.0, 0.5);
      e[i] = std::max({angle_diff(r.theta, y[0]), std::abs(r.x - y[1]), std::abs(r.y - y[2])});
    }
    const double o2 = std::log2(e[1] / e[2]);
    std::printf("sleigh %s: errors %.2e %.2e %.2e, orders %.2f %.2f\n", name(c), e[0], e[1], e[2],
                std::log2(e[0] / e[1]), o2);
    EXPECT_NEAR(o2, 2.0, 0.2);
  }
}

TEST(RdpSleigh, EnergyBoundedAndRelaxesToStraightMotion) {
  const SleighParams p;
  const SleighModel sl(p);
  RdpOptions opt;  // cay, TLN, alpha = 1/2
  const double dt = 0.05;
  RdpVec w(2);
  w << 1.0, 0.5;
  RdpState<SE2> s = rdp_initial_state<SE2>(sl, ShapeVec(0), SE2::identity(), ShapeVec(0), w);
  const double E0 = sl.energy(ShapeVec(0), Vec3(1.0, 0.5, -p.a));
  double worst = 0.0;
  for (int k = 0; k < 100000; ++k) {
    rdp_advance(sl, opt, dt, ShapeVec(0), ShapeVec(0), s, k);
    const Vec3 xi = rdp_segment_velocity(sl, opt, dt, ShapeVec(0), s.x);
    worst = std::max(worst, std::abs(sl.energy(ShapeVec(0), xi) - E0) / E0);
  }
  const double omega = s.x[0], v1 = s.x[1];
  std::printf(
      "sleigh 1e5 steps: max rel. energy error %.2e, omega %.2e, v1 %.6f, "
      "-sign(a) sqrt(2E/m) %.6f\n",
      worst, omega, v1, -std::copysign(std::sqrt(2.0 * E0 / p.m), p.a));
  EXPECT_LT(worst, 1e-2);
  EXPECT_LT(std::abs(omega), 1e-8);
  // The stable straight motion runs with the skate trailing: v1 a < 0.
  EXPECT_NEAR(v1, -std::copysign(std::sqrt(2.0 * E0 / p.m), p.a), 1e-2 * std::sqrt(2.0 * E0));
}

// -------------------------------------------------------------------------- snakeboard

TEST(RdpSnakeboard, LockedShapeConservesMomentumAndMovesOnCircle) {
  const SnakeboardParams p;
  const SnakeboardModel sb(p, true);
  for (const Choice& c : kChoices) {
    RdpOptions opt;
    opt.map = c.map;
    opt.tangent = c.tangent;
    const double dt = 0.05, phi = 0.4;
    ShapeVec r0(2), u0 = ShapeVec::Zero(2);
    r0 << 0.3, phi;
    RdpVec w0(1);
    w0 << 0.7;
    RdpState<SE2> s = rdp_initial_state<SE2>(sb, r0, SE2::identity(), u0, w0);
    std::vector<Vec2> pts{s.g.x};
    double p0 = 0.0, drift = 0.0;
    for (int k = 0; k < 2000; ++k) {
      rdp_advance(sb, opt, dt, ShapeVec::Zero(2), ShapeVec::Zero(2), s, k);
      const Vec3 xi = rdp_segment_velocity(sb, opt, dt, s.r, s.x);
      const double pk = sb.nonholonomic_momentum(s.r, s.x.head(2), xi);
      if (k == 0) p0 = pk;
      drift = std::max(drift, std::abs(pk - p0));
      pts.push_back(s.g.x);
    }
    // Circle through the first three points; every later point must lie on it.
    const Vec2 a = pts[0], b = pts[1], cc = pts[2];
    const double d =
        2.0 * (a.x() * (b.y() - cc.y()) + b.x() * (cc.y() - a.y()) + cc.x() * (a.y() - b.y()));
    const Vec2 centre((a.squaredNorm() * (b.y() - cc.y()) + b.squaredNorm() * (cc.y() - a.y()) +
                       cc.squaredNorm() * (a.y() - b.y())) /
                          d,
                      (a.squaredNorm() * (cc.x() - b.x()) + b.squaredNorm() * (a.x() - cc.x()) +
                       cc.squaredNorm() * (b.x() - a.x())) /
                          d);
    const double R = (a - centre).norm();
    double dev = 0.0;
    for (const Vec2& q : pts) dev = std::max(dev, std::abs((q - centre).norm() - R));
    std::printf(
        "snakeboard locked %s: momentum drift %.2e (p = %.4f), radius %.6f "
        "(l cot phi = %.6f), max deviation %.2e\n",
        name(c), drift, p0, R, p.l / std::tan(phi), dev);
    EXPECT_LT(drift, 1e-12 * (1.0 + std::abs(p0)));
    EXPECT_LT(dev, 1e-10);
    EXPECT_EQ(s.r[0], r0[0]);
    if (c.map == DiffMap::Exp) {
      EXPECT_NEAR(R, p.l / std::tan(phi), 1e-10);
    }
  }
}

struct GaitResult {
  Vec2 displacement;
  double momentum;
};

GaitResult run_gait(const SnakeboardModel& sb, const RdpOptions& opt, double dt, double T) {
  const double freq = 1.0, a_psi = 1.0, a_phi = 0.5, om = 2.0 * kPi * freq;
  // psi = a_psi sin(om t), phi = a_phi sin(om t + pi/2): rotor and steering in quadrature.
  auto rate = [&](double t) {
    ShapeVec u(2);
    u << a_psi * om * std::cos(om * t), a_phi * om * std::cos(om * t + 0.5 * kPi);
    return u;
  };
  ShapeVec r0(2);
  r0 << 0.0, a_phi;
  RdpState<SE2> s = rdp_initial_state<SE2>(sb, r0, SE2::identity(), rate(0.0), RdpVec::Zero(1));
  const int steps = static_cast<int>(std::lround(T / dt));
  for (int k = 0; k < steps; ++k)
    rdp_advance(sb, opt, dt, ShapeVec::Zero(2), rate((k + opt.alpha) * dt), s, k);
  const Vec3 xi = rdp_segment_velocity(sb, opt, dt, s.r, s.x);
  return {s.g.x, sb.nonholonomic_momentum(s.r, s.x.head(2), xi)};
}

TEST(RdpSnakeboard, RotorAndSteeringGaitMovesBoardWithoutPushing) {
  const SnakeboardModel sb(SnakeboardParams{}, true);
  RdpOptions opt;
  const double T = 5.0;
  const GaitResult a = run_gait(sb, opt, 0.01, T);
  const GaitResult b = run_gait(sb, opt, 0.005, T);
  std::printf(
      "snakeboard gait over %.0f periods: displacement (%.4f, %.4f), |d| = %.4f, "
      "dt vs dt/2 difference %.2e, momentum %.4f\n",
      T, a.displacement.x(), a.displacement.y(), a.displacement.norm(),
      (a.displacement - b.displacement).norm(), a.momentum);
  // The board travels from rest on shape changes alone (no force on the group, f = 0), and
  // the distance is a property of the dynamics, not of the step.
  EXPECT_GT(a.displacement.norm(), 0.2);
  EXPECT_LT((a.displacement - b.displacement).norm(), 1e-2 * a.displacement.norm());
}

// A torque-driven snakeboard (shape velocities unknown) also steps, and its rotor responds.
TEST(RdpSnakeboard, TorqueDrivenShapeSteps) {
  const SnakeboardModel sb(SnakeboardParams{}, false);
  RdpOptions opt;
  ShapeVec r0(2), u0 = ShapeVec::Zero(2), f(2);
  r0 << 0.0, 0.2;
  RdpState<SE2> s = rdp_initial_state<SE2>(sb, r0, SE2::identity(), u0, RdpVec::Zero(1));
  for (int k = 0; k < 200; ++k) {
    f << 0.3 * std::sin(0.05 * k), 0.1 * std::cos(0.05 * k);
    rdp_advance(sb, opt, 0.05, f, ShapeVec::Zero(2), s, k);
  }
  EXPECT_TRUE(s.g.x.allFinite());
  EXPECT_GT(std::abs(s.r[0]), 1e-3);
}

// ------------------------------------------------------------------------- shape forces

template <class G>
RdpState<G> run_forced(const RdpModel<G>& model, int steps, const ShapeVec& r0,
                       const ShapeVec& u0, const RdpVec& w0) {
  const RdpOptions opt;
  const double dt = 0.05;
  RdpState<G> s = rdp_initial_state<G>(model, r0, G::identity(), u0, w0);
  ShapeVec f(r0.size()), u_prescribed(r0.size());
  for (int k = 0; k < steps; ++k) {
    const double t = (k + opt.alpha) * dt;
    for (int i = 0; i < r0.size(); ++i) {
      f[i] = 0.3 * std::sin(1.7 * t + i);
      u_prescribed[i] = 0.4 * std::cos(1.3 * t + i);
    }
    rdp_advance(model, opt, dt, f, u_prescribed, s, k);
  }
  return s;
}

// A shape force that evaluates to zero adds exact zeros: the trajectory of the model
// without one, bit for bit (car: prescribed steering row; snakeboard: both rows forced).
TEST(RdpShapeForce, ZeroForceGivesTheBuiltInTrajectoryBitForBit) {
  ShapeVec r0(2), u0(2);
  r0 << 0.1, 0.3;
  u0 << 1.0, 0.2;
  const CarModel car(CarParams{});
  const SnakeboardModel board(SnakeboardParams{}, false);
  const GenericTestModel<SE3> generic(2, false, 6);
  const auto same = [](const auto& a, const auto& b) {
    EXPECT_TRUE((a.r.array() == b.r.array()).all());
    EXPECT_TRUE((a.x.array() == b.x.array()).all());
    EXPECT_TRUE((a.g.matrix().array() == b.g.matrix().array()).all());
    EXPECT_TRUE((a.left.p.array() == b.left.p.array()).all());
    EXPECT_TRUE((a.left.mu.array() == b.left.mu.array()).all());
  };
  same(run_forced<SE2>(car, 40, r0, u0, RdpVec(0)),
       run_forced<SE2>(WithShapeForce<SE2>(car, 0.0), 40, r0, u0, RdpVec(0)));
  same(run_forced<SE2>(board, 40, r0, u0, RdpVec::Ones(1)),
       run_forced<SE2>(WithShapeForce<SE2>(board, 0.0), 40, r0, u0, RdpVec::Ones(1)));
  same(run_forced<SE3>(generic, 40, r0, 0.1 * u0, RdpVec::Constant(2, 0.1)),
       run_forced<SE3>(WithShapeForce<SE3>(generic, 0.0), 40, r0, 0.1 * u0,
                       RdpVec::Constant(2, 0.1)));
}

// A spring written as the shape force -k r equals the same spring written as the potential
// k |r|^2 / 2 in l: both enter eq. (16) at r_k+alpha with the same weights, so the
// trajectories agree to the Newton tolerance.
TEST(RdpShapeForce, SpringForceEqualsSpringPotential) {
  ShapeVec r0(2), u0(2);
  r0 << 0.4, -0.3;
  u0 << 0.5, 0.2;
  for (int nb : {1, 2}) {
    const GenericTestModel<SE2> with_potential(nb, false, 7, 0.7), without(nb, false, 7, 0.0);
    const WithShapeForce<SE2> with_force(without, 1.0, 0.0, 0.7, 0.0);
    const RdpState<SE2> a = run_forced<SE2>(with_potential, 60, r0, u0, RdpVec::Constant(nb, 0.3));
    const RdpState<SE2> b = run_forced<SE2>(with_force, 60, r0, u0, RdpVec::Constant(nb, 0.3));
    EXPECT_LT((a.r - b.r).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LT((a.x - b.x).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LT((a.g.matrix() - b.g.matrix()).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_GT((a.r - r0).lpNorm<Eigen::Infinity>(), 0.1);  // the spring moved the shape
  }
}

}  // namespace
}  // namespace marsden::vehicle
