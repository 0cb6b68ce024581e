// Generated tree elements (tree/generated.hpp) without CasADi: shared objects written by
// hand to the tree ABI, compiled here with the system C compiler, that are the coordinate
// spring k/2 (q2 - rest)^2 and the damper -c qd3 must step a 30-link chain (the
// articulated-body Newton path) as the built-in CoordinateSpring and CoordinateDamper do,
// with the same step derivatives and without allocating; bad objects and bad coordinates
// are refused naming the file. A hand-written coupling constraint steps a chain as the
// built-in CoordinateCoupling does; dependent rows and objects of the wrong kind are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "marsden/error.hpp"
#include "marsden/tree/builtin_models.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/generated.hpp"
#include "marsden/tree/midpoint.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::tree {
namespace {

namespace fs = std::filesystem;

constexpr double kStiffness = 40.0, kRest = 0.3;

// ABI, SIZE, NAME (a string literal or 0) and INDEX set by #define.
constexpr const char* kSpring = R"(
int marsden_tree_abi_version(void) { return ABI; }
int marsden_tree_potential_size(void) { return SIZE; }
const char* marsden_tree_potential_coordinate(int i) { return i == 0 ? NAME : 0; }
int marsden_tree_potential_coordinate_index(int i) { return i == 0 ? INDEX : -1; }
int marsden_tree_potential(const double* q, double* V, double* g, double* H) {
  double d = q[0] - 0.3;
  if (V) *V = 0.5 * 40.0 * d * d;
  if (g) g[0] = 40.0 * d;
  if (H) H[0] = 40.0;
  return 0;
}
)";

// The coordinate damper Q = -c qd on the coordinate named "q3", c = 0.7.
constexpr const char* kDamper = R"(
int marsden_tree_abi_version(void) { return 1; }
int marsden_tree_force_size(void) { return 1; }
const char* marsden_tree_force_coordinate(int i) { return i == 0 ? "q3" : 0; }
int marsden_tree_force_coordinate_index(int i) { return -1; }
int marsden_tree_force(const double* q, const double* qd, double* Q, double* Q_q, double* Q_v) {
  if (Q) Q[0] = -0.7 * qd[0];
  if (Q_q) Q_q[0] = 0.0;
  if (Q_v) Q_v[0] = -0.7;
  return 0;
}
)";

// The coupling q2 = 0.5 q3 + 0.1 (by name) as a generated constraint of ROWS rows: the
// second row, when there is one, repeats the first twice over (dependent everywhere).
constexpr const char* kCoupling = R"(
int marsden_tree_abi_version(void) { return 1; }
int marsden_tree_constraint_size(void) { return 2; }
const char* marsden_tree_constraint_coordinate(int i) { return i == 0 ? "q2" : "q3"; }
int marsden_tree_constraint_coordinate_index(int i) { return -1; }
int marsden_tree_constraint_rows(void) { return ROWS; }
const char* marsden_tree_constraint_name(void) { return "gear"; }
int marsden_tree_constraint(const double* q, const double* w, double* h, double* Dh,
                            double* H) {
  int i, r;
  for (r = 0; r < ROWS; ++r) {
    if (h) h[r] = (r + 1) * (q[0] - 0.5 * q[1] - 0.1);
    if (Dh) { Dh[r] = r + 1; Dh[r + ROWS] = -0.5 * (r + 1); }
  }
  if (H) for (i = 0; i < 4; ++i) H[i] = 0.0;
  return 0;
}
)";

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("marsden-test-generated-tree-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

fs::path compile(const TempDir& dir, const std::string& file, int abi, int size,
                 const std::string& name, int index) {
  const fs::path c_file = dir.path / (file + ".c"), library = dir.path / (file + ".so");
  std::ofstream(c_file) << "#define ABI " << abi << "\n#define SIZE " << size
                        << "\n#define NAME " << name << "\n#define INDEX " << index << "\n"
                        << kSpring;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

fs::path compile_damper(const TempDir& dir) {
  const fs::path c_file = dir.path / "damper.c", library = dir.path / "damper.so";
  std::ofstream(c_file) << kDamper;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

fs::path compile_coupling(const TempDir& dir, int rows) {
  const std::string file = "coupling" + std::to_string(rows);
  const fs::path c_file = dir.path / (file + ".c"), library = dir.path / (file + ".so");
  std::ofstream(c_file) << "#define ROWS " << rows << "\n" << kCoupling;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

// A model with built-in elements (a) and one with the same elements generated (b), stepped
// side by side by the midpoint VI at dt = 0.01 s from (q0, qd0), unforced.
struct SideBySide {
  const Model &a, &b;
  Data data_a, data_b;
  TreeState x_a, x_b, next_a, next_b;
  const MidpointOptions options;
  const VecX u, k;

  SideBySide(const Model& a_, const Model& b_, const VecX& q0, const VecX& qd0)
      : a(a_), b(b_), data_a(a_), data_b(b_),
        x_a(midpoint_initial_state(a_, data_a, 0.0, q0, qd0)),
        x_b(midpoint_initial_state(b_, data_b, 0.0, q0, qd0)), next_a(x_a), next_b(x_b) {}

  // `count` steps: the same q and p to 1e-12 at each, no allocation in b's step, and
  // `each(x_b)` after each.
  template <class Each>
  void steps(int count, Each each) {
    for (int step = 0; step < count; ++step) {
      ASSERT_TRUE(midpoint_step(a, data_a, options, 0.01, x_a, u, k, next_a).converged);
      const long allocations = test_support::allocations_during([&] {
        ASSERT_TRUE(midpoint_step(b, data_b, options, 0.01, x_b, u, k, next_b).converged);
      });
      EXPECT_EQ(allocations, 0) << step;
      EXPECT_LE((next_a.q - next_b.q).lpNorm<Eigen::Infinity>(), 1e-12) << step;
      EXPECT_LE((next_a.p - next_b.p).lpNorm<Eigen::Infinity>(), 1e-12) << step;
      std::swap(x_a, next_a);
      std::swap(x_b, next_b);
      each(x_b);
    }
  }

  // The next step's derivatives agree to 1e-10.
  void expect_same_step_derivatives() {
    StepDerivatives d_a, d_b;
    midpoint_step(a, data_a, options, 0.01, x_a, u, k, next_a);
    midpoint_step(b, data_b, options, 0.01, x_b, u, k, next_b);
    midpoint_step_derivatives(a, data_a, options, 0.01, x_a, u, k, next_a, d_a);
    midpoint_step_derivatives(b, data_b, options, 0.01, x_b, u, k, next_b, d_b);
    EXPECT_LE((d_a.dq_dq - d_b.dq_dq).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LE((d_a.dp_dq - d_b.dp_dq).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LE((d_a.dq_dp - d_b.dq_dp).lpNorm<Eigen::Infinity>(), 1e-10);
    EXPECT_LE((d_a.dp_dp - d_b.dp_dp).lpNorm<Eigen::Infinity>(), 1e-10);
  }
};

TEST(GeneratedTreePotential, HandWrittenSpringIsTheCoordinateSpring) {
  const TempDir dir;
  const Model chain = n_link_pendulum(30);
  ModelBuilder built_in(chain);
  built_in.add_coordinate_spring(chain.coord_index("q2"), kStiffness, kRest);
  built_in.add_coordinate_damper(chain.coord_index("q3"), 0.7);
  ModelBuilder by_name(chain), by_index(chain);
  by_name.add_generated_potential(compile(dir, "by_name", 1, 1, "\"q2\"", -1));
  by_name.add_generated_force(compile_damper(dir));
  by_index.add_generated_potential(compile(dir, "by_index", 1, 1, "0", 1));
  const Model a = built_in.build(), b = by_name.build(), c = by_index.build();
  ASSERT_EQ(b.generated_potentials().size(), 1u);
  EXPECT_EQ(b.generated_potentials()[0].coords[0], 1);
  ASSERT_EQ(b.generated_forces().size(), 1u);
  EXPECT_EQ(b.generated_forces()[0].coords[0], 2);
  EXPECT_EQ(c.generated_potentials()[0].coords[0], 1);

  const int n = chain.num_coords();
  VecX q0 = VecX::Constant(n, 0.1);
  q0[1] = 0.9;
  SideBySide run(a, b, q0, VecX::Zero(n));
  run.steps(50, [](const TreeState&) {});
  EXPECT_GT(std::abs(run.x_b.q[1] - q0[1]), 1e-2);  // the spring moved it
  run.expect_same_step_derivatives();
}

void expect_refused(const fs::path& library, const std::string& what) {
  ModelBuilder b(n_link_pendulum(2));
  try {
    b.add_generated_potential(library);
    ADD_FAILURE() << "loaded " << library;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(library.string()), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  }
}

TEST(GeneratedTreePotential, BadObjectsAndCoordinatesAreRefusedNamingTheFile) {
  const TempDir dir;
  expect_refused(dir.path / "missing.so", "no such file");
  expect_refused(compile(dir, "abi2", 2, 1, "\"q1\"", -1), "tree ABI version 2, expected 1");
  expect_refused(compile(dir, "size0", 1, 0, "\"q1\"", -1), "a potential of 0 coordinates");
  expect_refused(compile(dir, "size17", 1, 17, "\"q1\"", -1), "a potential of 17 coordinates");
  expect_refused(compile(dir, "elbow", 1, 1, "\"elbow\"", -1),
                 "its coordinate 0: tree model: no coordinate named \"elbow\" (coordinates: "
                 "q1, q2)");
  expect_refused(compile(dir, "index5", 1, 1, "0", 5),
                 "its coordinate 0 is index 5, but the model has coordinates 0..1");
  std::ofstream(dir.path / "junk.so") << "not a shared object";
  expect_refused(dir.path / "junk.so", "cannot be loaded");
}

// The generated coupling steps a 5-link chain as the built-in CoordinateCoupling does:
// the same trajectory (a linear h: the same multipliers too), the same step derivatives,
// no allocation in a step.
TEST(GeneratedTreeConstraint, HandWrittenCouplingIsTheCoordinateCoupling) {
  const TempDir dir;
  const Model chain = n_link_pendulum(5);
  ModelBuilder built_in(chain), generated(chain);
  built_in.add_coordinate_coupling_constraint("gear", chain.coord_index("q2"),
                                              chain.coord_index("q3"), 0.5, 0.1);
  generated.add_generated_constraint(compile_coupling(dir, 1));
  const Model a = built_in.build(), b = generated.build();
  ASSERT_EQ(b.num_constraint_rows(), 1);
  EXPECT_EQ(b.constraints()[0].name, "gear");
  ASSERT_EQ(b.generated_constraints().size(), 1u);
  EXPECT_EQ(b.generated_constraints()[0].coords[1], 2);

  const int n = chain.num_coords();
  VecX q0 = VecX::Constant(n, 0.2), qd0 = VecX::Zero(n);
  q0[1] = 0.5 * q0[2] + 0.1;
  qd0[0] = 0.4;
  Data check(b);
  check_generated_constraints(b, check, q0);
  SideBySide run(a, b, q0, qd0);
  run.steps(40, [](const TreeState& x_b) {
    EXPECT_LE(std::abs(x_b.q[1] - 0.5 * x_b.q[2] - 0.1), 1e-12);
  });
  EXPECT_LE((run.data_a.lambda - run.data_b.lambda).lpNorm<Eigen::Infinity>(), 1e-10);
  run.expect_same_step_derivatives();
}

TEST(GeneratedTreeConstraint, DependentRowsAndWrongKindsAreRefusedNamingThem) {
  const TempDir dir;
  const Model chain = n_link_pendulum(3);
  ModelBuilder b(chain);
  b.add_generated_constraint(compile_coupling(dir, 2));
  const Model m = b.build();
  Data data(m);
  VecX q0 = VecX::Zero(3);
  q0[1] = 0.1;
  try {
    check_generated_constraints(m, data, q0);
    ADD_FAILURE() << "dependent rows accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("tree constraint 'gear'"), std::string::npos) << message;
    EXPECT_NE(message.find("has rank 1 of 2"), std::string::npos) << message;
  }
  // A potential's object added as a constraint, and a constraint's as a potential.
  ModelBuilder wrong(chain);
  try {
    wrong.add_generated_constraint(compile(dir, "spring", 1, 1, "\"q2\"", -1));
    ADD_FAILURE() << "a potential loaded as a constraint";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a tree potential, not a constraint"),
              std::string::npos) << e.what();
  }
  expect_refused(compile_coupling(dir, 1), "a tree constraint, not a potential");
  try {
    wrong.add_generated_constraint(compile_coupling(dir, 3));
    ADD_FAILURE() << "3 rows on 2 coordinates accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a constraint of 3 rows on 2 coordinates"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marsden::tree
