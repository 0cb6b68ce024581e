// The chains and engines of the peer harnesses (peers.cpp, work_precision.cpp): the same
// chain built with identical parameters in Marsden's tree and maximal engines, Pinocchio
// (ABA, stepped here by RK4 or semi-implicit Euler on preallocated vectors) and MuJoCo
// (mj_step with the integrator asked for), and the thread CPU clock both harnesses time by.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <mujoco/mujoco.h>

#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/energy.hpp>
#include <pinocchio/multibody/data.hpp>
#include <pinocchio/multibody/model.hpp>

#include "marsden/maximal/integrator.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/midpoint.hpp"

namespace peers {

constexpr double kDt = 0.01;
constexpr double kGravity = 9.81;
inline double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The chain every engine builds: joint axis, link length, point of the mass on the link
// (from the joint, along the link), mass, inertia about the centre of mass (diagonal).
struct Chain {
  int n;
  int axis;  // 0: x, 1: y
  double length = 1.0;
  double com = 1.0;
  double mass = 1.0;
  Eigen::Vector3d inertia = Eigen::Vector3d::Zero();
  double q0;
};

// MuJoCo refuses bodies without rotational inertia, so the tree's point masses become
// small spheres (radius 0.05 m) in every engine.
constexpr double kBallInertia = 0.4 * 1.0 * 0.05 * 0.05;

inline Chain tree_chain(int n) { return {n, 0, 1.0, 1.0, 1.0, Eigen::Vector3d::Constant(kBallInertia), 0.3}; }

inline marsden::tree::Model tree_model(int n) {
  marsden::tree::PendulumParams p;
  p.link_inertia = kBallInertia * marsden::Mat3::Identity();
  return marsden::tree::n_link_pendulum(n, p);
}

inline Chain rod_chain(int n) {
  const marsden::maximal::ChainOptions o;
  const double across = o.link_mass * (3.0 * o.link_radius * o.link_radius +
                                       o.link_length * o.link_length) / 12.0;
  const double along = 0.5 * o.link_mass * o.link_radius * o.link_radius;
  return {n, 1, o.link_length, 0.5 * o.link_length, o.link_mass,
          Eigen::Vector3d(across, across, along), o.initial_angle};
}

// An engine as the timing loop sees it: back to the initial state, one step, the first
// joint's angle.
struct Engine {
  std::function<void()> reset;
  std::function<void()> step;
  std::function<double()> first_angle;
};

// ---------------------------------------------------------------------------------------
// Pinocchio: the model built in code, ABA under classical RK4, no allocation per step.

struct PinocchioRk4 {
  pinocchio::Model model;
  std::unique_ptr<pinocchio::Data> data;
  Eigen::VectorXd q, v, tau, q_stage, v_stage, a1, a2, a3, a4, q_init;
  double dt = kDt;

  explicit PinocchioRk4(const Chain& c) {
    pinocchio::JointIndex parent = 0;
    for (int i = 0; i < c.n; ++i) {
      const pinocchio::SE3 placement(Eigen::Matrix3d::Identity(),
                                     Eigen::Vector3d(0.0, 0.0, i == 0 ? 0.0 : -c.length));
      const std::string name = "j" + std::to_string(i);
      parent = c.axis == 0 ? model.addJoint(parent, pinocchio::JointModelRX(), placement, name)
                           : model.addJoint(parent, pinocchio::JointModelRY(), placement, name);
      model.appendBodyToJoint(parent,
                              pinocchio::Inertia(c.mass, Eigen::Vector3d(0.0, 0.0, -c.com),
                                                 Eigen::Matrix3d(c.inertia.asDiagonal())),
                              pinocchio::SE3::Identity());
    }
    model.gravity.linear(Eigen::Vector3d(0.0, 0.0, -kGravity));
    data = std::make_unique<pinocchio::Data>(model);
    for (Eigen::VectorXd* x : {&q, &v, &tau, &q_stage, &v_stage, &a1, &a2, &a3, &a4, &q_init})
      x->setZero(c.n);
    q_init[0] = c.q0;
    reset();
  }
  void reset() {
    q = q_init;
    v.setZero();
  }
  // The wheel's libpinocchio_default exports no ABA instantiation: this call instantiates
  // the header template here, with the harness's flags (Release, as Marsden's library).
  void accel(const Eigen::VectorXd& qq, const Eigen::VectorXd& vv, Eigen::VectorXd& a) {
    a = pinocchio::aba(model, *data, qq, vv, tau);
  }
  // Semi-implicit (symplectic) Euler: v_k+1 = v_k + dt a(q_k, v_k), q_k+1 = q_k + dt v_k+1.
  void step_euler() {
    accel(q, v, a1);
    v += dt * a1;
    q += dt * v;
  }
  void step() {
    accel(q, v, a1);
    q_stage = q + 0.5 * dt * v;
    v_stage = v + 0.5 * dt * a1;
    accel(q_stage, v_stage, a2);
    q_stage = q + 0.5 * dt * v_stage;
    v_stage = v + 0.5 * dt * a2;
    accel(q_stage, v_stage, a3);
    q_stage = q + dt * v_stage;
    v_stage = v + dt * a3;
    accel(q_stage, v_stage, a4);
    q += dt * v + (dt * dt / 6.0) * (a1 + a2 + a3);
    v += (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
  }
  double energy(const Eigen::VectorXd& qq, const Eigen::VectorXd& vv) {
    return pinocchio::computeKineticEnergy(model, *data, qq, vv) +
           pinocchio::computePotentialEnergy(model, *data, qq);
  }
};

// ---------------------------------------------------------------------------------------
// MuJoCo: the model from an MJCF string written here, mj_step with its RK4 integrator
// (or another: set m->opt.integrator).

inline std::string mjcf(const Chain& c, double dt) {
  const char* axis = c.axis == 0 ? "1 0 0" : "0 1 0";
  char buf[512];
  std::string bodies;
  for (int i = 0; i < c.n; ++i) {
    std::snprintf(buf, sizeof buf,
                  "<body pos=\"0 0 %g\"><joint type=\"hinge\" axis=\"%s\"/>"
                  "<inertial pos=\"0 0 %.17g\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>",
                  i == 0 ? 0.0 : -c.length, axis, -c.com, c.mass, c.inertia.x(), c.inertia.y(),
                  c.inertia.z());
    bodies += buf;
  }
  for (int i = 0; i < c.n; ++i) bodies += "</body>";
  std::snprintf(buf, sizeof buf,
                "<mujoco><option timestep=\"%.17g\" integrator=\"RK4\" gravity=\"0 0 %.17g\">"
                "<flag contact=\"disable\"/></option><worldbody>",
                dt, -kGravity);
  return buf + bodies + "</worldbody></mujoco>";
}

struct MujocoRk4 {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  double q0;

  MujocoRk4(const Chain& c, double dt) : q0(c.q0) {
    const std::string xml = mjcf(c, dt);
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    mj_addBufferVFS(vfs.get(), "chain.xml", xml.data(), static_cast<int>(xml.size()));
    char error[1000] = "";
    m = mj_loadXML("chain.xml", vfs.get(), error, sizeof error);
    mj_deleteVFS(vfs.get());
    if (!m) throw std::runtime_error(std::string("MuJoCo could not load the chain: ") + error);
    d = mj_makeData(m);
    reset();
  }
  ~MujocoRk4() {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  MujocoRk4(const MujocoRk4&) = delete;
  MujocoRk4& operator=(const MujocoRk4&) = delete;
  void reset() {
    mj_resetData(m, d);
    d->qpos[0] = q0;
  }
  void step() { mj_step(m, d); }
  double energy(const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    m->opt.enableflags |= mjENBL_ENERGY;
    for (int i = 0; i < m->nq; ++i) {
      d->qpos[i] = q[i];
      d->qvel[i] = v[i];
    }
    mj_forward(m, d);
    m->opt.enableflags &= ~mjENBL_ENERGY;
    const double e = d->energy[0] + d->energy[1];
    reset();
    return e;
  }
};

// ---------------------------------------------------------------------------------------
// Marsden's engines.

struct TreeVi {
  marsden::tree::Model model;
  marsden::tree::Data data;
  marsden::tree::MidpointOptions options;  // tolerance 1e-10
  marsden::tree::TreeState x0, x, next;
  marsden::tree::VecX none;
  double dt;

  TreeVi(int n, double dt_) : model(tree_model(n)), data(model), dt(dt_) {
    marsden::tree::VecX q = marsden::tree::VecX::Zero(n);
    q[0] = tree_chain(n).q0;
    x0 = marsden::tree::midpoint_initial_state(model, data, 0.0, q, marsden::tree::VecX::Zero(n));
    reset();
  }
  void reset() { x = x0; }
  void step() {
    if (!marsden::tree::midpoint_step(model, data, options, dt, x, none, none, next).converged)
      throw std::runtime_error("tree VI: Newton did not converge");
    std::swap(x, next);
  }
};

struct MaximalVi {
  marsden::maximal::Mechanism mech;
  marsden::maximal::Data initial, data;
  marsden::maximal::StepOptions options;  // tolerance 1e-10

  MaximalVi(int n, double dt)
      : mech(marsden::maximal::pendulum_chain(n)),
        initial(mech.model, mech.state),
        data(initial) {
    options.dt = dt;
  }
  void reset() { data = initial; }
  void step() {
    const auto status = marsden::maximal::step(mech.model, data, options);
    if (!status.ok())
      throw std::runtime_error(std::string("maximal VI: ") + describe(status.failure));
  }
  // The first rod's angle about y, from its orientation.
  double first_angle() const {
    const marsden::Mat3 R = data.state[0].q.matrix();
    return std::atan2(R(0, 2), R(2, 2));
  }
};

inline double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t m = x.size() / 2;
  return x.size() % 2 ? x[m] : 0.5 * (x[m - 1] + x[m]);
}

}  // namespace peers
