// Loading a generated model (vehicle/generated.hpp) without CasADi: a shared object written
// by hand to the ABI, compiled here with the system C compiler, must give the hand-written
// helicopter's gravity wrench, Jacobian and potential (same layout and perturbation
// conventions); a planar one (SE(2)) its tether spring's; bad objects are refused naming
// the file and the problem, and so are objects of the compiled-model cache whose content
// does not match the hash in their name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "marsden/error.hpp"
#include "marsden/support/sha256.hpp"
#include "marsden/vehicle/generated.hpp"
#include "marsden/vehicle/models.hpp"
#include "support/allocation_counter.hpp"

namespace marsden::vehicle {
namespace {

namespace fs = std::filesystem;

// Gravity on a 5 kg body, J = diag(0.2, 0.3, 0.3), no controls: f = (0, -m g R^T e_z),
// J_f_g = [0 0; -m g hat(n) 0], V = m g z. R is column-major: R^T e_z = (R[2], R[5], R[8]).
constexpr const char* kGravityBody = R"(
int marsden_abi_version(void) { return ABI; }
int marsden_num_controls(void) { return 0; }
int marsden_num_shape(void) { return 0; }
int marsden_depends_on_time(void) { return 0; }
void marsden_inertia(double* I) {
  int i;
  for (i = 0; i < 36; ++i) I[i] = 0.0;
  I[0] = 0.2; I[7] = 0.3; I[14] = 0.3; I[21] = 5.0; I[28] = 5.0; I[35] = 5.0;
}
int marsden_control_wrench(const double* gamma, const double* u, double* f, double* J_f_u,
                           double* J_f_gamma) {
  int i;
  for (i = 0; i < 6; ++i) f[i] = 0.0;
  return 0;
}
int marsden_external_wrench(const double* t, const double* R, const double* p,
                            const double* omega, const double* v, double* f, double* J_f_g,
                            double* J_f_xi) {
  const double mg = 5.0 * 9.81, n[3] = {R[2], R[5], R[8]};
  int i;
  for (i = 0; i < 3; ++i) { f[i] = 0.0; f[3 + i] = -mg * n[i]; }
  if (J_f_g) {
    for (i = 0; i < 36; ++i) J_f_g[i] = 0.0;
    /* rows 3..5, columns 0..2 of -mg hat(n); entry (r, c) at r + 6 c */
    J_f_g[4 + 0] = -mg * n[2];  J_f_g[5 + 0] = mg * n[1];
    J_f_g[3 + 6] = mg * n[2];   J_f_g[5 + 6] = -mg * n[0];
    J_f_g[3 + 12] = -mg * n[1]; J_f_g[4 + 12] = mg * n[0];
  }
  if (J_f_xi) for (i = 0; i < 36; ++i) J_f_xi[i] = 0.0;
  return 0;
}
int marsden_potential_energy(const double* R, const double* p, double* V) {
  *V = 5.0 * 9.81 * p[2];
  return 0;
}
)";

// On SE(2): a 2 kg body, J = 0.05, on a tether spring V = k/2 |p|^2 (k = 3): f = (0,
// -k R(theta)^T p), J_f_g = -k [dR^T/dtheta p, I2] in rows 1..2. The pose comes as theta.
constexpr const char* kTetheredPlanar = R"(
#include <math.h>
int marsden_abi_version(void) { return 1; }
int marsden_group(void) { return 2; }
int marsden_num_controls(void) { return 0; }
int marsden_num_shape(void) { return 0; }
int marsden_depends_on_time(void) { return 0; }
void marsden_inertia(double* I) {
  int i;
  for (i = 0; i < 9; ++i) I[i] = 0.0;
  I[0] = 0.05; I[4] = 2.0; I[8] = 2.0;
}
int marsden_control_wrench(const double* gamma, const double* u, double* f, double* J_f_u,
                           double* J_f_gamma) {
  f[0] = f[1] = f[2] = 0.0;
  return 0;
}
int marsden_external_wrench(const double* t, const double* theta, const double* p,
                            const double* omega, const double* v, double* f, double* J_f_g,
                            double* J_f_xi) {
  const double k = 3.0, c = cos(*theta), s = sin(*theta);
  int i;
  f[0] = 0.0; f[1] = -k * (c * p[0] + s * p[1]); f[2] = -k * (-s * p[0] + c * p[1]);
  if (J_f_g) {
    for (i = 0; i < 9; ++i) J_f_g[i] = 0.0;
    J_f_g[1] = -k * (-s * p[0] + c * p[1]); J_f_g[2] = -k * (-c * p[0] - s * p[1]);
    J_f_g[4] = -k; J_f_g[8] = -k;
  }
  if (J_f_xi) for (i = 0; i < 9; ++i) J_f_xi[i] = 0.0;
  return 0;
}
int marsden_potential_energy(const double* theta, const double* p, double* V) {
  *V = 1.5 * (p[0] * p[0] + p[1] * p[1]);
  return 0;
}
)";

// A fresh folder, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("marsden-test-generated-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// Compiles C source into a shared object in dir; the path of the object.
fs::path compile(const TempDir& dir, const std::string& name, const std::string& source) {
  const fs::path c_file = dir.path / (name + ".c"), library = dir.path / (name + ".so");
  std::ofstream(c_file) << source;
  const std::string command =
      "cc -O2 -fPIC -shared -o '" + library.string() + "' '" + c_file.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return library;
}

std::string gravity_body(int abi) {
  return "#define ABI " + std::to_string(abi) + "\n" + kGravityBody;
}

TEST(GeneratedVehicle, HandWrittenObjectGivesTheHelicoptersGravity) {
  const TempDir dir;
  const auto model = GeneratedVehicle::load(compile(dir, "gravity", gravity_body(1)));
  const Helicopter heli{HelicopterParams{}};
  EXPECT_EQ(model->num_controls(), 0);
  EXPECT_EQ(model->num_shape(), 0);
  EXPECT_FALSE(model->wrench_depends_on_time());
  EXPECT_EQ(model->inertia(), heli.inertia());
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    Vec6 delta, xi;
    for (int i = 0; i < 6; ++i) {
      delta[i] = n(rng);
      xi[i] = n(rng);
    }
    const SE3 g = SE3::exp(delta);
    Vec6 f_gen, f_hand;
    Mat6 J_g_gen, J_g_hand, J_xi_gen, J_xi_hand;
    model->external_wrench(0.3, g, xi, f_gen, &J_g_gen, &J_xi_gen);
    heli.external_wrench(0.3, g, xi, f_hand, &J_g_hand, &J_xi_hand);
    EXPECT_LE((f_gen - f_hand).norm(), 1e-12);
    EXPECT_LE((J_g_gen - J_g_hand).norm(), 1e-12);
    EXPECT_LE((J_xi_gen - J_xi_hand).norm(), 1e-12);
    EXPECT_NEAR(model->potential_energy(g), heli.potential_energy(g), 1e-12);
    // A null output is skipped.
    model->external_wrench(0.3, g, xi, f_gen, nullptr, nullptr);
    EXPECT_LE((f_gen - f_hand).norm(), 1e-12);
  }
}

// The generated code's work arrays live on the stack: calls and steps do not allocate.
TEST(GeneratedVehicle, WrenchesAndStepsDoNotAllocate) {
  const TempDir dir;
  const auto model = GeneratedVehicle::load(compile(dir, "gravity", gravity_body(1)));
  SE3 g = SE3::exp((Vec6() << 0.1, -0.2, 0.3, 1.0, 2.0, 3.0).finished()), g_kp1;
  const Vec6 xi_km1 = (Vec6() << 0.3, 0.2, -0.1, 0.5, 0.0, 0.1).finished();
  Vec6 f, xi_k = xi_km1;
  Mat6 J_g, J_xi;
  StepInputs in;
  in.u.resize(0);
  in.gamma.resize(0);
  InputJacobian<SE3> J_u, J_gamma;
  const HolonomicOptions<SE3> opt;
  double V = 0.0;
  NewtonStatus status;
  EXPECT_EQ(test_support::allocations_during([&] {
              model->external_wrench(0.0, g, xi_km1, f, &J_g, &J_xi);
              model->control_wrench(in.gamma, in.u, f, &J_u, &J_gamma);
              V = model->potential_energy(g);
              status = holonomic_step<SE3>(*model, opt, 0.01, 0.0, g, xi_km1, in, xi_k, g_kp1);
            }),
            0);
  EXPECT_TRUE(status.converged);
  EXPECT_NEAR(V, 5.0 * 9.81 * g.x.z(), 1e-12);
}

TEST(GeneratedVehicle, PlanarObjectGivesItsSpringAndStepsWithoutAllocating) {
  const TempDir dir;
  const fs::path planar = compile(dir, "tethered", kTetheredPlanar);
  EXPECT_EQ(generated_vehicle_group(planar), 2);
  const auto model = GeneratedPlanarVehicle::load(planar);
  EXPECT_EQ(model->inertia(), planar_body_inertia(0.05, 2.0));
  const SE2 g = SE2::from_angle(0.7, Vec2(1.0, -0.5));
  const Vec3 xi_km1(0.3, 0.5, -0.2);
  Vec3 f, xi_k = xi_km1;
  Mat3 J_g, J_xi;
  SE2 g_kp1;
  StepInputs in;
  in.u.resize(0);
  in.gamma.resize(0);
  const HolonomicOptions<SE2> opt;
  double V = 0.0;
  NewtonStatus status;
  EXPECT_EQ(test_support::allocations_during([&] {
              model->external_wrench(0.0, g, xi_km1, f, &J_g, &J_xi);
              V = model->potential_energy(g);
              status = holonomic_step<SE2>(*model, opt, 0.01, 0.0, g, xi_km1, in, xi_k, g_kp1);
            }),
            0);
  EXPECT_TRUE(status.converged);
  EXPECT_NEAR(V, 1.5 * g.x.squaredNorm(), 1e-15);
  // The spring force -k p in the world frame, seen in the body frame.
  EXPECT_LT((f.tail<2>() - g.R.transpose() * (-3.0 * g.x)).norm(), 1e-14);
  EXPECT_EQ(f[0], 0.0);
  // J_f_g against central differences at a right perturbation g exp(d).
  const double h = 1e-6;
  for (int c = 0; c < 3; ++c) {
    Vec3 f_plus, f_minus;
    model->external_wrench(0.0, g * SE2::exp(h * Vec3::Unit(c)), xi_km1, f_plus, nullptr, nullptr);
    model->external_wrench(0.0, g * SE2::exp(-h * Vec3::Unit(c)), xi_km1, f_minus, nullptr,
                           nullptr);
    EXPECT_LT((J_g.col(c) - (f_plus - f_minus) / (2 * h)).norm(), 1e-8) << c;
  }
}

TEST(GeneratedVehicle, AnObjectForTheOtherGroupIsRefused) {
  const auto message = [](auto load) {
    try {
      load();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const TempDir dir;
  const fs::path planar = compile(dir, "tethered", kTetheredPlanar);
  const fs::path spatial = compile(dir, "gravity", gravity_body(1));
  // An object without marsden_group (made before SE(2)) is an SE(3) one.
  EXPECT_EQ(generated_vehicle_group(spatial), 3);
  const std::string as_spatial = message([&] { GeneratedVehicle::load(planar); });
  EXPECT_NE(as_spatial.find("tethered.so': a vehicle on SE(2), expected one on SE(3)"),
            std::string::npos)
      << as_spatial;
  const std::string as_planar = message([&] { GeneratedPlanarVehicle::load(spatial); });
  EXPECT_NE(as_planar.find("gravity.so': a vehicle on SE(3), expected one on SE(2)"),
            std::string::npos)
      << as_planar;
}

TEST(GeneratedVehicle, BadObjectsAreRefusedNamingTheFile) {
  const auto message = [](const fs::path& path) {
    try {
      GeneratedVehicle::load(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const TempDir dir;
  const fs::path missing = dir.path / "marsden-no-such-model.so";
  EXPECT_NE(message(missing).find("marsden-no-such-model.so': no such file"), std::string::npos)
      << message(missing);
  const fs::path empty = compile(dir, "empty", "int unrelated(void) { return 0; }\n");
  EXPECT_NE(message(empty).find("no entry point 'marsden_abi_version'"), std::string::npos)
      << message(empty);
  const fs::path future = compile(dir, "future", gravity_body(99));
  EXPECT_NE(message(future).find("ABI version 99, expected 1"), std::string::npos)
      << message(future);
  const fs::path text = dir.path / "text.so";
  std::ofstream(text) << "not a shared object";
  EXPECT_NE(message(text).find("cannot be loaded"), std::string::npos) << message(text);
  std::string singular = gravity_body(1);
  singular.replace(singular.find("I[35] = 5.0"), 11, "I[35] = 0.0");
  const fs::path flat = compile(dir, "singular", singular);
  EXPECT_NE(message(flat).find("not positive definite"), std::string::npos) << message(flat);
}

// FIPS 180-4's examples, the lengths where the padding spills into a second block, and a
// million 'a', as Python's hashlib gives them.
TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// A scoped environment variable (unset: null).
class EnvVariable {
 public:
  EnvVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~EnvVariable() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An object taken from the compiled-model cache ($MARSDEN_CACHE) loads only when its
// content matches the SHA-256 in its name (NAME-KEY-SHA256.so, as marsden.symbolic writes
// it); the same object elsewhere loads under any name.
TEST(GeneratedVehicle, CachedObjectsLoadOnlyWhenTheirContentMatchesTheHashInTheirName) {
  const TempDir dir;
  const fs::path built = compile(dir, "gravity", gravity_body(1));
  const fs::path cache = dir.path / "cache";
  fs::create_directories(cache);
  const EnvVariable variable("MARSDEN_CACHE", cache.c_str());
  const auto message = [](const fs::path& path) {
    try {
      GeneratedVehicle::load(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const fs::path good = cache / ("gravity-0123456789abcdef01234567-" + file_sha256_hex(built) + ".so");
  fs::copy_file(built, good);
  EXPECT_EQ(message(good), "loaded");
  EXPECT_EQ(message(built), "loaded");  // not in the cache

  const fs::path plain = cache / "gravity.so";
  fs::copy_file(built, plain);
  EXPECT_NE(message(plain).find("gravity.so': lies in the compiled-model cache (" +
                                cache.string() + ") without the hash of its content"),
            std::string::npos)
      << message(plain);

  std::ofstream(good, std::ios::app | std::ios::binary) << '\0';
  const std::string tampered = message(good);
  EXPECT_NE(tampered.find(good.string() + "': its content does not match the hash in its name"),
            std::string::npos)
      << tampered;
  EXPECT_NE(tampered.find("clear the cache (rm -r " + cache.string() + ")"), std::string::npos)
      << tampered;
}

}  // namespace
}  // namespace marsden::vehicle
