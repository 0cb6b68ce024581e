// The MJCF reader (docs/mjcf.md): geom inertias against closed forms and an independent
// quadrature, default classes, angle units and orientation forms, the body/joint layout,
// errors that name element and line, and malformed files that never crash. Agreement of
// the resulting models with MuJoCo is tests/python/test_mjcf.py.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numbers>
#include <string>
#include <variant>

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include "marsden/error.hpp"
#include "marsden/io/mjcf.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/run/run.hpp"
#include "marsden/tree/model.hpp"
#include "temp_dir.hpp"
#include "urdf_lookup.hpp"

namespace marsden {
namespace {

constexpr double kPi = std::numbers::pi;

UrdfModel parse(const std::string& body, const std::string& head = "") {
  return io::parse_mjcf("<mujoco>" + head + "<worldbody>" + body + "</worldbody></mujoco>",
                        "test.xml");
}

using test::joint_named;
using test::link_named;

// The message of the InputError that parsing `xml` raises ("" if none).
std::string error_of(const std::string& xml) {
  try {
    io::parse_mjcf(xml, "bad.xml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_near(const Mat3& a, const Mat3& b, double tol) {
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), tol) << a << "\nvs\n" << b;
}

// One geom in a body, density 700.
const UrdfLink& single_geom(UrdfModel& storage, const std::string& geom) {
  storage = parse("<body name='b'><joint/><geom " + geom + " density='700'/></body>");
  return link_named(storage, "b");
}

TEST(MjcfGeomInertia, EachPrimitiveMatchesItsClosedForm) {
  const double rho = 700.0;
  UrdfModel m;
  {
    const double r = 0.3, mass = rho * 4.0 / 3.0 * kPi * r * r * r;
    const UrdfLink& b = single_geom(m, "type='sphere' size='0.3'");
    EXPECT_NEAR(b.mass, mass, 1e-12 * mass);
    expect_near(b.inertia, 0.4 * mass * r * r * Mat3::Identity(), 1e-12);
  }
  {
    const double a = 0.1, bb = 0.2, c = 0.3, mass = rho * 8.0 * a * bb * c;
    const UrdfLink& b = single_geom(m, "type='box' size='0.1 0.2 0.3'");
    EXPECT_NEAR(b.mass, mass, 1e-12 * mass);
    // A box of edges 2a, 2b, 2c: I_x = m ((2b)^2 + (2c)^2) / 12.
    const Vec3 d(4 * (bb * bb + c * c), 4 * (a * a + c * c), 4 * (a * a + bb * bb));
    expect_near(b.inertia, Mat3((mass / 12.0 * d).asDiagonal()), 1e-12);
  }
  {
    const double r = 0.1, len = 0.5, mass = rho * kPi * r * r * len;
    const UrdfLink& b = single_geom(m, "type='cylinder' size='0.1 0.25'");
    EXPECT_NEAR(b.mass, mass, 1e-12 * mass);
    const double t = mass * (3 * r * r + len * len) / 12.0;
    expect_near(b.inertia, Vec3(t, t, mass * r * r / 2).asDiagonal().toDenseMatrix(), 1e-12);
  }
  {
    const double a = 0.1, bb = 0.2, c = 0.3, mass = rho * 4.0 / 3.0 * kPi * a * bb * c;
    const UrdfLink& b = single_geom(m, "type='ellipsoid' size='0.1 0.2 0.3'");
    EXPECT_NEAR(b.mass, mass, 1e-12 * mass);
    const Vec3 d(bb * bb + c * c, a * a + c * c, a * a + bb * bb);
    expect_near(b.inertia, Mat3((mass / 5.0 * d).asDiagonal()), 1e-12);
  }
}

// A capsule integrated slice by slice along its axis: each slice a disk of radius rho(z),
// rho^2 piecewise quadratic in z, so 3-point Gauss-Legendre per piece is exact.
TEST(MjcfGeomInertia, CapsuleMatchesAnIndependentQuadrature) {
  const double rho = 700.0, r = 0.1, h = 0.25;
  double mass = 0.0, i_axis = 0.0, i_trans = 0.0;
  const double nodes[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)};
  const double weights[3] = {5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0};
  const auto rho2 = [&](double z) {
    const double beyond = std::abs(z) - h;
    return beyond > 0.0 ? r * r - beyond * beyond : r * r;
  };
  const double pieces[4] = {-h - r, -h, h, h + r};
  for (int p = 0; p < 3; ++p) {
    const double a = pieces[p], b = pieces[p + 1];
    for (int k = 0; k < 3; ++k) {
      const double z = 0.5 * (a + b) + 0.5 * (b - a) * nodes[k];
      const double w = 0.5 * (b - a) * weights[k];
      const double dm = rho * kPi * rho2(z) * w;  // the slice's mass per dz, times dz
      mass += dm;
      i_axis += dm * rho2(z) / 2.0;
      i_trans += dm * (rho2(z) / 4.0 + z * z);
    }
  }
  UrdfModel m;
  const UrdfLink& b = single_geom(m, "type='capsule' size='0.1 0.25'");
  EXPECT_NEAR(b.mass, mass, 1e-12 * mass);
  expect_near(b.inertia, Vec3(i_trans, i_trans, i_axis).asDiagonal().toDenseMatrix(), 1e-13);
  // The same capsule by fromto, tilted: centre at the midpoint, the axis an eigenvector.
  const UrdfLink& t = single_geom(m, "type='capsule' size='0.1' fromto='0 0 0 0.3 0 0.4'");
  EXPECT_NEAR(t.mass, mass, 1e-12 * mass);
  EXPECT_LT((t.inertial_origin.x - Vec3(0.15, 0.0, 0.2)).norm(), 1e-15);
  const Vec3 axis = Vec3(0.3, 0.0, 0.4).normalized();
  EXPECT_LT((t.inertia * axis - i_axis * axis).norm(), 1e-13);
  EXPECT_NEAR(t.inertia.trace(), 2 * i_trans + i_axis, 1e-13);
}

TEST(MjcfGeomInertia, GeomsCombineByParallelAxesAndMassOverridesDensity) {
  // Two spheres of 2 kg at y = +-0.5: I_x = I_z = 2 (2/5 m r^2 + m d^2), I_y = 2 (2/5 m r^2).
  UrdfModel m = parse(
      "<body name='b'><joint/><geom size='0.1' pos='0 0.5 0' mass='2'/>"
      "<geom size='0.1' pos='0 -0.5 0' mass='2' density='1'/></body>");
  const UrdfLink& b = link_named(m, "b");
  EXPECT_DOUBLE_EQ(b.mass, 4.0);
  EXPECT_LT(b.inertial_origin.x.norm(), 1e-15);
  const double own = 0.4 * 2.0 * 0.01, shift = 2.0 * 0.25;
  expect_near(b.inertia, Vec3(2 * (own + shift), 2 * own, 2 * (own + shift)).asDiagonal().toDenseMatrix(),
              1e-14);
}

TEST(MjcfGeomInertia, InertialAndInertiaFromGeomAsMuJoCo) {
  const std::string body =
      "<body name='b'><joint/><inertial pos='0.1 0 0' mass='3' diaginertia='1 2 3'/>"
      "<geom size='0.1' mass='7'/></body>";
  // auto (the default): the <inertial> wins.
  EXPECT_DOUBLE_EQ(link_named(parse(body), "b").mass, 3.0);
  EXPECT_DOUBLE_EQ(link_named(parse(body, "<compiler inertiafromgeom='true'/>"), "b").mass, 7.0);
  const UrdfModel none = parse("<body name='b'><joint/><geom size='0.1'/></body>",
                               "<compiler inertiafromgeom='false'/>");
  EXPECT_FALSE(link_named(none, "b").has_inertial);
  // fullinertia: M11 M22 M33 M12 M13 M23.
  const UrdfModel full = parse(
      "<body name='b'><joint/><inertial mass='1' fullinertia='4 5 6 0.1 0.2 0.3'/></body>");
  Mat3 expected;
  expected << 4, 0.1, 0.2, 0.1, 5, 0.3, 0.2, 0.3, 6;
  expect_near(link_named(full, "b").inertia, expected, 0.0);
}

TEST(MjcfDefaults, NestedClassesInheritAndChildclassApplies) {
  const std::string head =
      "<default><joint damping='1' armature='0.1'/><geom size='0.1'/>"
      "<default class='a'><joint damping='2'/>"
      "<default class='b'><joint stiffness='3'/></default></default></default>";
  const UrdfModel m = parse(
      "<body name='p' childclass='b'><joint name='j1'/><geom/>"
      "<body name='c'><joint name='j2' class='main'/><joint name='j3' class='a' damping='5'/>"
      "<geom/></body></body>",
      head);
  EXPECT_EQ(joint_named(m, "j1").damping, 2.0);  // from a, through b
  EXPECT_EQ(joint_named(m, "j1").stiffness, 3.0);
  EXPECT_EQ(joint_named(m, "j1").armature, 0.1);  // from main, through a and b
  EXPECT_EQ(joint_named(m, "j2").damping, 1.0);
  EXPECT_EQ(joint_named(m, "j2").stiffness, 0.0);
  EXPECT_EQ(joint_named(m, "j3").damping, 5.0);  // its own attribute wins
  EXPECT_EQ(joint_named(m, "j3").stiffness, 0.0);
  EXPECT_NE(error_of("<mujoco><worldbody><body><joint class='nope'/></body></worldbody></mujoco>")
                .find("unknown class \"nope\""),
            std::string::npos);
}

Mat3 body_rotation(const std::string& attrs, const std::string& head = "") {
  const UrdfModel m = parse("<body name='b' " + attrs + "><geom size='0.1'/></body>", head);
  return joint_named(m, "b_weld").origin.R;
}

TEST(MjcfOrientation, AngleUnitsAndEveryFormAgree) {
  const Mat3 Rz90 = Eigen::AngleAxisd(kPi / 2, Vec3::UnitZ()).toRotationMatrix();
  expect_near(body_rotation("euler='0 0 90'"), Rz90, 1e-15);  // degrees by default
  expect_near(body_rotation("euler='0 0 1.5707963267948966'", "<compiler angle='radian'/>"),
              Rz90, 1e-15);
  expect_near(body_rotation("axisangle='0 0 2 90'"), Rz90, 1e-15);
  expect_near(body_rotation("quat='0.7071067811865476 0 0 0.7071067811865476'"), Rz90, 1e-15);
  expect_near(body_rotation("xyaxes='0 1 0 -1 0.3 0'"), Rz90, 1e-15);
  // zaxis: the shortest rotation taking z to the given axis.
  expect_near(body_rotation("zaxis='1 0 0'"),
              Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()).toRotationMatrix(), 1e-15);
  // Intrinsic (lower case) x then y is Rx Ry; extrinsic (upper case) X then Y is Ry Rx.
  const Mat3 Rx = Eigen::AngleAxisd(kPi / 2, Vec3::UnitX()).toRotationMatrix();
  const Mat3 Ry = Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()).toRotationMatrix();
  expect_near(body_rotation("euler='90 90 0'"), Rx * Ry, 1e-15);
  expect_near(body_rotation("euler='90 90 0'", "<compiler eulerseq='XYZ'/>"), Ry * Rx, 1e-15);
  // Hinge ranges and spring references follow the unit; slide ranges stay in metres.
  const UrdfModel m = parse(
      "<body><joint name='h' range='-90 45' springref='30'/><joint name='s' type='slide' "
      "range='-2 3'/><geom size='0.1'/></body>");
  EXPECT_NEAR(joint_named(m, "h").lower, -kPi / 2, 1e-15);
  EXPECT_NEAR(joint_named(m, "h").upper, kPi / 4, 1e-15);
  EXPECT_NEAR(joint_named(m, "h").springref, kPi / 6, 1e-15);
  EXPECT_EQ(joint_named(m, "s").lower, -2.0);
  EXPECT_EQ(joint_named(m, "h").type, UrdfJointType::Revolute);
  // autolimits: no range, no limits.
  EXPECT_EQ(joint_named(parse("<body><joint name='c'/><geom size='0.1'/></body>"), "c").type,
            UrdfJointType::Continuous);
}

TEST(MjcfBodies, SeveralJointsHangInOrderThroughMasslessLinks) {
  const UrdfModel m = parse(
      "<body name='b' pos='1 0 0'><joint name='j1' pos='0 0 0.5'/>"
      "<joint name='j2' type='slide' axis='0 2 0' pos='0.1 0 0'/><geom size='0.1'/></body>");
  ASSERT_EQ(m.joints.size(), 3u);
  EXPECT_EQ(m.joints[0].name, "j1");
  EXPECT_EQ(m.joints[0].parent, "world");
  EXPECT_EQ(m.joints[0].child, "b_j1");
  EXPECT_LT((m.joints[0].origin.x - Vec3(1, 0, 0.5)).norm(), 1e-15);
  EXPECT_EQ(m.joints[1].type, UrdfJointType::Prismatic);
  EXPECT_LT((m.joints[1].origin.x - Vec3(0.1, 0, -0.5)).norm(), 1e-15);
  EXPECT_LT((m.joints[1].axis - Vec3::UnitY()).norm(), 1e-15);
  // The body frame sits at -pos of the last joint.
  EXPECT_EQ(m.joints[2].type, UrdfJointType::Fixed);
  EXPECT_EQ(m.joints[2].child, "b");
  EXPECT_LT((m.joints[2].origin.x - Vec3(-0.1, 0, 0)).norm(), 1e-15);
  EXPECT_FALSE(link_named(m, "b_j1").has_inertial);
}

// MuJoCo turns a joint by qpos - ref: the coordinate is qpos when the link after the joint
// is turned (slid) back by ref before the body frame.
TEST(MjcfBodies, RefTurnsTheBodyBackSoThatCoordinatesAreQpos) {
  const UrdfModel m = parse(
      "<body name='h'><joint name='j' axis='0 0 1' ref='90'/><geom size='0.1'/></body>"
      "<body name='s'><joint name='k' type='slide' axis='1 0 0' ref='0.3'/>"
      "<geom size='0.1'/></body>");
  EXPECT_EQ(joint_named(m, "j").child, "h_j");
  expect_near(joint_named(m, "h_offset").origin.R,
              Eigen::AngleAxisd(-kPi / 2, Vec3::UnitZ()).toRotationMatrix(), 1e-15);
  EXPECT_LT((joint_named(m, "s_offset").origin.x - Vec3(-0.3, 0, 0)).norm(), 1e-15);
}

TEST(MjcfCompiler, SetTotalMassScalesMassesAndInertiasAlike) {
  const UrdfModel m = parse(
      "<body name='a'><joint/><geom size='0.1' mass='1'/>"
      "<body name='b'><joint/><geom size='0.1' mass='3'/></body></body>",
      "<compiler settotalmass='8'/>");
  EXPECT_DOUBLE_EQ(link_named(m, "a").mass, 2.0);
  EXPECT_DOUBLE_EQ(link_named(m, "b").mass, 6.0);
  expect_near(link_named(m, "b").inertia, 0.4 * 6.0 * 0.01 * Mat3::Identity(), 1e-15);
}

TEST(MjcfCompiler, OptionGravityAndItsFlag) {
  const std::string body = "<body><joint/><geom size='0.1'/></body>";
  EXPECT_EQ(parse(body, "<option gravity='0 0 -5'/>").gravity, Vec3(0, 0, -5));
  EXPECT_EQ(parse(body, "<option gravity='0 0 -5'><flag gravity='disable'/></option>").gravity,
            Vec3::Zero());
  EXPECT_EQ(parse(body).gravity, Vec3(0, 0, -9.81));
}

TEST(MjcfBodies, FreeJointMakesTheFloatingRoot) {
  const UrdfModel m = parse(
      "<geom type='plane' size='1 1 0.1'/><body name='torso' pos='0 0 2'><freejoint/>"
      "<geom size='0.1'/><body name='leg'><joint/><geom size='0.1'/></body></body>");
  EXPECT_TRUE(m.floating_root);
  EXPECT_EQ(m.root, "torso");
  EXPECT_LT((m.root_pose.x - Vec3(0, 0, 2)).norm(), 1e-15);
  ASSERT_EQ(m.world_geoms.size(), 1u);
  EXPECT_EQ(m.world_geoms[0].shape, UrdfShape::Plane);
  EXPECT_EQ(m.links.front().name, "torso");
}

TEST(MjcfBodies, GeomsAreContactShapesWithTheirOwnFriction) {
  const UrdfModel m = parse(
      "<body name='ball'><freejoint/><geom size='0.1' friction='0.7 0.01 0.001'/>"
      "<geom type='box' size='0.1 0.2 0.3' pos='0 0 0.5'/>"
      "<geom size='0.05' contype='0' conaffinity='0'/>"
      "<geom type='capsule' size='0.05' fromto='0 0 -0.2 0 0 -0.6'/></body>");
  std::vector<std::string> left_out;
  const std::vector<maximal::CollisionShape> shapes =
      maximal::collision_shapes_from_urdf(m, true, 0.4, &left_out);
  ASSERT_EQ(shapes.size(), 3u);  // the third geom does not collide
  EXPECT_EQ(shapes[0].friction, 0.7);
  EXPECT_EQ(shapes[1].friction, 0.4);  // none in the file: the caller's
  const auto* capsule = std::get_if<geometry::Capsule>(&shapes[2].shape);
  ASSERT_NE(capsule, nullptr);
  EXPECT_EQ(capsule->radius(), 0.05);
  EXPECT_NEAR(capsule->half_length(), 0.2, 1e-15);
  EXPECT_TRUE(left_out.empty());
}

TEST(MjcfFiles, ExamplesReadWithIncludesActuatorsAndOption) {
  const std::string dir = std::string(MARSDEN_SOURCE_DIR) + "/examples/mjcf/";
  const UrdfModel arm = io::read_mjcf(dir + "cart_arm.xml");
  EXPECT_EQ(arm.timestep, 0.002);  // from the included file
  ASSERT_EQ(arm.actuators.size(), 1u);
  EXPECT_EQ(arm.actuators[0].joint, "slider");
  EXPECT_EQ(arm.actuators[0].gear, 20.0);
  // The included default class: the visual box adds no mass and no collision shape.
  EXPECT_EQ(link_named(arm, "wrist").mass, 0.3);
  EXPECT_EQ(joint_named(arm, "tip_weld").type, UrdfJointType::Fixed);
  EXPECT_TRUE(link_named(arm, "wrist").collisions.empty());
  EXPECT_EQ(link_named(arm, "cart").visuals[0].rgba, Vec4(0.7, 0.6, 0.4, 1.0));
  const UrdfModel pendulum = io::read_mjcf(dir + "double_pendulum.xml");
  EXPECT_TRUE(pendulum.actuators[0].ctrl_limited);
  EXPECT_EQ(pendulum.actuators[0].ctrl_upper, 1.0);
  EXPECT_EQ(joint_named(pendulum, "elbow").stiffness, 2.0);
  // Into the tree engine: armature and springs carry over; the maximal engine refuses
  // armature by name rather than drop it.
  const tree::Model model = tree::model_from_urdf(pendulum);
  EXPECT_EQ(model.coords()[size_t(model.coord_index("elbow"))].armature, 0.01);
  EXPECT_EQ(model.coordinate_springs().size(), 1u);
  try {
    maximal::mechanism_from_urdf(pendulum, pendulum.gravity);
    ADD_FAILURE() << "armature accepted by the maximal engine";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("joint \"shoulder\": armature"), std::string::npos);
  }
}

TEST(MjcfErrors, NameTheElementAndItsLine) {
  const auto expect_error = [](const std::string& xml, const std::string& part) {
    const std::string msg = error_of(xml);
    EXPECT_NE(msg.find(part), std::string::npos) << "message: " << msg;
  };
  expect_error("<mujoco>\n<worldbody>\n<body>\n<joint name='b' type='ball'/>\n</body>"
               "</worldbody></mujoco>",
               "bad.xml: <joint \"b\">: type \"ball\" is not supported (hinge, slide, free) (line 4)");
  expect_error("<mujoco><worldbody/>\n<tendon>\n<spatial name='t'/></tendon></mujoco>",
               "<spatial \"t\">: not supported (inside <tendon>) (line 3)");
  expect_error("<mujoco>\n<option density='1.2'/><worldbody/></mujoco>",
               "<option>: density: fluid forces are not supported (line 2)");
  expect_error("<mujoco><worldbody>\n<body><joint damping='abc'/></body></worldbody></mujoco>",
               "<joint>: damping: not a finite number: \"abc\" (line 2)");
  expect_error("<mujoco><worldbody>\n\n<body><joint frictionloss='1'/></body></worldbody></mujoco>",
               "frictionloss (dry friction) is not supported (line 3)");
  expect_error("<mujoco><worldbody><body><geom type='mesh' mesh='m'/>\n</body></worldbody></mujoco>",
               "cannot give the body's inertia");
  expect_error("<mujoco><worldbody><body>\n<geom size='0'/></body></worldbody></mujoco>",
               "<geom>: size: the radius must be > 0 (line 2)");
  expect_error("<mujoco><worldbody><body><freejoint/></body><body/></worldbody></mujoco>",
               "free joint is supported only");
  expect_error("<mujoco><worldbody/><actuator>\n<position joint='x'/></actuator></mujoco>",
               "<position>: not supported");
  expect_error("<mujoco><worldbody/><actuator>\n<motor joint='x'/></actuator></mujoco>",
               "<motor>: joint \"x\" does not exist (line 2)");
  expect_error("<mujoco><worldbody><body></worldbody></mujoco>", "bad.xml: line 1: malformed XML");
  expect_error("<robot/>", "missing <mujoco> root element");
  expect_error("<mujoco><worldbody><body><joint/>\n<geom size='1e200'/></body></worldbody></mujoco>",
               "<geom>: its mass or inertia overflows (size, density or mass too large) (line 2)");
  // Huge but finite entries are still a direction.
  expect_near(body_rotation("quat='1e300 0 0 1e300'"),
              Eigen::AngleAxisd(kPi / 2, Vec3::UnitZ()).toRotationMatrix(), 1e-15);
  EXPECT_EQ(error_of("<mujoco><worldbody><body childclass='main'><joint class='main'/>"
                     "<geom size='0.1'/></body></worldbody></mujoco>"),
            "");
  const UrdfModel warned = io::parse_mjcf(
      "<mujoco><worldbody/>\n<contact><exclude body1='a' body2='b'/></contact></mujoco>", "w.xml");
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_EQ(warned.warnings[0], "w.xml: <contact>: contact pairs and exclusions are not read (line 2)");
}

TEST(MjcfErrors, AnIncludedFileNamesItselfAndItsLine) {
  const test::TempDir dir;
  dir.write("part.xml",
            "<mujoco>\n<worldbody>\n  <body>\n    <joint type='ball'/>\n  </body>\n"
            "</worldbody>\n</mujoco>\n");
  dir.write("main.xml", "<mujoco>\n<include file='part.xml'/>\n</mujoco>\n");
  try {
    io::read_mjcf(dir.path() / "main.xml");
    ADD_FAILURE() << "ball joint accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("part.xml: <joint>: type \"ball\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("(line 4)"), std::string::npos) << msg;
  }
  dir.write("self.xml", "<mujoco><include file='self.xml'/></mujoco>");
  EXPECT_THROW(io::read_mjcf(dir.path() / "self.xml"), InputError);
}

// Every prefix and single-character corruption of a real file either reads or is an
// InputError: never a crash, another exception or a non-finite value.
TEST(MjcfErrors, MalformedFilesNeverCrash) {
  std::ifstream in(std::string(MARSDEN_SOURCE_DIR) + "/examples/mjcf/double_pendulum.xml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(text.size(), 500u);
  const auto check = [](const std::string& xml) {
    try {
      const UrdfModel m = io::parse_mjcf(xml, "fuzz.xml");
      for (const UrdfLink& l : m.links) {
        ASSERT_TRUE(std::isfinite(l.mass));
        ASSERT_TRUE(l.inertia.allFinite());
      }
    } catch (const InputError&) {
    }
  };
  for (std::size_t n = 0; n < text.size(); n += 3) check(text.substr(0, n));
  for (std::size_t i = 0; i < text.size(); i += 2)
    for (const char c : {'"', '<', '-', '9', 'e'}) {
      std::string corrupt = text;
      corrupt[i] = c;
      check(corrupt);
    }
}

// --- Scenes naming an MJCF file ----------------------------------------------------------

constexpr const char* kFallingBall = R"(<mujoco><option gravity="0 0 -5"/><worldbody>
  <body name="ball" pos="0.5 0 2"><freejoint/><geom type="sphere" size="0.1" mass="2"/></body>
</worldbody></mujoco>)";

// The state entry `name` of the scene's system after `steps` steps of dt.
double after_steps(const io::Scene& scene, int steps, const std::string& name) {
  const std::unique_ptr<sim::System> system = run::make_system(scene);
  for (int k = 0; k < steps; ++k) system->step(k * scene.dt, scene.dt);
  std::vector<double> x(system->state_size());
  system->get_state(x);
  const std::vector<std::string> names = system->state_names();
  const auto at = std::find(names.begin(), names.end(), name);
  if (at == names.end()) throw std::runtime_error("no state entry " + name);
  return x[std::size_t(at - names.begin())];
}

// A tree scene's "mjcf": the free root's coordinates are zero at the file's pose and fall
// under the file's <option gravity>, or the scene's "gravity" where it gives one; the
// midpoint VI is exact for a constant acceleration: z = -g t^2 / 2.
TEST(MjcfScene, TreeFallsUnderTheFilesGravity) {
  const test::TempDir dir;
  dir.write("ball.xml", kFallingBall);
  const auto scene = [&](const std::string& gravity) {
    return io::load_scene(dir.write("scene.json", R"({"system": {"type": "tree", "mjcf": "ball.xml")" +
                                                      gravity + R"(}, "dt": 0.01, "duration": 0.2})"));
  };
  const io::Scene from_file = scene("");
  EXPECT_EQ(from_file.source, "mjcf");
  EXPECT_NEAR(after_steps(from_file, 20, "ball_z"), -0.5 * 5.0 * 0.2 * 0.2, 1e-12);
  EXPECT_NEAR(after_steps(from_file, 20, "ball_x"), 0.0, 1e-15);
  EXPECT_NEAR(after_steps(scene(R"(, "gravity": [0, 0, -2])"), 20, "ball_z"), -0.5 * 2.0 * 0.04,
              1e-12);
}

// A maximal scene's "mjcf": the free body falls under the file's gravity. The maximal VI's
// velocity is the step's difference quotient, so from rest v_k = -g k dt and the body is
// at z_N - z_0 = -g dt^2 N (N + 1) / 2.
TEST(MjcfScene, MaximalFallsUnderTheFilesGravity) {
  const test::TempDir dir;
  dir.write("ball.xml", kFallingBall);
  const io::Scene scene = io::load_scene(
      dir.write("scene.json", R"({"system": {"type": "maximal", "mjcf": "ball.xml"}, "dt": 0.01,
                                 "duration": 0.2})"));
  EXPECT_EQ(scene.source, "mjcf");
  const double z0 = after_steps(scene, 0, "ball_z");
  EXPECT_NEAR(after_steps(scene, 20, "ball_z") - z0, -5.0 * 1e-4 * 20 * 21 / 2, 1e-12);
}

// "model-suites:PATH" names a file of the installed suites ($MARSDEN_MODEL_SUITES_DIR
// here); "base" is the file's to say; both "urdf" and "mjcf" is an error.
TEST(MjcfScene, SuitesPrefixAndErrorsNameTheField) {
  const test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "suites" / "gymnasium");
  dir.write("suites/gymnasium/ball.xml", kFallingBall);
  ::setenv("MARSDEN_MODEL_SUITES_DIR", (dir.path() / "suites").c_str(), 1);
  const io::Scene scene = io::load_scene(dir.write(
      "suite.json", R"({"system": {"type": "tree", "mjcf": "model-suites:gymnasium/ball.xml"},
                       "dt": 0.01, "duration": 0.1})"));
  ::unsetenv("MARSDEN_MODEL_SUITES_DIR");
  EXPECT_EQ(scene.urdf_file, dir.path() / "suites" / "gymnasium" / "ball.xml");
  const auto error = [&](const std::string& system) {
    try {
      io::load_scene(dir.write("bad.json", R"({"system": )" + system +
                                               R"(, "dt": 0.01, "duration": 0.1})"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error(R"({"type": "tree", "mjcf": "ball.xml", "base": "fixed"})")
                .find("field 'system.base': an MJCF file says its base itself"),
            std::string::npos);
  EXPECT_NE(error(R"({"type": "maximal", "mjcf": "ball.xml", "urdf": "arm.urdf"})")
                .find("expected exactly one of"),
            std::string::npos);
  EXPECT_NE(error(R"({"type": "tree", "mjcf": "missing.xml"})").find("field 'system.mjcf'"),
            std::string::npos);
}

// <motor gear ctrlrange>: a cart of 2 kg on a slide under a constant control feels
// gear * u, u clamped to ctrlrange, in both engines: from rest the tree's midpoint VI gives
// x = a t^2 / 2 and the maximal VI x_N = a dt^2 N (N + 1) / 2, a = gear clamp(u) / m.
TEST(MjcfScene, MotorsPushWithGearTimesTheClampedControl) {
  const test::TempDir dir;
  dir.write("cart.xml", R"(<mujoco><option gravity="0 0 -9.81"/><worldbody>
    <body name="cart"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/></body></worldbody>
    <actuator><motor joint="slide" gear="5" ctrlrange="-1 1"/></actuator></mujoco>)");
  for (const double u : {0.3, 3.0, -2.0}) {
    const double a = 5.0 * std::clamp(u, -1.0, 1.0) / 2.0;
    const std::string controls =
        R"(, "dt": 0.01, "duration": 0.2, "controls": {"type": "constant", "value": [)" +
        std::to_string(u) + "]}}";
    const io::Scene tree = io::load_scene(
        dir.write("tree.json", R"({"system": {"type": "tree", "mjcf": "cart.xml"})" + controls));
    EXPECT_NEAR(after_steps(tree, 20, "slide"), 0.5 * a * 0.2 * 0.2, 1e-12) << u;
    const io::Scene maximal = io::load_scene(
        dir.write("maximal.json", R"({"system": {"type": "maximal", "mjcf": "cart.xml"})" + controls));
    EXPECT_NEAR(after_steps(maximal, 20, "cart_x") - after_steps(maximal, 0, "cart_x"),
                a * 1e-4 * 20 * 21 / 2, 1e-12)
        << u;
  }
  // The motors are the inputs: a maximal scene's "inputs" is refused for such a file.
  try {
    io::load_scene(dir.write("inputs.json", R"({"system": {"type": "maximal", "mjcf": "cart.xml",
        "inputs": ["slide"]}, "dt": 0.01, "duration": 0.1})"));
    ADD_FAILURE() << "inputs beside motors accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("<motor>s are the inputs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace marsden
