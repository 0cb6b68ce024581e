// Loading a generated system in full coordinates (nonholonomic/generated.hpp) without
// CasADi: a shared object written by hand to the ABI, compiled here with the system C
// compiler, must be the hand-written Chaplygin sleigh (the same M, mu, dmu/dq and GNI and
// RATTLE steps, without allocating); bad objects are refused naming the file and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <Eigen/Cholesky>

#include "marsden/error.hpp"
#include "marsden/nonholonomic/generated.hpp"
#include "marsden/nonholonomic/integrators.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::nonholonomic {
namespace {

namespace fs = std::filesystem;

// The sleigh with J = 0.3, m = 2, a = 0.4 in q = (theta, x, y); DOF and ABI set by #define.
constexpr const char* kSleigh = R"(
#include <math.h>
int marsden_nh_abi_version(void) { return ABI; }
int marsden_nh_dof(void) { return DOF; }
int marsden_nh_num_constraints(void) { return 1; }
int marsden_nh_num_controls(void) { return 0; }
int marsden_nh_prescribed(int i) { return 0; }
const char* marsden_nh_coordinate_name(int i) { return i == 0 ? "theta" : 0; }
static void zero(double* a, int k) { int i; for (i = 0; i < k; ++i) a[i] = 0.0; }
int marsden_nh_mass(const double* q, double* M) { zero(M, 9); M[0] = 0.3; M[4] = 2; M[8] = 2; return 0; }
int marsden_nh_mass_derivative(int i, const double* q, double* dM) { zero(dM, 9); return i < 0 || i > 2; }
int marsden_nh_mass_second_derivative(int i, int j, const double* q, double* ddM) { zero(ddM, 9); return 0; }
int marsden_nh_potential(const double* q, double* V, double* g, double* H) {
  if (V) *V = 0.0; if (g) zero(g, 3); if (H) zero(H, 9); return 0;
}
int marsden_nh_constraint(const double* q, double* mu) {
  mu[0] = 0.4; mu[1] = -sin(q[0]); mu[2] = cos(q[0]); return 0;
}
int marsden_nh_constraint_derivative(int i, const double* q, double* dmu) {
  zero(dmu, 3);
  if (i == 0) { dmu[1] = -cos(q[0]); dmu[2] = -sin(q[0]); }
  return i < 0 || i > 2;
}
int marsden_nh_control_directions(const double* q, double* B) { return 0; }
#ifdef FORCE
/* Viscous drag Q = -FORCE M qdot (FORCE = NAN: a force that is not finite). */
int marsden_nh_force(const double* q, const double* qdot, double* Q, double* dQ_dq,
                     double* dQ_dqdot) {
  const double m[3] = {0.3, 2, 2};
  int i;
  for (i = 0; i < 3; ++i) Q[i] = -FORCE * m[i] * qdot[i];
  if (dQ_dq) zero(dQ_dq, 9);
  if (dQ_dqdot) { zero(dQ_dqdot, 9); for (i = 0; i < 3; ++i) dQ_dqdot[4 * i] = -FORCE * m[i]; }
  return 0;
}
#endif
)";

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("marsden-test-generated-nh-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

fs::path compile(const TempDir& dir, const std::string& name, int abi, int dof,
                 const std::string& defines = "") {
  const fs::path c_file = dir.path / (name + ".c"), library = dir.path / (name + ".so");
  std::ofstream(c_file) << "#define ABI " << abi << "\n#define DOF " << dof << "\n" << defines
                        << kSleigh;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "' -lm";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

TEST(GeneratedNonholonomic, HandWrittenObjectIsTheSleigh) {
  const TempDir dir;
  const auto model = GeneratedNonholonomicModel::load(compile(dir, "sleigh", 1, 3));
  const ChaplyginSleigh hand(0.3, 2.0, 0.4);
  ASSERT_EQ(model->dof(), 3);
  EXPECT_EQ(model->num_constraints(), 1);
  EXPECT_EQ(model->coordinate_name(0), "theta");
  EXPECT_EQ(model->coordinate_name(1), "q1");  // no name given
  EXPECT_FALSE(model->has_prescribed());
  EXPECT_FALSE(model->has_force());  // an object without marsden_nh_force loads, unforced
  NhVec q(3), p(3), q1, p1, q1_hand, p1_hand;
  q << 0.7, 1.0, -2.0;
  NhMat A, B;
  model->mass(q, A);
  hand.mass(q, B);
  EXPECT_EQ(A, B);
  model->constraint(q, A);
  hand.constraint(q, B);
  EXPECT_EQ(A, B);
  for (int i = 0; i < 3; ++i) {
    model->constraint_derivative(q, i, A);
    hand.constraint_derivative(q, i, B);
    EXPECT_EQ(A, B) << i;
  }
  EXPECT_THROW(model->constraint_derivative(q, 5, A), SolverError);  // index out of range
  model->check_at(q, "q");
  // One step of each method, bit for bit, and no allocation.
  const double c = std::cos(0.7), s = std::sin(0.7);
  NhVec qdot(3);
  qdot << 1.0, 0.8 * c + 0.4 * s, 0.8 * s - 0.4 * c;
  model->mass(q, A);
  p = A * qdot;
  const NhVec u = NhVec::Zero(0);
  int allocations = test_support::allocations_during([&] {
    q1 = q + 0.01 * qdot;
    gni_step(*model, 0.01, q, p, u, q1, p1);
  });
  EXPECT_EQ(allocations, 0);
  q1_hand = q + 0.01 * qdot;
  gni_step(hand, 0.01, q, p, u, q1_hand, p1_hand);
  EXPECT_EQ(q1, q1_hand);
  EXPECT_EQ(p1, p1_hand);
  q1 = q1_hand = q + 0.01 * qdot;
  rattle_step(*model, 0.01, q, p, u, q1, p1);
  rattle_step(hand, 0.01, q, p, u, q1_hand, p1_hand);
  EXPECT_EQ(q1, q1_hand);
  EXPECT_EQ(p1, p1_hand);
}

// The optional force entry: Q(q, qdot) and its derivatives as the object computes them, a
// dragged sleigh that loses energy; a force that is not finite is refused before stepping.
TEST(GeneratedNonholonomic, OptionalForceEntry) {
  const TempDir dir;
  const auto model =
      GeneratedNonholonomicModel::load(compile(dir, "dragged", 1, 3, "#define FORCE 0.5\n"));
  ASSERT_TRUE(model->has_force());
  NhVec q(3), qdot(3), Q;
  q << 0.7, 1.0, -2.0;
  qdot << 1.0, 0.5, -0.3;
  NhMat M, dQ_dq, dQ_dqdot;
  model->mass(q, M);
  model->force(q, qdot, Q, &dQ_dq, &dQ_dqdot);
  EXPECT_EQ(Q, NhVec(-0.5 * (M * qdot)));
  EXPECT_EQ(dQ_dq, NhMat(NhMat::Zero(3, 3)));
  EXPECT_EQ(dQ_dqdot, NhMat(-0.5 * M));
  model->check_at(q, "q", &qdot);
  const auto bad =
      GeneratedNonholonomicModel::load(compile(dir, "nan_force", 1, 3, "#define FORCE NAN\n"));
  try {
    bad->check_at(q, "the initial state", &qdot);
    ADD_FAILURE() << "a force that is not finite passed check_at";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("force Q (3 x 1)"), std::string::npos) << e.what();
  }
  // RATTLE with the drag: the energy falls, the constraint holds.
  const double c = std::cos(0.7), s = std::sin(0.7);
  qdot << 1.0, 0.8 * c + 0.4 * s, 0.8 * s - 0.4 * c;
  NhVec p = M * qdot, q1, p1;
  double E = nh_energy(*model, q, qdot);
  for (int k = 0; k < 10; ++k) {
    q1 = q + 0.05 * qdot;
    ASSERT_TRUE(rattle_step(*model, 0.05, q, p, NhVec::Zero(0), q1, p1).converged);
    model->mass(q1, M);
    qdot = M.llt().solve(p1);
    const double E1 = nh_energy(*model, q1, qdot);
    EXPECT_LT(E1, E) << k;
    NhMat mu;
    model->constraint(q1, mu);
    EXPECT_LE((mu * qdot).lpNorm<Eigen::Infinity>(), 1e-14) << k;
    q = q1;
    p = p1;
    E = E1;
  }
}

void expect_refused(const fs::path& library, const std::string& what) {
  try {
    GeneratedNonholonomicModel::load(library);
    ADD_FAILURE() << "loaded " << library;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(library.string()), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

TEST(GeneratedNonholonomic, BadObjectsAreRefusedNamingTheFile) {
  const TempDir dir;
  expect_refused(dir.path / "missing.so", "no such file");
  expect_refused(compile(dir, "abi2", 2, 3), "ABI version 2, expected 1");
  expect_refused(compile(dir, "dof9", 1, 9), "n = 9 coordinates");
  std::ofstream(dir.path / "junk.so") << "not a shared object";
  expect_refused(dir.path / "junk.so", "cannot be loaded");
}

}  // namespace
}  // namespace marsden::nonholonomic
