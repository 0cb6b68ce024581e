// The tree paper's recursion (§III-VI): frame poses g_s,k and body velocities v_k with
// their first and second derivatives along the ancestors, eqs. (1)-(11), and the
// Lagrangian terms built from them, eqs. (15)-(18). Body velocities use the intrinsic form
// v_k = Ad_{g_k^-1} v_par(k) + xi_k qd_k that the paper mentions after eq. (6); for a
// primitive g_k = exp(xi_k q_k), d/dq_k Ad_{g_k^-1} = -ad_{xi_k} Ad_{g_k^-1}.
#include "marsden/tree/dynamics.hpp"
#include "tree/detail.hpp"

namespace marsden::tree {

namespace {

SE3 local_transform(const Frame& f, const VecX& q) {
  if (f.type == Transform::Const) return f.constant;
  return detail::primitive(f.type, f.coord >= 0 ? q[f.coord] : f.value);
}

Vec6 frame_axis(const Frame& f) {
  return f.coord >= 0 ? detail::primitive_axis(f.type) : Vec6::Zero();
}

int anc_position(const Data& data, int frame, int coord) {
  const auto& a = data.anc[frame];
  for (std::size_t t = 0; t < a.size(); ++t)
    if (a[t] == coord) return static_cast<int>(t);
  return -1;
}

// The body-frame spatial inertia of a mass, (omega, v) ordering.
Mat6 body_inertia(const Mass& mass) {
  const Mat3 c_hat = SO3::hat(mass.com);
  Mat6 M;
  M.topLeftCorner<3, 3>() = mass.inertia - mass.mass * c_hat * c_hat;
  M.topRightCorner<3, 3>() = mass.mass * c_hat;
  M.bottomLeftCorner<3, 3>() = -mass.mass * c_hat;
  M.bottomRightCorner<3, 3>() = mass.mass * Mat3::Identity();
  return M;
}

// The recursion without a cache: every quantity recomputed from the root on each request,
// as a symbolic expansion of the same equations would (the paper's Fig. 3, dotted line).
struct Uncached {
  const Model& model;
  const VecX& q;
  const VecX& qd;

  Mat4 pose(int k) const {
    const Mat4 local = local_transform(model.frames()[k], q).matrix();
    const int p = model.frames()[k].parent;
    return p == kWorld ? local : Mat4(pose(p) * local);
  }
  // eq. (3)
  Mat4 dg(int k, int i) const {
    const Frame& f = model.frames()[k];
    if (f.coord == i) return pose(k) * SE3::hat(frame_axis(f));
    if (f.parent == kWorld) return Mat4::Zero();
    return dg(f.parent, i) * local_transform(f, q).matrix();
  }
  // eq. (4)
  Mat4 ddg(int k, int i, int j) const {
    const Frame& f = model.frames()[k];
    const Mat4 xi_hat = SE3::hat(frame_axis(f));
    if (f.coord == i && f.coord == j) return pose(k) * xi_hat * xi_hat;
    if (f.parent == kWorld) return Mat4::Zero();
    const Mat4 local = local_transform(f, q).matrix();
    if (f.coord == i) return dg(f.parent, j) * local * xi_hat;
    if (f.coord == j) return dg(f.parent, i) * local * xi_hat;
    return ddg(f.parent, i, j) * local;
  }
  // eq. (6)
  Vec6 vb(int k) const {
    const Frame& f = model.frames()[k];
    const Vec6 own = f.coord >= 0 ? Vec6(frame_axis(f) * qd[f.coord]) : Vec6::Zero();
    if (f.parent == kWorld) return own;
    return local_transform(f, q).inverse().Ad() * vb(f.parent) + own;
  }
  // eq. (7)
  Vec6 dvb_dq(int k, int i) const {
    const Frame& f = model.frames()[k];
    if (f.parent == kWorld) return Vec6::Zero();
    const Mat6 A = local_transform(f, q).inverse().Ad();
    if (f.coord == i) return -SE3::ad(frame_axis(f)) * A * vb(f.parent);
    return A * dvb_dq(f.parent, i);
  }
  Vec6 dvb_dqd(int k, int i) const {
    const Frame& f = model.frames()[k];
    if (f.coord == i) return frame_axis(f);
    if (f.parent == kWorld) return Vec6::Zero();
    return local_transform(f, q).inverse().Ad() * dvb_dqd(f.parent, i);
  }
  // eq. (8)
  Vec6 ddvb_dqdq(int k, int i, int j) const {
    const Frame& f = model.frames()[k];
    if (f.parent == kWorld) return Vec6::Zero();
    const Mat6 A = local_transform(f, q).inverse().Ad();
    const Mat6 ad_xi = SE3::ad(frame_axis(f));
    if (f.coord == i && f.coord == j) return ad_xi * ad_xi * A * vb(f.parent);
    if (f.coord == i) return -ad_xi * A * dvb_dq(f.parent, j);
    if (f.coord == j) return -ad_xi * A * dvb_dq(f.parent, i);
    return A * ddvb_dqdq(f.parent, i, j);
  }
  // eqs. (9)-(10): d2 v / dqd_i dq_j
  Vec6 ddvb_dqd_dq(int k, int i, int j) const {
    const Frame& f = model.frames()[k];
    if (f.coord == i || f.parent == kWorld) return Vec6::Zero();
    const Mat6 A = local_transform(f, q).inverse().Ad();
    if (f.coord == j) return -SE3::ad(frame_axis(f)) * A * dvb_dqd(f.parent, i);
    return A * ddvb_dqd_dq(f.parent, i, j);
  }
};

// The same quantities read from the cache filled by frame_kinematics; positions t, u index
// the frame's ancestor coordinates.
struct Cached {
  const Data& data;
  Mat4 pose(int k) const { return data.g_s[k].matrix(); }
  const Mat4& dg(int k, int t) const { return data.dg[data.d1_offset[k] + t]; }
  const Mat4& ddg(int k, int t, int u) const {
    return data.ddg[data.d2_offset[k] + std::size_t(t) * data.anc[k].size() + u];
  }
  const Vec6& vb(int k) const { return data.v_b[k]; }
  const Vec6& dvb_dq(int k, int t) const { return data.dvb_dq[data.d1_offset[k] + t]; }
  const Vec6& dvb_dqd(int k, int t) const { return data.dvb_dqd[data.d1_offset[k] + t]; }
  const Vec6& ddvb_dqdq(int k, int t, int u) const {
    return data.ddvb_dqdq[data.d2_offset[k] + std::size_t(t) * data.anc[k].size() + u];
  }
  const Vec6& ddvb_dqd_dq(int k, int t, int u) const {
    return data.ddvb_dqd_dq[data.d2_offset[k] + std::size_t(t) * data.anc[k].size() + u];
  }
};

// eqs. (15)-(18) summed over the masses. Source answers by ancestor position (Cached) or
// by coordinate (Uncached); `index` maps a position to what Source expects.
template <class Source, class Index>
void assemble(const Model& model, Data& data, const Source& src, Index index,
              bool second_order) {
  const Vec3& g = model.gravity();
  for (const Mass& mass : model.masses()) {
    const int k = mass.frame;
    if (model.frame_joint(k) < 0) continue;  // fixed to the world: constant energy
    const auto& anc = data.anc[k];
    const int na = static_cast<int>(anc.size());
    const Mat6 M = body_inertia(mass);
    const Vec6 v = src.vb(k);
    const Vec6 Mv = M * v;
    const Vec4 com(mass.com.x(), mass.com.y(), mass.com.z(), 1.0);
    data.kinetic += 0.5 * v.dot(Mv);
    data.potential -= mass.mass * g.dot((src.pose(k) * com).template head<3>());
    for (int t = 0; t < na; ++t) {
      const int i = anc[t];
      const Vec6 dv_i = src.dvb_dq(k, index(k, t));
      const Vec6 dvd_i = src.dvb_dqd(k, index(k, t));
      data.L_q[i] += Mv.dot(dv_i) + mass.mass * g.dot((src.dg(k, index(k, t)) * com).template head<3>());
      data.L_v[i] += Mv.dot(dvd_i);
      if (!second_order) continue;
      const Vec6 M_dv_i = M * dv_i, M_dvd_i = M * dvd_i;
      for (int u = 0; u < na; ++u) {
        const int j = anc[u];
        const Vec6 dv_j = src.dvb_dq(k, index(k, u));
        const Vec6 dvd_j = src.dvb_dqd(k, index(k, u));
        data.L_qq(i, j) += dv_j.dot(M_dv_i) + Mv.dot(src.ddvb_dqdq(k, index(k, t), index(k, u))) +
                           mass.mass * g.dot((src.ddg(k, index(k, t), index(k, u)) * com).template head<3>());
        data.L_qv(i, j) += dvd_j.dot(M_dv_i) + Mv.dot(src.ddvb_dqd_dq(k, index(k, u), index(k, t)));
        data.M(i, j) += dvd_j.dot(M_dvd_i);
      }
    }
  }
}

}  // namespace

void frame_kinematics(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      int order) {
  if (order >= 1) detail::ensure_paper_cache(model, data, order);
  const auto& frames = model.frames();
  for (int k = 0; k < model.num_frames(); ++k) {
    const Frame& f = frames[k];
    const int p = f.parent;
    const SE3 local = local_transform(f, q);
    const Mat4 local_m = local.matrix();
    const Vec6 xi = frame_axis(f);
    const Mat6 A = local.inverse().Ad();
    const Vec6 v_par = p == kWorld ? Vec6::Zero() : data.v_b[p];
    data.g_s[k] = p == kWorld ? local : data.g_s[p] * local;                    // eq. (1)
    data.v_b[k] = A * v_par + (f.coord >= 0 ? Vec6(xi * qd[f.coord]) : Vec6::Zero());  // (6)
    if (order < 1) continue;
    const int na = static_cast<int>(data.anc[k].size());
    const int own = f.coord >= 0 ? na - 1 : -1;  // position of the frame's own coordinate
    const std::size_t o1 = data.d1_offset[k], o1p = p == kWorld ? 0 : data.d1_offset[p];
    const Mat4 xi_hat = SE3::hat(xi);
    const Mat6 ad_xi = SE3::ad(xi);
    const Vec6 A_v_par = A * v_par;
    for (int t = 0; t < na; ++t) {
      if (t == own) {  // eqs. (3), (7)
        data.dg[o1 + t] = data.g_s[k].matrix() * xi_hat;
        data.dvb_dq[o1 + t] = -ad_xi * A_v_par;
        data.dvb_dqd[o1 + t] = xi;
      } else {
        data.dg[o1 + t] = data.dg[o1p + t] * local_m;
        data.dvb_dq[o1 + t] = A * data.dvb_dq[o1p + t];
        data.dvb_dqd[o1 + t] = A * data.dvb_dqd[o1p + t];
      }
    }
    if (order < 2) continue;
    const std::size_t o2 = data.d2_offset[k], o2p = p == kWorld ? 0 : data.d2_offset[p];
    const int np = na - (own >= 0 ? 1 : 0);  // the parent's ancestor count
    for (int t = 0; t < na; ++t) {
      for (int u = 0; u < na; ++u) {
        const std::size_t at = o2 + std::size_t(t) * na + u;
        if (t == own && u == own) {  // eqs. (4), (8)
          data.ddg[at] = data.g_s[k].matrix() * xi_hat * xi_hat;
          data.ddvb_dqdq[at] = ad_xi * ad_xi * A_v_par;
          data.ddvb_dqd_dq[at].setZero();
        } else if (t == own) {
          data.ddg[at] = data.dg[o1p + u] * local_m * xi_hat;
          data.ddvb_dqdq[at] = -ad_xi * A * data.dvb_dq[o1p + u];
          data.ddvb_dqd_dq[at].setZero();  // xi_k does not depend on q
        } else if (u == own) {
          data.ddg[at] = data.dg[o1p + t] * local_m * xi_hat;
          data.ddvb_dqdq[at] = -ad_xi * A * data.dvb_dq[o1p + t];
          data.ddvb_dqd_dq[at] = -ad_xi * A * data.dvb_dqd[o1p + t];  // eqs. (9)-(10)
        } else {
          const std::size_t ap = o2p + std::size_t(t) * np + u;
          data.ddg[at] = data.ddg[ap] * local_m;
          data.ddvb_dqdq[at] = A * data.ddvb_dqdq[ap];
          data.ddvb_dqd_dq[at] = A * data.ddvb_dqd_dq[ap];
        }
      }
    }
  }
}

Mat4 frame_pose_dq(const Data& data, int frame, int i) {
  const int t = anc_position(data, frame, i);
  return t < 0 ? Mat4::Zero() : data.dg[data.d1_offset[frame] + t];
}

Mat4 frame_pose_dqdq(const Data& data, int frame, int i, int j) {
  const int t = anc_position(data, frame, i), u = anc_position(data, frame, j);
  if (t < 0 || u < 0) return Mat4::Zero();
  return data.ddg[data.d2_offset[frame] + std::size_t(t) * data.anc[frame].size() + u];
}

Vec6 body_velocity_dq(const Data& data, int frame, int i) {
  const int t = anc_position(data, frame, i);
  return t < 0 ? Vec6::Zero() : data.dvb_dq[data.d1_offset[frame] + t];
}

Vec6 body_velocity_dqd(const Data& data, int frame, int i) {
  const int t = anc_position(data, frame, i);
  return t < 0 ? Vec6::Zero() : data.dvb_dqd[data.d1_offset[frame] + t];
}

Vec6 body_velocity_dqdq(const Data& data, int frame, int i, int j) {
  const int t = anc_position(data, frame, i), u = anc_position(data, frame, j);
  if (t < 0 || u < 0) return Vec6::Zero();
  return data.ddvb_dqdq[data.d2_offset[frame] + std::size_t(t) * data.anc[frame].size() + u];
}

Vec6 body_velocity_dqd_dq(const Data& data, int frame, int i, int j) {
  const int t = anc_position(data, frame, i), u = anc_position(data, frame, j);
  if (t < 0 || u < 0) return Vec6::Zero();
  return data.ddvb_dqd_dq[data.d2_offset[frame] + std::size_t(t) * data.anc[frame].size() + u];
}

namespace detail {

void paper_lagrangian(const Model& model, Data& data, const VecX& q, const VecX& qd,
                      bool second_order, bool cached) {
  if (cached) {
    frame_kinematics(model, data, q, qd, second_order ? 2 : 1);
    assemble(model, data, Cached{data}, [](int, int t) { return t; }, second_order);
  } else {
    ensure_paper_cache(model, data, 0);
    assemble(model, data, Uncached{model, q, qd},
             [&data](int k, int t) { return data.anc[k][t]; }, second_order);
  }
}

}  // namespace detail

}  // namespace marsden::tree
