// Loading a generated RDP vehicle (vehicle/generated_rdp.hpp) without CasADi: a shared
// object written by hand to the RDP ABI, compiled here with the system C compiler, must give
// the hand-written car's Lagrangian, connection and RDP steps (same layouts); the optional
// shape-force entry arrives in its layout; steps do not allocate; bad objects are refused
// naming the file and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "marsden/error.hpp"
#include "marsden/vehicle/generated_rdp.hpp"
#include "marsden/vehicle/rdp_models.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::vehicle {
namespace {

namespace fs = std::filesystem;

// The car of CarParams{} (m 1, I 0.1, K 0.2, rho 0.3, l 1): l = 1/2 (I u0^2 + K w^2 +
// m (v1^2 + v2^2)) over (r0, r1, u0, u1, w, v1, v2); A = [[-(rho/l) r1, 0], [-rho, 0], [0, 0]];
// no symmetry directions; u1 (the steering rate) prescribed.
constexpr const char* kCar = R"(
int marsden_rdp_abi_version(void) { return ABI; }
int marsden_rdp_num_shape(void) { return NR; }
int marsden_rdp_num_symmetry(void) { return 0; }
int marsden_rdp_prescribed(void) { return MASK; }
int marsden_rdp_lagrangian(const double* r, const double* u, const double* xi, double* l,
                           double* grad, double* hess) {
  const double M[7] = {0.0, 0.0, 0.1, 0.0, 0.2, 1.0, 1.0};
  const double z[7] = {r[0], r[1], u[0], u[1], xi[0], xi[1], xi[2]};
  int i;
  if (l) { *l = 0.0; for (i = 0; i < 7; ++i) *l += 0.5 * M[i] * z[i] * z[i]; }
  if (grad) for (i = 0; i < 7; ++i) grad[i] = M[i] * z[i];
  if (hess) { for (i = 0; i < 49; ++i) hess[i] = 0.0; for (i = 0; i < 7; ++i) hess[8 * i] = M[i]; }
  return 0;
}
int marsden_rdp_connection(const double* r, double* A, double* dA) {
  int i;
  for (i = 0; i < 6; ++i) A[i] = 0.0;
  A[0] = -0.3 * r[1];
  A[1] = -0.3;
  if (dA) { for (i = 0; i < 12; ++i) dA[i] = 0.0; dA[6] = -0.3; }
  return 0;
}
int marsden_rdp_symmetry_basis(const double* r, double* E, double* dE) { return 0; }
#ifdef FORCE
/* optional entry: f = (-0.5 u0 - 2 r0, 0.7 v1), J (2 x 7) column-major */
int marsden_rdp_shape_force(const double* r, const double* u, const double* xi, double* f,
                            double* J) {
  int i;
  f[0] = -0.5 * u[0] - 2.0 * r[0];
  f[1] = 0.7 * xi[1];
  if (J) { for (i = 0; i < 14; ++i) J[i] = 0.0; J[0] = -2.0; J[4] = -0.5; J[11] = 0.7; }
  return 0;
}
#endif
)";

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("marsden-test-generated-rdp-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

fs::path compile(const TempDir& dir, const std::string& name, int abi, int nr, int mask,
                 bool shape_force = false) {
  const fs::path c_file = dir.path / (name + ".c"), library = dir.path / (name + ".so");
  std::ofstream(c_file) << "#define ABI " << abi << "\n#define NR " << nr << "\n#define MASK "
                        << mask << "\n"
                        << (shape_force ? "#define FORCE\n" : "") << kCar;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

TEST(GeneratedRdpVehicle, HandWrittenObjectGivesTheCar) {
  const TempDir dir;
  const auto model = GeneratedRdpVehicle::load(compile(dir, "car", 1, 2, 2));
  const CarModel car{CarParams{}};
  EXPECT_EQ(model->num_shape(), 2);
  EXPECT_EQ(model->num_symmetry(), 0);
  EXPECT_FALSE(model->prescribed(0));
  EXPECT_TRUE(model->prescribed(1));
  const ShapeVec r = (ShapeVec(2) << 0.3, -0.4).finished(), u = (ShapeVec(2) << 1.2, 0.5).finished();
  const Vec3 xi(0.2, -0.7, 0.1);
  LagVec g_gen, g_hand;
  LagMat H_gen, H_hand;
  EXPECT_NEAR(model->lagrangian(r, u, xi, &g_gen, &H_gen), car.lagrangian(r, u, xi, &g_hand, &H_hand),
              1e-15);
  EXPECT_EQ(g_gen, g_hand);
  EXPECT_EQ(H_gen, H_hand);
  ConnectionMat<SE2> A_gen, A_hand;
  std::array<ConnectionMat<SE2>, kRdpMaxShape> dA_gen, dA_hand;
  model->connection(r, A_gen, &dA_gen);
  car.connection(r, A_hand, &dA_hand);
  EXPECT_EQ(A_gen, A_hand);
  for (int j = 0; j < 2; ++j) EXPECT_EQ(dA_gen[j], dA_hand[j]);
  // Energy <dl/du, u> + <dl/dxi, xi> - l equals l for a quadratic l.
  EXPECT_NEAR(model->energy(r, u, xi), car.energy(u, xi), 1e-15);

  // RDP steps of both, under a torque and a steering rate: the same states, no allocation.
  const RdpOptions opt;
  const ShapeVec f = (ShapeVec(2) << 0.4, 0.0).finished();
  const ShapeVec u_in = (ShapeVec(2) << 0.0, 0.3).finished();
  RdpState<SE2> a = rdp_initial_state<SE2>(*model, r, SE2::from_angle(0.2, Vec2(1.0, -1.0)),
                                           (ShapeVec(2) << 1.2, 0.3).finished(), RdpVec(0));
  RdpState<SE2> b = rdp_initial_state<SE2>(car, r, SE2::from_angle(0.2, Vec2(1.0, -1.0)),
                                           (ShapeVec(2) << 1.2, 0.3).finished(), RdpVec(0));
  EXPECT_EQ(test_support::allocations_during([&] {
              for (int k = 0; k < 20; ++k) rdp_advance<SE2>(*model, opt, 0.05, f, u_in, a, k);
            }),
            0);
  for (int k = 0; k < 20; ++k) rdp_advance<SE2>(car, opt, 0.05, f, u_in, b, k);
  EXPECT_LE((a.g.x - b.g.x).norm(), 1e-12);
  EXPECT_LE(std::abs(a.g.angle() - b.g.angle()), 1e-12);
  EXPECT_LE((a.r - b.r).norm(), 1e-12);
  EXPECT_GT((a.g.x - Vec2(1.0, -1.0)).norm(), 0.5);  // it drove somewhere
}

// The optional entry: absent, no shape force (the car above); present, f_r and its
// Jacobian arrive in their places (n_r x (2 n_r + 3), column-major) and steps do not allocate.
TEST(GeneratedRdpVehicle, OptionalShapeForceEntry) {
  const TempDir dir;
  EXPECT_FALSE(GeneratedRdpVehicle::load(compile(dir, "car", 1, 2, 2))->has_shape_force());
  const auto model = GeneratedRdpVehicle::load(compile(dir, "forced", 1, 2, 2, true));
  ASSERT_TRUE(model->has_shape_force());
  const ShapeVec r = (ShapeVec(2) << 0.3, -0.4).finished();
  const ShapeVec u = (ShapeVec(2) << 1.2, 0.5).finished();
  const Vec3 xi(0.2, -0.7, 0.1);
  ShapeVec f;
  ShapeForceJac J;
  model->shape_force(r, u, xi, f, &J);
  EXPECT_EQ(f, (ShapeVec(2) << -0.5 * 1.2 - 2.0 * 0.3, 0.7 * -0.7).finished());
  ShapeForceJac J_expected = ShapeForceJac::Zero(2, 7);
  J_expected(0, 0) = -2.0;
  J_expected(0, 2) = -0.5;
  J_expected(1, 5) = 0.7;
  EXPECT_EQ(J, J_expected);
  const RdpOptions opt;
  const ShapeVec f_in = (ShapeVec(2) << 0.4, 0.0).finished();
  const ShapeVec u_in = (ShapeVec(2) << 0.0, 0.3).finished();
  RdpState<SE2> s = rdp_initial_state<SE2>(*model, r, SE2::identity(), u, RdpVec(0));
  EXPECT_EQ(test_support::allocations_during([&] {
              for (int k = 0; k < 20; ++k) rdp_advance<SE2>(*model, opt, 0.05, f_in, u_in, s, k);
            }),
            0);
}

TEST(GeneratedRdpVehicle, BadObjectsAreRefusedNamingTheFile) {
  const auto message = [](const fs::path& path) {
    try {
      GeneratedRdpVehicle::load(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const TempDir dir;
  const fs::path missing = dir.path / "marsden-no-such-model.so";
  EXPECT_NE(message(missing).find("no-such-model.so': no such file"), std::string::npos)
      << message(missing);
  const fs::path future = compile(dir, "future", 99, 2, 2);
  EXPECT_NE(message(future).find("RDP ABI version 99, expected 1"), std::string::npos)
      << message(future);
  const fs::path big = compile(dir, "big", 1, 5, 2);
  EXPECT_NE(message(big).find("5 shape variables and 0 symmetry directions; RDP takes at most 4"),
            std::string::npos)
      << message(big);
  const fs::path mask = compile(dir, "mask", 1, 2, 4);
  EXPECT_NE(message(mask).find("prescribed mask 4 names shape variables beyond the 2"),
            std::string::npos)
      << message(mask);
}

}  // namespace
}  // namespace marsden::vehicle
