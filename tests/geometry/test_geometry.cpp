// Collision shapes and half-spaces (geometry/shapes.hpp): bad input is refused naming the
// field.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/geometry/shapes.hpp"

namespace marsden::geometry {
namespace {

// ---- bad input ------------------------------------------------------------------------------

template <class F>
void expect_input_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no InputError; expected one naming '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BadInput, ShapesNameTheField) {
  const double nan = std::nan("");
  expect_input_error([] { (void)Sphere(0.0); }, "sphere: radius");
  expect_input_error([] { (void)Sphere(-1.0); }, "sphere: radius");
  expect_input_error([&] { (void)Sphere(nan); }, "sphere: radius");
  expect_input_error([] { (void)Capsule(0.1, 0.0); }, "capsule: half_length");
  expect_input_error([] { (void)Capsule(-0.1, 1.0); }, "capsule: radius");
  expect_input_error([] { (void)Box(Vec3(1.0, 0.0, 1.0)); }, "box: half_extents[1]");
  expect_input_error([&] { (void)Box(Vec3(1.0, 1.0, nan)); }, "box: half_extents[2]");
  expect_input_error([] { (void)Cylinder(0.1, INFINITY); }, "cylinder: half_length");
  expect_input_error([] { (void)Cylinder(0.0, 1.0); }, "cylinder: radius");
  SE3 sheared;
  sheared.R(0, 1) = 0.1;
  expect_input_error([&] { (void)Sphere(1.0, sheared); }, "sphere: pose g_bs");
  SE3 mirrored;
  mirrored.R(2, 2) = -1.0;
  expect_input_error([&] { (void)Box(Vec3::Ones(), mirrored); }, "box: pose g_bs");
  SE3 far;
  far.x.x() = nan;
  expect_input_error([&] { (void)Capsule(1.0, 1.0, far); }, "capsule: pose g_bs");
}

TEST(BadInput, HalfSpacesNameTheField) {
  expect_input_error([] { (void)HalfSpace(Vec3::Zero(), 0.0); }, "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3(0, 0, 2), 0.0); }, "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3(std::nan(""), 0, 1), 0.0); },
                     "half-space: normal n");
  expect_input_error([] { (void)HalfSpace(Vec3::UnitZ(), INFINITY); }, "half-space: offset");
  expect_input_error([] { (void)HalfSpace::through(Vec3(0, std::nan(""), 0), Vec3::UnitZ()); },
                     "half-space: point p");
  EXPECT_NEAR(HalfSpace(Vec3(0, 0, 1.0 + 1e-12), 0.0).n().norm(), 1.0, 1e-16);
}

}  // namespace
}  // namespace marsden::geometry
