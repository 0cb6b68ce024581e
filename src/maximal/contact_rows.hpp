// One candidate contact's rows of the maximal step (docs/contact.md, The step with
// contact): its kinematics at the next pose, its force on its body, and the elimination of
// its interior-point unknowns onto its body's 6 x 6 block of the Newton matrix, so that the
// step's linear systems keep the mechanism's block LDU. Private to src/maximal.
//
// Unknowns of a contact, all in m/s (forces divided by the body's m / dt):
//   gamma   normal impulse,           sigma   gap rate phi(x_kp1) / dt (its slack)
//   b       tangential impulse (2),   psi     sliding speed bound, eta = w (its slack)
// with gamma, sigma >= 0 and z = (mu gamma, b), y = (psi, eta) in the second-order cone.
// The central path, at relaxation kappa ((m/s)^2):
//   e1 = sigma - phi / dt - eps gamma = 0     c1 = gamma sigma - kappa = 0
//   e2 = eta - w = 0                          c2 = z o y - kappa (1, 0, 0) = 0
// where z o y = (z . y, z0 y1 + y0 z1) is the cone's Jordan product. At kappa = 0, c2 is
// Coulomb's law with maximum dissipation: |b| <= mu gamma, and where the point slides
// (w != 0), b = -mu gamma w / |w|. The compliance eps (dimensionless,
// StepOptions::contact_compliance) makes unique the load sharing that rigid bodies leave
// indeterminate (a face's four corners): that of a foundation so stiff that the point
// sinks dt eps gamma under its load.
#pragma once

#include <Eigen/Core>

#include "marsden/lie/types.hpp"
#include "marsden/maximal/contact.hpp"

namespace marsden::maximal::contact_rows {

using Vec2 = Eigen::Vector2d;
using Mat26 = Eigen::Matrix<double, 2, 6>;
using Mat62 = Eigen::Matrix<double, 6, 2>;
using Mat36 = Eigen::Matrix<double, 3, 6>;

struct Unknowns {
  double gamma = 0.0, sigma = 0.0, psi = 0.0;
  Vec2 b = Vec2::Zero(), eta = Vec2::Zero();
};

struct Row {
  int point = 0;
  bool friction = false;  // mu > 0: b, psi, eta are unknowns; else they stay zero
  double mu = 0.0;
  double scale = 1.0;     // m / dt of the body (N per m/s)
  double compliance = 0.0;  // eps
  // Unit normal and tangential forces at the point at x_k as the body's generalised force
  // (world force, body torque): the columns of G^T for the contact.
  Vec6 N = Vec6::Zero();
  Mat62 D = Mat62::Zero();
  // At the iterate: phi(x_kp1) (m), P = d(phi / dt)/d(v, omega), the tangential velocity w
  // (m/s) and Q = dw/d(v, omega).
  double phi = 0.0, dt = 0.0;
  Vec6 P = Vec6::Zero();
  Vec2 w = Vec2::Zero();
  Mat26 Q = Mat26::Zero();
  Unknowns x, d_aff, d;
  // The elimination: d gamma = g0 + g1 . ds; with friction, the cone pair's linearised
  // complementarity in Nesterov-Todd scaling (W^-1 z = W y = lambda, W symmetric), lambda o
  // (W^-1 dz + W dy) = kappa e - lambda o lambda, solved for (db, dpsi) = M^-1 (r -
  // C_gamma dgamma - C_eta deta) = A_inv (h0 + H ds), so db = b0 + B1 ds. The scaling keeps
  // the directions well defined where a pair nears its cone's boundary far from the
  // solution, where the unscaled Jordan product's linearisation pinned ANYmal's landing at
  // steps of length 1e-16.
  Mat3 W = Mat3::Identity(), W_inv = Mat3::Identity();
  Vec3 lambda = Vec3::Zero();
  Vec3 C_gamma = Vec3::Zero();
  Eigen::Matrix<double, 3, 2> C_eta = Eigen::Matrix<double, 3, 2>::Zero();
  double g0 = 0.0;
  Vec6 g1 = Vec6::Zero();
  Mat3 A_inv = Mat3::Identity();
  Mat36 H = Mat36::Zero();
  Vec3 h0 = Vec3::Zero();
  Vec2 b0 = Vec2::Zero();
  Mat26 B1 = Mat26::Zero();
};

// phi of the point at a body pose (x, R).
double distance(const ContactPoint& c, const Vec3& x, const Mat3& R);
// N and D at the pose (x_k, R_k).
void force_columns(const ContactPoint& c, const Mat3& R_k, Row& row);
// phi, P, w, Q at the next pose (x_kp1, R_kp1), for the step's velocity v and body angular
// velocity omega.
void kinematics(const ContactPoint& c, const Vec3& x_kp1, const Mat3& R_kp1, const Vec3& v,
                const Vec3& omega, double dt, Row& row);

// The residuals at target kappa: e1, e2, c1 (with the second-order term of Mehrotra's
// corrector from d_aff when `corrector`) and c2 = z o y - kappa e, unscaled (the cone's
// corrector term enters in its scaled form, eliminate_rhs).
struct Residuals {
  double e1 = 0.0, c1 = 0.0;
  Vec2 e2 = Vec2::Zero();
  Vec3 c2 = Vec3::Zero();
  double kappa = 0.0;
  bool corrector = false;
};
Residuals residuals(const Row& row, double kappa, bool corrector);
// The part of the elimination that depends on the iterate only (g1, A^-1, H, B1), and the
// body block it adds: returns -scale (N g1^T + D B1), to add to the body's Newton block.
Mat6 eliminate(Row& row);
// The part that depends on the residuals (g0, h0, b0), and the body's right-hand side
// correction: returns scale (N g0 + D b0), to subtract from the body rows of the residual.
Vec6 eliminate_rhs(Row& row, const Residuals& res);
// The unknowns' Newton step for the body's step ds into `out`.
void recover(const Row& row, const Residuals& res, const Vec6& ds, Unknowns& out);

// The largest alpha in (0, 1] keeping x + alpha d strictly feasible (gamma, sigma > 0, z and
// y in the cone's interior), times `fraction` where the boundary is nearer than 1.
double step_to_boundary(const Row& row, const Unknowns& d, double fraction);
// The complementarity products gamma sigma and z . y at x + alpha d, summed; and how many.
double complementarity(const Row& row, const Unknowns& d, double alpha);
int pairs(const Row& row);
// The smallest pair's complementarity at x + alpha d: gamma sigma, and for the cone pair
// sqrt(det z det y) (det x = x0^2 - |x1|^2), both equal to kappa on the central path.
double least_product(const Row& row, const Unknowns& d, double alpha);
// max of |e1|, |e2| (m/s).
double feasibility(const Residuals& res);
// The complementarity residual at kappa = 0 ((m/s)^2): gamma sigma, z . y, and the norm of
// the Jordan product's second part z0 y1 + y0 z1 beyond angle_tolerance z0 y0 (where the
// point slides that part is z0 y0 times the angle between b and -w).
double gap(const Row& row, const Residuals& res, double angle_tolerance);

}  // namespace marsden::maximal::contact_rows
