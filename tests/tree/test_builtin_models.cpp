#include <cmath>
#include <numbers>
#include <string>

#include <Eigen/LU>
#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/midpoint.hpp"

namespace marsden::tree {
namespace {

double max_abs_h(const Model& model, Data& data, const VecX& q) {
  constraint_terms(model, data, q, nullptr);
  return model.num_constraint_rows() == 0 ? 0.0 : data.h.lpNorm<Eigen::Infinity>();
}

VecX prescribed_part(const Model& model, const VecX& q) {
  VecX out(model.num_prescribed());
  for (int i = 0; i < model.num_prescribed(); ++i)
    out[i] = q[model.prescribed_coords()[static_cast<std::size_t>(i)]];
  return out;
}

// Runs `steps` midpoint steps of size dt from (q0, qd0), the prescribed coordinates held at
// their initial values; every step must converge and keep the constraints to round-off.
// Returns the largest energy change.
double run_midpoint(const Model& model, const VecX& q0, const VecX& qd0, double dt, int steps) {
  Data data(model);
  MidpointOptions options;
  TreeState x = midpoint_initial_state(model, data, 0.0, q0, qd0);
  TreeState next = x;
  const VecX u = VecX::Zero(model.num_inputs());
  const VecX q_prescribed = prescribed_part(model, q0);
  const double e0 = energy(model, data, q0, qd0);
  double drift = 0.0;
  for (int k = 0; k < steps; ++k) {
    const NewtonStatus st = midpoint_step(model, data, options, dt, x, u, q_prescribed, next);
    EXPECT_TRUE(st.converged) << "step " << k << ": residual " << st.residual_norm << " after "
                              << st.iterations << " iterations";
    if (!st.converged) return drift;
    EXPECT_LE(max_abs_h(model, data, next.q), 1e-9) << "step " << k;
    // The velocity of the step, for an energy estimate that needs no Legendre inverse.
    const VecX qd = (next.q - x.q) / dt;
    drift = std::max(drift, std::abs(energy(model, data, 0.5 * (x.q + next.q), qd) - e0));
    x = next;
  }
  return drift;
}

// Sizes are checked before memory is spent. The reproducer of issue 23: at n = 2344 the
// paper's second-derivative cache (sum of squared ancestor counts, about 8.6e9 entries)
// overflowed an int and was written past its end; now its size is counted in size_t and
// refused against Data::memory_limit, and a chain too large for the dense work space is
// refused when its Data is made. Building a 100 000-link model stays linear in n.
TEST(BuiltinModels, LargeModelsAreRefusedBeforeTheirMemoryIsSpent) {
  const Model big = n_link_pendulum(2344);
  Data data(big);  // the dense work space fits (0.4 GiB)
  const VecX q = VecX::Constant(big.num_coords(), 0.1), qd = VecX::Zero(big.num_coords());
  try {
    lagrangian_terms(big, data, q, qd, true, LagrangianAlgorithm::PaperCached);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("paper's cached recursion"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GiB"), std::string::npos) << msg;
  }
  EXPECT_GT(data_memory_estimate(big, 2), kDataMemoryLimit);
  EXPECT_LT(data_memory_estimate(big, 0), kDataMemoryLimit);

  const Model huge = n_link_pendulum(100000);
  EXPECT_EQ(huge.coord_index("q100000"), 99999);
  try {
    Data too_big(huge);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dense work space"), std::string::npos) << e.what();
  }
}

// On a model small enough for it, the lazily built cache gives the spatial algorithm's
// terms.
TEST(BuiltinModels, PaperCacheBuiltOnFirstUseAgreesWithTheSpatialAlgorithm) {
  const Model m = n_link_pendulum(6);
  Data paper(m), spatial(m);
  EXPECT_TRUE(paper.anc.empty());
  const VecX q = VecX::LinSpaced(6, -0.5, 0.7), qd = VecX::LinSpaced(6, 0.3, -0.4);
  lagrangian_terms(m, paper, q, qd, true, LagrangianAlgorithm::PaperCached);
  lagrangian_terms(m, spatial, q, qd, true, LagrangianAlgorithm::Spatial);
  EXPECT_TRUE(spatial.ddg.empty());  // the spatial algorithm never builds the cache
  EXPECT_EQ(paper.anc.size(), std::size_t(m.num_frames()));
  EXPECT_LT((paper.M - spatial.M).norm(), 1e-12 * spatial.M.norm());
  EXPECT_LT((paper.L_qq - spatial.L_qq).norm(), 1e-12 * (1.0 + spatial.L_qq.norm()));
}

TEST(BuiltinModels, PendulumChainHasOneJointAndTwoFramesPerLink) {
  const Model m = n_link_pendulum(7);
  EXPECT_EQ(m.num_coords(), 7);
  EXPECT_EQ(m.num_dynamic(), 7);
  EXPECT_EQ(m.num_prescribed(), 0);
  EXPECT_EQ(m.num_frames(), 14);
  EXPECT_EQ(m.masses().size(), 7u);
  EXPECT_EQ(m.num_constraint_rows(), 0);
  EXPECT_EQ(m.coords()[m.coord_index("q7")].name, "q7");
  EXPECT_EQ(double_pendulum().num_coords(), 2);
  PendulumParams p;
  p.damping = 0.3;
  EXPECT_EQ(n_link_pendulum(3, p).coordinate_dampers().size(), 3u);
}

TEST(BuiltinModels, PendulumHangsAlongMinusZ) {
  PendulumParams p;
  p.length = 0.5;
  const Model m = n_link_pendulum(3, p);
  Data data(m);
  VecX q = VecX::Zero(3);
  frame_kinematics(m, data, q, VecX::Zero(3), 0);
  EXPECT_NEAR(data.g_s[m.frame_index("mass3")].x.z(), -1.5, 1e-15);
  // q1 = pi/2 turns the whole chain from -z towards +y (about x: y -> z, z -> -y).
  q[0] = std::numbers::pi / 2;
  frame_kinematics(m, data, q, VecX::Zero(3), 0);
  EXPECT_NEAR(data.g_s[m.frame_index("mass3")].x.y(), 1.5, 1e-14);
}

TEST(BuiltinModels, InvalidParametersAreInputErrors) {
  PendulumParams p;
  EXPECT_THROW(n_link_pendulum(0), InputError);
  p.mass = -1.0;
  EXPECT_THROW(n_link_pendulum(2, p), InputError);
  p = {};
  p.length = std::nan("");
  EXPECT_THROW(double_pendulum(p), InputError);
  p = {};
  p.link_inertia = -Mat3::Identity();
  EXPECT_THROW(double_pendulum(p), InputError);
  FourBarParams f;
  f.coupler = 0.0;
  EXPECT_THROW(four_bar(f), InputError);
  MarionetteParams mp;
  mp.damping = -0.1;
  EXPECT_THROW(marionette(mp), InputError);
}

TEST(BuiltinModels, FourBarHasThreeCoordinatesAndTwoClosureRows) {
  const Model m = four_bar();
  EXPECT_EQ(m.num_coords(), 3);
  EXPECT_EQ(m.num_dynamic(), 3);
  EXPECT_EQ(m.num_constraint_rows(), 2);
  EXPECT_EQ(m.masses().size(), 3u);
}

TEST(BuiltinModels, FourBarStateIsAssembledAtEveryCrankAngle) {
  const FourBarParams p;
  const Model m = four_bar(p);
  Data data(m);
  for (int branch : {1, -1})
    for (double angle = -3.0; angle <= 3.0; angle += 0.25) {
      const FourBarState s = four_bar_state(p, angle, 1.7, branch);
      constraint_terms(m, data, s.q, nullptr);
      EXPECT_LE(data.h.lpNorm<Eigen::Infinity>(), 1e-12) << angle << " " << branch;
      EXPECT_LE((data.Dh * s.qd).lpNorm<Eigen::Infinity>(), 1e-12) << angle << " " << branch;
      EXPECT_EQ(s.q[0], angle);
      EXPECT_EQ(s.qd[0], 1.7);
    }
}

TEST(BuiltinModels, FourBarThatCannotCloseIsAnInputError) {
  FourBarParams p;
  p.crank = 1.0;
  p.coupler = 0.5;
  p.rocker = 0.5;
  p.ground = 3.0;  // coupler + rocker < ground - crank: never closes
  EXPECT_THROW(four_bar_state(p, 0.0, 0.0), InputError);
  EXPECT_THROW(four_bar_state(FourBarParams{}, 0.0, 0.0, 0), InputError);
}

TEST(BuiltinModels, MarionetteHas36DynamicAnd15PrescribedCoordinates) {
  const Model m = marionette();
  EXPECT_EQ(m.num_dynamic(), 36);
  EXPECT_EQ(m.num_prescribed(), 15);
  EXPECT_EQ(m.num_coords(), 51);  // >= 40 degrees of freedom, as in the paper's §VIII
  EXPECT_EQ(m.num_constraint_rows(), 5);
  EXPECT_EQ(m.coordinate_dampers().size(), 36u);
  double total = 0.0;
  for (const Mass& mass : m.masses()) total += mass.mass;
  EXPECT_NEAR(total, MarionetteParams{}.total_mass, 1e-12);
  for (const char* s : {"head", "left_hand", "right_hand", "left_knee", "right_knee"})
    EXPECT_TRUE(m.coords()[m.coord_index(std::string(s) + "_z")].prescribed) << s;
}

TEST(BuiltinModels, MarionetteConfigurationsSatisfyTheStrings) {
  const Model m = marionette();
  Data data(m);
  const VecX rest = marionette_rest_configuration(m);
  EXPECT_LE(max_abs_h(m, data, rest), 1e-12);
  // Independent strings: Dh has full row rank, else the step's Newton matrix is singular.
  constraint_terms(m, data, rest, nullptr);
  EXPECT_EQ(Eigen::FullPivLU<MatX>(data.Dh).rank(), 5);
    // The head string hangs above the head.
  EXPECT_GT(rest[m.coord_index("head_z")], 0.6);
  // Any body pose: the string ends follow.
  VecX q = VecX::Zero(m.num_coords());
  for (int i : m.dynamic_coords()) q[i] = 0.2 * std::sin(1.3 * i);
  const VecX posed = marionette_configuration(m, q);
  EXPECT_LE(max_abs_h(m, data, posed), 1e-12);
  for (int i : m.dynamic_coords()) EXPECT_EQ(posed[i], q[i]);
  EXPECT_THROW(marionette_rest_configuration(double_pendulum()), InputError);
}

TEST(BuiltinModels, MidpointStepsConvergeOnEveryModel) {
  {
    SCOPED_TRACE("double pendulum");
    const Model m = double_pendulum();
    VecX q0(2), qd0(2);
    q0 << 1.0, -0.5;
    qd0 << 0.0, 1.0;
    EXPECT_LE(run_midpoint(m, q0, qd0, 0.01, 100), 1e-2);
  }
  {
    SCOPED_TRACE("19-link pendulum");
    const Model m = n_link_pendulum(19);
    const VecX q0 = VecX::Constant(19, 0.3);
    run_midpoint(m, q0, VecX::Zero(19), 0.01, 20);
  }
  {
    SCOPED_TRACE("four-bar");
    const FourBarParams p;
    const Model m = four_bar(p);
    const FourBarState s = four_bar_state(p, 0.5, 2.0);
    run_midpoint(m, s.q, s.qd, 0.01, 50);
  }
  {
    SCOPED_TRACE("marionette");
    const Model m = marionette();
    run_midpoint(m, marionette_rest_configuration(m), VecX::Zero(m.num_coords()), 0.01, 20);
  }
}

}  // namespace
}  // namespace marsden::tree

namespace marsden::tree {
namespace {

std::string build_error(ModelBuilder& b) {
  try {
    b.build();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A dynamic coordinate that moves no mass has a zero row in M: refused at build, naming it
// (it used to be accepted, and its given velocity was silently lost). A point mass on a
// revolute axis moves no mass either; a coupling, a kinematic coordinate or a mass off the
// axis make the model valid.
TEST(ModelBuilder, CoordinateThatMovesNoMassIsAnInputError) {
  auto cart_and_spin = [](const Vec3& spin_com, bool kinematic) {
    ModelBuilder b;
    const int cart = b.add_joint_frame("cart", kWorld, Transform::Ty, "y");
    b.add_mass(cart, 2.0, Vec3::Zero(), Mat3::Zero());
    const int spin = b.add_joint_frame("spin", cart, Transform::Rz, "theta", kinematic);
    if (!spin_com.hasNaN()) b.add_mass(spin, 0.5, spin_com, Mat3::Zero());
    return b;
  };
  const Vec3 none = Vec3::Constant(std::nan(""));
  for (const Vec3& com : {none, Vec3(0.0, 0.0, 0.3)}) {
    ModelBuilder b = cart_and_spin(com, false);
    const std::string msg = build_error(b);
    EXPECT_NE(msg.find("coordinate 'theta' moves no mass"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("'y'"), std::string::npos) << msg;
  }
  ModelBuilder off_axis = cart_and_spin(Vec3(0.2, 0.0, 0.0), false);
  EXPECT_EQ(build_error(off_axis), "");
  ModelBuilder kinematic = cart_and_spin(none, true);
  EXPECT_EQ(build_error(kinematic), "");
  ModelBuilder coupled = cart_and_spin(none, false);
  coupled.add_coordinate_coupling_constraint("c", coupled.coord_index("theta"),
                                             coupled.coord_index("y"), 2.0, 0.0);
  EXPECT_EQ(build_error(coupled), "");
}

}  // namespace
}  // namespace marsden::tree
