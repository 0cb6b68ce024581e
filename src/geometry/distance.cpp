// Closed-form signed distances and their derivatives (docs/contact.md, Geometry).
//
// Every derivative is assembled from two facts about right perturbations g exp(xi^),
// xi = (omega, v) in the body frame: a world point p carried by a body at g = (R, x) moves
// by d p = R (omega x p_body + v), i.e. d p / d xi = [-(p - x)^ R, R], and a world direction
// d carried by it turns by d d / d xi = [-d^ R, 0]. Each query writes its derivatives in
// both bodies at once as 3 x 12 blocks, columns (xi_a, xi_b), and splits them at the end.
// phi itself always has the derivative n . (velocity of the witness point of A - that of B),
// the two taken as points fixed on their bodies (Danskin's theorem: the witness points
// minimise the gap along n), which the formulas below reproduce term by term.
#include "marsden/geometry/distance.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Geometry>

#include "marsden/error.hpp"

namespace marsden::geometry {

namespace {

using Mat312 = Eigen::Matrix<double, 3, 12>;
using Row12 = Eigen::Matrix<double, 1, 12>;

constexpr int kColA = 0, kColB = 6;

// d p / d (xi_a, xi_b) for a world point p fixed on the body at g_wb (columns from col).
Mat312 point_jacobian(const SE3& g_wb, const Vec3& p, int col) {
  Mat312 J = Mat312::Zero();
  J.block<3, 3>(0, col) = -SO3::hat(p - g_wb.x) * g_wb.R;
  J.block<3, 3>(0, col + 3) = g_wb.R;
  return J;
}

// d d / d (xi_a, xi_b) for a world direction d fixed on the body at g_wb.
Mat312 direction_jacobian(const SE3& g_wb, const Vec3& d, int col) {
  Mat312 J = Mat312::Zero();
  J.block<3, 3>(0, col) = -SO3::hat(d) * g_wb.R;
  return J;
}

// d (d / |d|) = (I - n n^T) d d / |d|.
Mat312 unit_jacobian(const Vec3& n, double length, const Mat312& J_d) {
  return (Mat3::Identity() - n * n.transpose()) * J_d / length;
}

double sign_or_zero(double x, double tolerance) {
  return std::abs(x) <= tolerance ? 0.0 : (x > 0.0 ? 1.0 : -1.0);
}

// Where a parameter of a closest point sits: free inside its range or at one end (0, 1, 2).
int clamp_state(double value, double lower, double upper) {
  return value <= lower ? 1 : value >= upper ? 2 : 0;
}

SignedDistance finish(double phi, const Vec3& n, const Vec3& p_a, const Vec3& p_b,
                      const Row12& J_phi, const Mat312& J_n, const Mat312& J_pa,
                      const Mat312& J_pb, std::uint32_t feature, bool unique) {
  SignedDistance d;
  d.phi = phi;
  d.n = n;
  d.p_a = p_a;
  d.p_b = p_b;
  d.J_phi_a = J_phi.leftCols<6>();
  d.J_phi_b = J_phi.rightCols<6>();
  d.J_n_a = J_n.leftCols<6>();
  d.J_n_b = J_n.rightCols<6>();
  d.J_pa_a = J_pa.leftCols<6>();
  d.J_pa_b = J_pa.rightCols<6>();
  d.J_pb_a = J_pb.leftCols<6>();
  d.J_pb_b = J_pb.rightCols<6>();
  d.feature = feature;
  d.unique = unique;
  return d;
}

// A point of A against the half-space b, with n the half-space's: p_b is the projection
// of p_a on the plane, so d p_b = (I - n n^T) d p_a.
SignedDistance point_on_halfspace(const HalfSpace& b, double phi, const Vec3& p_a,
                                  const Row12& J_phi, const Mat312& J_pa,
                                  std::uint32_t feature, bool unique) {
  const Vec3& n = b.n();
  const Vec3 p_b = p_a - phi * n;
  const Mat312 J_pb = J_pa - n * J_phi;
  return finish(phi, n, p_a, p_b, J_phi, Mat312::Zero(), J_pa, J_pb, feature, unique);
}

// Two balls: centre c_a of radius r_a against centre c_b of radius r_b, with the
// derivatives of the centres. Serves sphere-sphere, and sphere-capsule and capsule-capsule
// with c_b (and c_a) the closest points of the segments. `fallback` is the normal taken
// where the centres coincide.
struct Balls {
  double phi;
  Vec3 n;
  Vec3 p_a, p_b;
  Row12 J_phi;
  Mat312 J_n, J_pa, J_pb;
  bool coincident;
};

Balls balls(const Vec3& c_a, double r_a, const Mat312& J_ca, const Vec3& c_b, double r_b,
            const Mat312& J_cb, const Vec3& fallback) {
  Balls out;
  const Vec3 d = c_a - c_b;
  const double length = d.norm();
  const Mat312 J_d = J_ca - J_cb;
  out.coincident = length <= kCoincidentTolerance * (r_a + r_b);
  if (out.coincident) {
    // The normal is the documented choice, held fixed; phi = n . d - r_a - r_b near here.
    out.n = fallback;
    out.phi = out.n.dot(d) - r_a - r_b;
    out.J_n.setZero();
  } else {
    out.n = d / length;
    out.phi = length - r_a - r_b;
    out.J_n = unit_jacobian(out.n, length, J_d);
  }
  out.J_phi = out.n.transpose() * J_d;
  out.p_a = c_a - r_a * out.n;
  out.p_b = c_b + r_b * out.n;
  out.J_pa = J_ca - r_a * out.J_n;
  out.J_pb = J_cb + r_b * out.J_n;
  return out;
}

SignedDistance finish(const Balls& b, std::uint32_t feature, bool unique) {
  return finish(b.phi, b.n, b.p_a, b.p_b, b.J_phi, b.J_n, b.J_pa, b.J_pb, feature, unique);
}

// The closest point of a capsule's segment x + t u, |t| <= h, to a world point c:
// t = clamp(u . (c - x)). Free, t follows c and the segment; at an end, the end point is
// fixed on the body. J_c: d c; J_x, J_u: d x and d u of the segment's body.
struct SegmentPoint {
  double t;
  int state;  // 0 inside, 1 at -h, 2 at +h
  Vec3 q;
  Mat312 J_q;
};

SegmentPoint closest_on_segment(const Vec3& x, const Vec3& u, double h, const Mat312& J_x,
                                const Mat312& J_u, const Vec3& c, const Mat312& J_c) {
  SegmentPoint out;
  const double t_free = u.dot(c - x);
  out.state = clamp_state(t_free, -h, h);
  out.t = std::clamp(t_free, -h, h);
  out.q = x + out.t * u;
  out.J_q = J_x + out.t * J_u;
  if (out.state == 0) {
    const Row12 J_t = (c - x).transpose() * J_u + u.transpose() * (J_c - J_x);
    out.J_q += u * J_t;
  }
  return out;
}

}  // namespace

// ---- shapes against a half-space ------------------------------------------------------

SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const HalfSpace& b) {
  const Vec3 c = g_wa.act(a.g_bs().x);
  const Mat312 J_c = point_jacobian(g_wa, c, kColA);
  const Vec3 p_a = c - a.radius() * b.n();
  const double phi = b.distance(p_a);
  return point_on_halfspace(b, phi, p_a, b.n().transpose() * J_c, J_c, 0, true);
}

// The end of the segment deeper along -n; the segment's middle when it lies parallel to the
// plane (|n . u| <= kParallelTolerance).
SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const HalfSpace& b) {
  const SE3 g_ws = g_wa * a.g_bs();
  const Vec3 u = g_ws.R.col(2);
  const double s = -sign_or_zero(b.n().dot(u), kParallelTolerance);
  const Vec3 e = g_ws.x + s * a.half_length() * u;
  const Mat312 J_e = point_jacobian(g_wa, e, kColA);
  const Vec3 p_a = e - a.radius() * b.n();
  return point_on_halfspace(b, b.distance(p_a), p_a, b.n().transpose() * J_e, J_e,
                            static_cast<std::uint32_t>(s + 1.0), s != 0.0);
}

// The vertex deepest along -n; along each box axis parallel to the plane, the middle
// (a face-on box: the centre of its lowest face).
SignedDistance signed_distance(const Box& a, const SE3& g_wa, const HalfSpace& b) {
  const SE3 g_ws = g_wa * a.g_bs();
  Vec3 p_a = g_ws.x;
  std::uint32_t feature = 0;
  bool unique = true;
  for (int i = 2; i >= 0; --i) {
    const double s = -sign_or_zero(b.n().dot(g_ws.R.col(i)), kParallelTolerance);
    p_a += s * a.half_extents()[i] * g_ws.R.col(i);
    feature = 3 * feature + static_cast<std::uint32_t>(s + 1.0);
    unique = unique && s != 0.0;
  }
  const Mat312 J_pa = point_jacobian(g_wa, p_a, kColA);
  return point_on_halfspace(b, b.distance(p_a), p_a, b.n().transpose() * J_pa, J_pa, feature,
                            unique);
}

// The deepest point of the rim: the end cap deeper along -n (as the capsule), then the rim
// point r w below the cap's centre, w = (n - (n.u) u) / |n - (n.u) u| (n across the axis);
// a cylinder standing face-on (|n - (n.u) u| <= kParallelTolerance) gives the cap's centre.
SignedDistance signed_distance(const Cylinder& a, const SE3& g_wa, const HalfSpace& b) {
  const SE3 g_ws = g_wa * a.g_bs();
  const Vec3& n = b.n();
  const Vec3 u = g_ws.R.col(2);
  const double nu = n.dot(u);
  const double s = -sign_or_zero(nu, kParallelTolerance);
  const Vec3 cap = g_ws.x + s * a.half_length() * u;
  const Mat312 J_u = direction_jacobian(g_wa, u, kColA);
  const Vec3 m = n - nu * u;  // n's part across the axis
  const double m_norm = m.norm();
  const bool face_on = m_norm <= kParallelTolerance;
  Vec3 p_a = cap;
  Mat312 J_pa = point_jacobian(g_wa, cap, kColA);
  if (!face_on) {
    const Vec3 w = m / m_norm;
    p_a -= a.radius() * w;
    // d m = -(n . d u) u - (n . u) d u; the rim point slides round as the axis turns.
    const Mat312 J_m = -u * (n.transpose() * J_u) - nu * J_u;
    J_pa -= a.radius() * unit_jacobian(w, m_norm, J_m);
  }
  // Danskin: phi moves with the rim point held on the body.
  const Row12 J_phi = n.transpose() * point_jacobian(g_wa, p_a, kColA);
  const auto feature = static_cast<std::uint32_t>(s + 1.0) + (face_on ? 3u : 0u);
  return point_on_halfspace(b, b.distance(p_a), p_a, J_phi, J_pa, feature,
                            s != 0.0 && !face_on);
}

// ---- pairs of shapes --------------------------------------------------------------------

SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Sphere& b,
                               const SE3& g_wb) {
  const Vec3 c_a = g_wa.act(a.g_bs().x), c_b = g_wb.act(b.g_bs().x);
  const Balls r = balls(c_a, a.radius(), point_jacobian(g_wa, c_a, kColA), c_b, b.radius(),
                        point_jacobian(g_wb, c_b, kColB), Vec3::UnitZ());
  return finish(r, r.coincident ? 1u : 0u, !r.coincident);
}

// The sphere's centre against the closest point of the capsule's segment.
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Capsule& b,
                               const SE3& g_wb) {
  const Vec3 c = g_wa.act(a.g_bs().x);
  const Mat312 J_c = point_jacobian(g_wa, c, kColA);
  const SE3 g_ws = g_wb * b.g_bs();
  const Vec3 u = g_ws.R.col(2);
  const SegmentPoint q =
      closest_on_segment(g_ws.x, u, b.half_length(), point_jacobian(g_wb, g_ws.x, kColB),
                         direction_jacobian(g_wb, u, kColB), c, J_c);
  // Where c is on the segment: the capsule's x axis, across its segment.
  const Balls r = balls(c, a.radius(), J_c, q.q, b.radius(), q.J_q, g_ws.R.col(0));
  return finish(r, static_cast<std::uint32_t>(q.state) + (r.coincident ? 3u : 0u),
                !r.coincident);
}

SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const Sphere& b,
                               const SE3& g_wb) {
  return swapped(signed_distance(b, g_wb, a, g_wa));
}

// The closest points x_a + s u_a and x_b + t u_b of the two segments, |s| <= h_a,
// |t| <= h_b: the common perpendicular when it falls inside both, else the best of the
// four edges of the (s, t) box (one parameter at an end, the other clamped); parallel
// segments (|u_a x u_b| <= kParallelTolerance) take the middle of their overlap.
// Derivatives: inside, s and t follow from the stationarity conditions
// u_a . d = 0 and u_b . d = 0 (d = P - Q) by the implicit function theorem; with one end
// fixed, the other parameter is the closest point to that end; at two ends, or parallel,
// both points are held on their bodies.
SignedDistance signed_distance(const Capsule& a, const SE3& g_wa, const Capsule& b,
                               const SE3& g_wb) {
  const SE3 g_sa = g_wa * a.g_bs(), g_sb = g_wb * b.g_bs();
  const Vec3 x_a = g_sa.x, x_b = g_sb.x, u_a = g_sa.R.col(2), u_b = g_sb.R.col(2);
  const double h_a = a.half_length(), h_b = b.half_length();
  const Vec3 r = x_a - x_b;
  const double c = u_a.dot(u_b);
  const Vec3 w = u_a.cross(u_b);
  const double sin_angle = w.norm();
  const bool parallel = sin_angle <= kParallelTolerance;

  double s = 0.0, t = 0.0;
  bool overlap = false;
  auto gap2 = [&](double s_, double t_) { return (r + s_ * u_a - t_ * u_b).squaredNorm(); };
  if (parallel) {
    // B spans [m - h_b, m + h_b] in A's parameter; the middle of the overlap with A's range.
    const double m = u_a.dot(x_b - x_a);
    const double lo = std::max(-h_a, m - h_b), hi = std::min(h_a, m + h_b);
    overlap = lo <= hi;
    s = std::clamp(0.5 * (lo + hi), -h_a, h_a);
    t = std::clamp(u_b.dot(x_a + s * u_a - x_b), -h_b, h_b);
  } else {
    // The lines' closest points, in cross-product form (accurate for nearly parallel
    // segments, where 1 - c^2 would cancel).
    const double det = w.squaredNorm();
    const double s0 = (-r).cross(u_b).dot(w) / det, t0 = (-r).cross(u_a).dot(w) / det;
    if (std::abs(s0) <= h_a && std::abs(t0) <= h_b) {
      s = s0;
      t = t0;
    } else {
      double best = -1.0;
      for (const double s_end : {-h_a, h_a}) {
        const double t_ = std::clamp(u_b.dot(r + s_end * u_a), -h_b, h_b);
        if (const double g = gap2(s_end, t_); best < 0.0 || g < best) best = g, s = s_end, t = t_;
      }
      for (const double t_end : {-h_b, h_b}) {
        const double s_ = std::clamp(-u_a.dot(r - t_end * u_b), -h_a, h_a);
        if (const double g = gap2(s_, t_end); g < best) best = g, s = s_, t = t_end;
      }
    }
  }
  const int s_state = clamp_state(s, -h_a, h_a), t_state = clamp_state(t, -h_b, h_b);

  const Mat312 J_xa = point_jacobian(g_wa, x_a, kColA), J_xb = point_jacobian(g_wb, x_b, kColB);
  const Mat312 J_ua = direction_jacobian(g_wa, u_a, kColA);
  const Mat312 J_ub = direction_jacobian(g_wb, u_b, kColB);
  const Vec3 P = x_a + s * u_a, Q = x_b + t * u_b;
  Mat312 J_P = J_xa + s * J_ua, J_Q = J_xb + t * J_ub;  // the points held on their bodies
  if (!parallel) {
    if (s_state == 0 && t_state == 0) {
      // [1, -c; c, -1] [ds; dt] = -[d.du_a + u_a.dr - t u_a.du_b; d.du_b + u_b.dr + s u_b.du_a]
      const Vec3 d = P - Q;
      const Mat312 J_r = J_xa - J_xb;
      const Row12 f1 = d.transpose() * J_ua + u_a.transpose() * J_r - t * u_a.transpose() * J_ub;
      const Row12 f2 = d.transpose() * J_ub + u_b.transpose() * J_r + s * u_b.transpose() * J_ua;
      const double det = -w.squaredNorm();  // c^2 - 1 = -(sin angle)^2, without cancellation
      const Row12 J_s = (f1 - c * f2) / det;
      const Row12 J_t = (c * f1 - f2) / det;
      J_P += u_a * J_s;
      J_Q += u_b * J_t;
    } else if (t_state == 0) {  // s at an end: t = u_b . (P - x_b)
      J_Q += u_b * ((P - x_b).transpose() * J_ub + u_b.transpose() * (J_P - J_xb));
    } else if (s_state == 0) {  // t at an end: s = u_a . (Q - x_a)
      J_P += u_a * ((Q - x_a).transpose() * J_ua + u_a.transpose() * (J_Q - J_xa));
    }
  }
  const double r_a = a.radius(), r_b = b.radius();
  const bool inside = !parallel && s_state == 0 && t_state == 0;
  Balls out;
  if (inside) {
    // P - Q lies along the common perpendicular w = u_a x u_b: take n = +-w / |w| and its
    // derivative from d w = d u_a x u_b + u_a x d u_b, which stay accurate as the
    // segments come close (n = d / |d| would divide a cancelled difference by |d|), and
    // define n where they cross (then signed from B's centre towards A's, else +w).
    const Vec3 w_hat = w / sin_angle;
    const double gap = r.dot(w_hat);  // = (P - Q) . w_hat
    const double sign = gap >= 0.0 ? 1.0 : -1.0;
    out.coincident = std::abs(gap) <= kCoincidentTolerance * (r_a + r_b);
    out.n = sign * w_hat;
    out.phi = std::abs(gap) - r_a - r_b;
    const Mat312 J_w = -SO3::hat(u_b) * J_ua + SO3::hat(u_a) * J_ub;
    out.J_n = sign * unit_jacobian(w_hat, sin_angle, J_w);
    out.J_phi = out.n.transpose() * (J_P - J_Q);
    out.p_a = P - r_a * out.n;
    out.p_b = Q + r_b * out.n;
    out.J_pa = J_P - r_a * out.J_n;
    out.J_pb = J_Q + r_b * out.J_n;
  } else {
    // Touching segments elsewhere (an end on the other segment, collinear overlap): the
    // common perpendicular, else A's x axis, from B's centre towards A's.
    Vec3 fallback = parallel ? Vec3(g_sa.R.col(0)) : Vec3(w / sin_angle);
    if (fallback.dot(r) < 0.0) fallback = -fallback;
    out = balls(P, r_a, J_P, Q, r_b, J_Q, fallback);
  }
  const bool chosen = parallel && overlap;
  const auto feature = static_cast<std::uint32_t>(s_state + 3 * t_state) +
                       (chosen ? 9u : 0u) + (out.coincident ? 18u : 0u);
  return finish(out, feature, !chosen && !out.coincident);
}

// Sphere centre c against the box: outside, the closest point of the box is c clamped to
// it in the box's frame; inside, the face of least depth (lowest axis on ties, the +
// face on the mid-plane). All of it in the box's frame, c_l = R^T (c - x) with (R, x) the
// box's world pose, then back to the world.
SignedDistance signed_distance(const Sphere& a, const SE3& g_wa, const Box& b, const SE3& g_wb) {
  const Vec3 c = g_wa.act(a.g_bs().x);
  const Mat312 J_c = point_jacobian(g_wa, c, kColA);
  const SE3 g_ws = g_wb * b.g_bs();
  const Mat3& R = g_ws.R;
  const Vec3& h = b.half_extents();
  const Vec3 c_l = R.transpose() * (c - g_ws.x);
  // d c_l = R^T (d c - the velocity of the box's point at c).
  const Mat312 J_cl = R.transpose() * (J_c - point_jacobian(g_wb, c, kColB));

  Vec3 q_l = c_l;
  Mat3 follow = Mat3::Identity();  // which components of q_l follow c_l
  std::uint32_t feature = 0;
  bool unique = true;
  Vec3 n_l;
  double phi;
  Mat312 J_nl = Mat312::Zero();
  Row12 J_phi;
  const bool outside = (c_l.cwiseAbs() - h).maxCoeff() > 0.0;
  if (outside) {
    for (int i = 2; i >= 0; --i) {
      const int state = clamp_state(c_l[i], -h[i], h[i]);
      if (state != 0) {
        q_l[i] = state == 1 ? -h[i] : h[i];
        follow(i, i) = 0.0;
      }
      feature = 3 * feature + static_cast<std::uint32_t>(state);
    }
    const Vec3 d_l = c_l - q_l;  // nonzero exactly on the clamped components
    const double length = d_l.norm();
    n_l = d_l / length;
    phi = length - a.radius();
    const Mat312 J_dl = (Mat3::Identity() - follow) * J_cl;
    J_nl = unit_jacobian(n_l, length, J_dl);
    J_phi = n_l.transpose() * J_dl;
  } else {
    int face = 0;
    for (int i = 1; i < 3; ++i) {
      if (h[i] - std::abs(c_l[i]) < h[face] - std::abs(c_l[face])) face = i;
    }
    for (int i = 0; i < 3; ++i) {
      if (i != face && h[i] - std::abs(c_l[i]) == h[face] - std::abs(c_l[face])) unique = false;
    }
    if (c_l[face] == 0.0) unique = false;
    const double sign = c_l[face] >= 0.0 ? 1.0 : -1.0;
    q_l[face] = sign * h[face];
    follow(face, face) = 0.0;
    n_l = sign * Vec3::Unit(face);
    phi = sign * c_l[face] - h[face] - a.radius();
    J_phi = sign * J_cl.row(face);
    feature = 27u + 2u * static_cast<std::uint32_t>(face) + (sign > 0.0 ? 1u : 0u);
  }
  // Back to the world: n = R n_l turns with the box; p_b = x + R q_l is the point of the
  // box at q_l moved by the box, plus R d q_l.
  const Vec3 n = R * n_l;
  const Vec3 p_b = g_ws.act(q_l);
  const Mat312 J_n = direction_jacobian(g_wb, n, kColB) + R * J_nl;
  const Mat312 J_pb = point_jacobian(g_wb, p_b, kColB) + R * follow * J_cl;
  const Vec3 p_a = c - a.radius() * n;
  const Mat312 J_pa = J_c - a.radius() * J_n;
  return finish(phi, n, p_a, p_b, J_phi, J_n, J_pa, J_pb, feature, unique);
}

SignedDistance signed_distance(const Box& a, const SE3& g_wa, const Sphere& b, const SE3& g_wb) {
  return swapped(signed_distance(b, g_wb, a, g_wa));
}

// ---- any shape --------------------------------------------------------------------------

bool has_signed_distance(ShapeType a, ShapeType b) {
  auto is = [&](ShapeType x, ShapeType y) { return (a == x && b == y) || (a == y && b == x); };
  return is(ShapeType::Sphere, ShapeType::Sphere) || is(ShapeType::Sphere, ShapeType::Capsule) ||
         is(ShapeType::Capsule, ShapeType::Capsule) || is(ShapeType::Sphere, ShapeType::Box);
}

SignedDistance signed_distance(const Shape& a, const SE3& g_wa, const Shape& b,
                               const SE3& g_wb) {
  const ShapeType ta = shape_type(a), tb = shape_type(b);
  if (!has_signed_distance(ta, tb))
    throw InputError(std::string("signed distance: no closed form for the pair ") +
                     shape_type_name(ta) + "-" + shape_type_name(tb) +
                     " (closed forms: sphere-sphere, sphere-capsule, capsule-capsule, "
                     "sphere-box, and every shape against a half-space)");
  if (const auto* sa = std::get_if<Sphere>(&a)) {
    if (const auto* sb = std::get_if<Sphere>(&b)) return signed_distance(*sa, g_wa, *sb, g_wb);
    if (const auto* sb = std::get_if<Capsule>(&b)) return signed_distance(*sa, g_wa, *sb, g_wb);
    return signed_distance(*sa, g_wa, std::get<Box>(b), g_wb);
  }
  if (const auto* sa = std::get_if<Capsule>(&a)) {
    if (const auto* sb = std::get_if<Sphere>(&b)) return signed_distance(*sa, g_wa, *sb, g_wb);
    return signed_distance(*sa, g_wa, std::get<Capsule>(b), g_wb);
  }
  return signed_distance(std::get<Box>(a), g_wa, std::get<Sphere>(b), g_wb);
}

SignedDistance signed_distance(const Shape& a, const SE3& g_wa, const HalfSpace& b) {
  return std::visit([&](const auto& sa) { return signed_distance(sa, g_wa, b); }, a);
}

SignedDistance swapped(const SignedDistance& d) {
  SignedDistance s;
  s.phi = d.phi;
  s.n = -d.n;
  s.p_a = d.p_b;
  s.p_b = d.p_a;
  s.J_phi_a = d.J_phi_b;
  s.J_phi_b = d.J_phi_a;
  s.J_n_a = -d.J_n_b;
  s.J_n_b = -d.J_n_a;
  s.J_pa_a = d.J_pb_b;
  s.J_pa_b = d.J_pb_a;
  s.J_pb_a = d.J_pa_b;
  s.J_pb_b = d.J_pa_a;
  s.feature = d.feature;
  s.unique = d.unique;
  return s;
}

}  // namespace marsden::geometry
