#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include "io/temp_dir.hpp"
#include "io/urdf_lookup.hpp"
#include "marsden/error.hpp"
#include "marsden/io/urdf.hpp"
#include "marsden/maximal/contact.hpp"
#include "marsden/maximal/setup.hpp"
#include "marsden/tree/data.hpp"
#include "marsden/tree/dynamics.hpp"
#include "marsden/tree/model.hpp"

namespace marsden::io {
namespace {

using test::TempDir;

const std::filesystem::path kExamples =
    std::filesystem::path(MARSDEN_SOURCE_DIR) / "examples" / "urdf";

// Rotation by `angle` about the unit vector u (Rodrigues), written out here so that the
// expected values do not share code with the reader.
Mat3 rotation(const Vec3& u, double angle) {
  Mat3 K;
  K << 0, -u.z(), u.y(), u.z(), 0, -u.x(), -u.y(), u.x(), 0;
  return Mat3::Identity() + std::sin(angle) * K + (1.0 - std::cos(angle)) * K * K;
}

// URDF's rpy: fixed axes x, then y, then z.
Mat3 rpy(double roll, double pitch, double yaw) {
  return rotation(Vec3::UnitZ(), yaw) * rotation(Vec3::UnitY(), pitch) *
         rotation(Vec3::UnitX(), roll);
}

using test::joint_named;
using test::link_named;

// --- Reading the examples -------------------------------------------------------------

TEST(UrdfRead, DoublePendulum) {
  const UrdfModel m = read_urdf(kExamples / "double_pendulum.urdf");
  EXPECT_EQ(m.name, "double_pendulum");
  EXPECT_EQ(m.root, "base");
  ASSERT_EQ(m.links.size(), 3u);
  ASSERT_EQ(m.joints.size(), 2u);
  EXPECT_EQ(m.joints[0].name, "shoulder");
  EXPECT_EQ(m.joints[1].name, "elbow");
  for (const UrdfJoint& j : m.joints) {
    EXPECT_EQ(j.type, UrdfJointType::Continuous);
    EXPECT_EQ(j.axis, Vec3::UnitX());
    EXPECT_FALSE(j.has_limits);
    EXPECT_EQ(m.links[j.parent_index].name, j.parent);
    EXPECT_EQ(m.links[j.child_index].name, j.child);
  }
  EXPECT_TRUE(m.joints[1].origin.R.isIdentity());
  EXPECT_EQ(m.joints[1].origin.x, Vec3(0, 0, -1.0));
  EXPECT_FALSE(link_named(m, "base").has_inertial);
  const UrdfLink& upper = link_named(m, "upper");
  EXPECT_TRUE(upper.has_inertial);
  EXPECT_EQ(upper.mass, 1.0);
  EXPECT_EQ(upper.inertial_origin.x, Vec3(0, 0, -0.5));
  EXPECT_EQ(upper.inertia, Vec3(0.0835, 0.0835, 0.0005).asDiagonal().toDenseMatrix());
}

TEST(UrdfRead, ArmOriginsAxesAndInertias) {
  const UrdfModel m = read_urdf(kExamples / "arm.urdf");
  EXPECT_EQ(m.root, "base_link");
  ASSERT_EQ(m.joints.size(), 6u);

  const UrdfJoint& pitch = joint_named(m, "shoulder_pitch");
  EXPECT_EQ(pitch.type, UrdfJointType::Revolute);
  EXPECT_TRUE(pitch.axis.isApprox(Vec3(0, 1, 1) / std::sqrt(2.0), 1e-15));
  EXPECT_TRUE(pitch.origin.R.isApprox(rpy(0.2, -0.4, 0.1), 1e-14));
  EXPECT_EQ(pitch.origin.x, Vec3(0.05, 0, 0.1));
  EXPECT_TRUE(joint_named(m, "elbow").origin.R.isApprox(rpy(-0.3, 0.1, 0.7), 1e-14));
  EXPECT_TRUE(joint_named(m, "elbow").axis.isApprox(Vec3(1, -2, 0.5) / std::sqrt(5.25), 1e-15));
  EXPECT_EQ(joint_named(m, "wrist").axis, Vec3(-1, 0, 0));
  EXPECT_EQ(joint_named(m, "finger").type, UrdfJointType::Prismatic);
  EXPECT_EQ(joint_named(m, "tool_mount").type, UrdfJointType::Fixed);

  const UrdfJoint& yaw = joint_named(m, "shoulder_yaw");
  EXPECT_TRUE(yaw.has_limits);
  EXPECT_EQ(yaw.lower, -3.0);
  EXPECT_EQ(yaw.upper, 3.0);
  EXPECT_EQ(yaw.effort, 80.0);
  EXPECT_EQ(yaw.velocity, 2.0);
  EXPECT_EQ(yaw.damping, 0.5);
  EXPECT_EQ(yaw.friction, 0.1);

  const UrdfLink& upper = link_named(m, "upper_arm");
  EXPECT_TRUE(upper.inertial_origin.R.isApprox(rpy(0.1, 0.2, -0.3), 1e-14));
  Mat3 expected;
  expected << 0.034, 0.002, -0.001, 0.002, 0.033, 0.0015, -0.001, 0.0015, 0.004;
  EXPECT_TRUE(upper.inertia.isApprox(expected, 1e-14)) << upper.inertia;
}

TEST(UrdfRead, CartPole) {
  const UrdfModel m = read_urdf(kExamples / "cart_pole.urdf");
  EXPECT_EQ(m.root, "rail");
  ASSERT_EQ(m.joints.size(), 2u);
  EXPECT_EQ(m.joints[0].type, UrdfJointType::Prismatic);
  EXPECT_EQ(m.joints[1].type, UrdfJointType::Revolute);
  EXPECT_EQ(m.joints[0].damping, 0.1);
  EXPECT_EQ(m.joints[1].lower, -3.14159);
  EXPECT_EQ(m.joints[1].axis, Vec3::UnitY());
}

// Joints are returned parent first whatever their order in the file; indices follow.
TEST(UrdfRead, JointsParentFirst) {
  const UrdfModel m = parse_urdf(R"(<robot name="r">
      <link name="c"/> <link name="b"/> <link name="a"/> <link name="d"/>
      <joint name="bc" type="fixed"><parent link="b"/><child link="c"/></joint>
      <joint name="ad" type="fixed"><parent link="a"/><child link="d"/></joint>
      <joint name="ab" type="fixed"><parent link="a"/><child link="b"/></joint>
    </robot>)",
                                 "order.urdf");
  EXPECT_EQ(m.root, "a");
  ASSERT_EQ(m.joints.size(), 3u);
  std::vector<bool> placed(m.links.size(), false);
  placed[2] = true;  // the root, "a"
  for (const UrdfJoint& j : m.joints) {
    EXPECT_TRUE(placed[j.parent_index]) << j.name;
    placed[j.child_index] = true;
  }
  EXPECT_EQ(m.joints[0].name, "ad");  // siblings keep file order
}

TEST(UrdfRead, FileErrorsNameThePath) {
  const TempDir dir;
  try {
    read_urdf(dir / "absent.urdf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.urdf"), std::string::npos) << e.what();
  }
  const auto path = dir.write(
      "bad.urdf", R"(<robot name="r"><link name="a"/><joint name="j" type="ball"/></robot>)");
  try {
    read_urdf(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string expected = path.string() + ": joint \"j\": unknown type \"ball\"";
    EXPECT_EQ(std::string(e.what()).rfind(expected, 0), 0u) << e.what();
  }
}

// --- Validation -----------------------------------------------------------------------

std::string robot(const std::string& body) { return "<robot name=\"r\">\n" + body + "\n</robot>"; }

// A link "b" hanging from the root "a" by joint "j" with the given type and extra
// elements, plus link "b"'s own content.
std::string two_links(const std::string& type, const std::string& joint_extra,
                      const std::string& link_b = "") {
  return robot(R"(<link name="a"/><link name="b">)" + link_b + R"(</link>
      <joint name="j" type=")" + type + R"("><parent link="a"/><child link="b"/>)" +
               joint_extra + "</joint>");
}

// Link "b" of two_links with one <visual> holding `inside`.
std::string two_links_with_visual(const std::string& inside) {
  return robot(R"(<link name="a"/><link name="b">
      <visual>)" + inside + R"(</visual></link>
      <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>)");
}

const std::string kLimit = R"(<limit lower="-1" upper="1" effort="1" velocity="1"/>)";

std::string inertial(const std::string& mass, const std::string& inertia,
                     const std::string& origin = "") {
  return "<inertial>" + origin + R"(<mass value=")" + mass + R"("/><inertia )" + inertia +
         "/></inertial>";
}

// Tiago's antenna links (example-robot-data 6.0.0): ixy exceeds sqrt(ixx iyy), eigenvalues
// (-3.5e-8, 3.5e-8, 9.1e-8) kg m^2, far beyond round-off.
const char* const kAntenna = R"(ixx="2.371e-08" ixy="6.119e-08" ixz="1.179e-08" iyy="2.833e-08" iyz="7.74e-09" izz="3.849e-08")";

struct ErrorCase {
  const char* what;
  std::string xml;
  std::vector<std::string> expected;  // substrings of the message
};

// Each case fails to parse with an error that starts with the source name and names
// every expected part.
void expect_errors(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    std::string message;
    try {
      parse_urdf(c.xml, "case.urdf");
    } catch (const InputError& e) {
      message = e.what();
    }
    ASSERT_FALSE(message.empty()) << c.what << ": no error";
    EXPECT_EQ(message.rfind("case.urdf: ", 0), 0u) << c.what << ": " << message;
    for (const std::string& s : c.expected)
      EXPECT_NE(message.find(s), std::string::npos) << c.what << ": \"" << s << "\" not in: " << message;
  }
}

TEST(UrdfRead, ErrorsNameTheElement) {
  const std::string diag = R"(ixx="1" iyy="1" izz="1")";
  const std::vector<ErrorCase> cases = {
      {"malformed XML", R"(<robot name="r">
          <link name="a"></robot>)", {"line 2", "malformed XML"}},
      {"empty document", "", {"malformed XML"}},
      {"missing robot", R"(<robo name="r"><link name="a"/></robo>)", {"<robot>"}},
      {"no link", robot(""), {"robot \"r\"", "no <link>"}},
      {"link without name", robot(R"(<link/>)"), {"link", "\"name\"", "line 2"}},
      {"joint without name",
       robot(R"(<link name="a"/><link name="b"/><joint type="fixed"><parent link="a"/><child link="b"/></joint>)"),
       {"joint", "\"name\""}},
      {"duplicate link", robot(R"(<link name="a"/><link name="a"/>)"), {"link \"a\"", "duplicate"}},
      {"duplicate joint",
       robot(R"(<link name="a"/><link name="b"/><link name="c"/>
           <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>
           <joint name="j" type="fixed"><parent link="a"/><child link="c"/></joint>)"),
       {"joint \"j\"", "duplicate"}},
      {"missing parent link",
       robot(R"(<link name="b"/><joint name="j" type="fixed"><parent link="zz"/><child link="b"/></joint>)"),
       {"joint \"j\"", "\"zz\"", "does not exist"}},
      {"missing child link",
       robot(R"(<link name="a"/><joint name="j" type="fixed"><parent link="a"/><child link="zz"/></joint>)"),
       {"joint \"j\"", "\"zz\"", "does not exist"}},
      {"joint without <parent>",
       robot(R"(<link name="a"/><link name="b"/><joint name="j" type="fixed"><child link="b"/></joint>)"),
       {"joint \"j\"", "<parent>"}},
      {"two parents",
       robot(R"(<link name="a"/><link name="b"/><link name="c"/>
           <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
           <joint name="j2" type="fixed"><parent link="a"/><child link="c"/></joint>
           <joint name="j3" type="fixed"><parent link="b"/><child link="c"/></joint>)"),
       {"link \"c\"", "two parents", "\"j2\"", "\"j3\""}},
      {"cycle",
       robot(R"(<link name="a"/><link name="b"/><link name="c"/>
           <joint name="j1" type="fixed"><parent link="b"/><child link="c"/></joint>
           <joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint>)"),
       {"joint \"j1\"", "cycle"}},
      {"cycle without root",
       robot(R"(<link name="a"/><link name="b"/>
           <joint name="j1" type="fixed"><parent link="a"/><child link="b"/></joint>
           <joint name="j2" type="fixed"><parent link="b"/><child link="a"/></joint>)"),
       {"robot \"r\"", "cycle"}},
      {"self loop",
       robot(R"(<link name="a"/><joint name="j" type="fixed"><parent link="a"/><child link="a"/></joint>)"),
       {"joint \"j\"", "cycle"}},
      {"two roots", robot(R"(<link name="a"/><link name="b"/>)"),
       {"more than one root", "\"a\"", "\"b\""}},
      {"unknown type", two_links("ball", ""), {"joint \"j\"", "unknown type \"ball\""}},
      {"floating", two_links("floating", ""), {"joint \"j\"", "\"floating\"", "not supported"}},
      {"planar", two_links("planar", ""), {"joint \"j\"", "\"planar\"", "not supported"}},
      {"revolute without limits", two_links("revolute", ""), {"joint \"j\"", "needs <limit"}},
      {"prismatic without limits", two_links("prismatic", ""), {"joint \"j\"", "needs <limit"}},
      {"limit without effort",
       two_links("revolute", R"(<limit lower="0" upper="1" velocity="1"/>)"),
       {"joint \"j\"", "\"effort\""}},
      {"lower > upper",
       two_links("revolute", R"(<limit lower="1" upper="-1" effort="1" velocity="1"/>)"),
       {"joint \"j\"", "lower", "upper"}},
      {"zero axis", two_links("continuous", R"(<axis xyz="0 0 0"/>)"), {"joint \"j\"", "zero axis"}},
      {"negative damping", two_links("continuous", R"(<dynamics damping="-1"/>)"),
       {"joint \"j\"", "damping"}},
      {"mimic of a missing joint", two_links("continuous", R"(<mimic joint="k"/>)"),
       {"joint \"j\"", "<mimic joint> \"k\" does not exist"}},
      {"mimic of itself", two_links("continuous", R"(<mimic joint="j"/>)"),
       {"joint \"j\"", "names the joint itself"}},
      {"negative mass", two_links("fixed", "", inertial("-2", diag)), {"link \"b\"", "mass"}},
      {"inertial without mass", two_links("fixed", "", "<inertial><inertia " + diag + "/></inertial>"),
       {"link \"b\"", "<mass>"}},
      {"negative moment", two_links("fixed", "", inertial("1", R"(ixx="1" iyy="1" izz="-1")")),
       {"link \"b\"", "positive semi-definite"}},
      {"indefinite inertia",
       two_links("fixed", "", inertial("1", R"(ixx="1" ixy="2" iyy="1" izz="1")")),
       {"link \"b\"", "positive semi-definite"}},
      {"indefinite beyond round-off",
       two_links("fixed", "", inertial("1", R"(ixx="1" iyy="1" izz="-1e-8")")),
       {"link \"b\"", "positive semi-definite"}},
      {"unphysical inertia on a joint of its own",
       two_links("continuous", "", inertial("1e-6", kAntenna)),
       {"link \"b\"", "positive semi-definite", "line 2"}},
      {"welded links whose combined inertia is unphysical too",
       robot(R"(<link name="a">)" + inertial("1", R"(ixx="1e-8" iyy="1e-8" izz="1e-8")") +
             R"(</link><link name="b">)" + inertial("1e-6", kAntenna) + R"(</link>
             <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>)"),
       {"link \"b\"", "positive semi-definite", "nor is the inertia of the 2 links welded"}},
      {"NaN", two_links("fixed", R"(<origin xyz="0 nan 0"/>)"), {"joint \"j\"", "xyz", "\"nan\""}},
      {"inf", two_links("fixed", "", inertial("inf", diag)), {"link \"b\"", "value", "\"inf\""}},
      {"unparsable", two_links("fixed", R"(<origin rpy="0 1.0abc 0"/>)"),
       {"joint \"j\"", "rpy", "\"1.0abc\""}},
      {"unparsable scalar", two_links("fixed", "", inertial("1", R"(ixx="one" iyy="1" izz="1")")),
       {"link \"b\"", "ixx", "\"one\""}},
      {"two numbers", two_links("fixed", R"(<origin xyz="0 0"/>)"), {"joint \"j\"", "xyz", "3 numbers"}},
      {"four angles", two_links("fixed", R"(<origin rpy="0 0 0 0"/>)"), {"joint \"j\"", "rpy", "3 numbers"}},
      {"short axis", two_links("continuous", R"(<axis xyz="1 0"/>)"), {"joint \"j\"", "axis", "3 numbers"}},
  };
  expect_errors(cases);
}

// --- <visual> geometry (the player's, docs/viewer.md) ----------------------------------

TEST(UrdfVisual, ReadsShapesOriginsAndMeshes) {
  const UrdfModel m = read_urdf(kExamples / "visual_pendulum.urdf");
  const UrdfLink& base = link_named(m, "base");
  ASSERT_EQ(base.visuals.size(), 2u);
  EXPECT_EQ(base.visuals[0].shape, UrdfShape::Box);
  EXPECT_EQ(base.visuals[0].size, Vec3(0.4, 0.2, 0.2));
  EXPECT_EQ(base.visuals[0].origin.x, Vec3(0, 0, 0.1));
  EXPECT_TRUE(base.visuals[0].origin.R.isIdentity());
  EXPECT_EQ(base.visuals[1].shape, UrdfShape::Cylinder);
  EXPECT_EQ(base.visuals[1].radius, 0.04);
  EXPECT_EQ(base.visuals[1].length, 0.3);
  // rpy (0, pi/2, 0): the cylinder's z axis along the link's x.
  EXPECT_TRUE(base.visuals[1].origin.R.isApprox(rpy(0, 1.5707963267948966, 0), 1e-15));
  EXPECT_LT((base.visuals[1].origin.R * Vec3::UnitZ() - Vec3::UnitX()).norm(), 1e-15);
  const UrdfLink& upper = link_named(m, "upper");
  ASSERT_EQ(upper.visuals.size(), 2u);
  EXPECT_EQ(upper.visuals[1].shape, UrdfShape::Sphere);
  EXPECT_EQ(upper.visuals[1].radius, 0.06);
  EXPECT_EQ(upper.visuals[1].origin.x, Vec3(0, 0, -1.0));
  const UrdfLink& lower = link_named(m, "lower");
  ASSERT_EQ(lower.visuals.size(), 2u);
  EXPECT_EQ(lower.visuals[1].shape, UrdfShape::Mesh);
  EXPECT_EQ(lower.visuals[1].filename, "meshes/weight.stl");
  EXPECT_EQ(lower.visuals[1].scale, Vec3(0.1, 0.1, 0.15));
  const UrdfLink& paddle = link_named(m, "paddle");
  ASSERT_EQ(paddle.visuals.size(), 1u);
  EXPECT_EQ(paddle.visuals[0].filename, "package://urdf/meshes/paddle.obj");
  // Colours: the robot's "steel", the upper rod's own "orange", which the lower rod names.
  EXPECT_TRUE(base.visuals[0].has_color);
  EXPECT_EQ(base.visuals[0].rgba, Vec4(0.6, 0.6, 0.65, 1));
  EXPECT_FALSE(base.visuals[1].has_color);
  EXPECT_EQ(upper.visuals[0].rgba, Vec4(0.9, 0.5, 0.1, 1));
  EXPECT_TRUE(lower.visuals[0].has_color);
  EXPECT_EQ(lower.visuals[0].rgba, Vec4(0.9, 0.5, 0.1, 1));
  EXPECT_FALSE(paddle.visuals[0].has_color);
  // A mesh without scale is at scale 1; visuals change nothing in the dynamics.
  const UrdfModel plain = parse_urdf(two_links_with_visual(R"(<geometry><mesh filename="m.stl"/></geometry>)"), "p.urdf");
  EXPECT_EQ(link_named(plain, "b").visuals.at(0).scale, Vec3::Ones());
  EXPECT_FALSE(link_named(plain, "b").has_inertial);
}

TEST(UrdfVisual, MalformedVisualsNameTheLinkAndTheFile) {
  const std::vector<ErrorCase> cases = {
      {"no geometry", two_links_with_visual(""), {"link \"b\" <visual>", "missing <geometry>", "line 3"}},
      {"two geometries", two_links_with_visual(R"(<geometry><sphere radius="1"/></geometry><geometry/>)"),
       {"link \"b\" <visual>", "more than one <geometry>"}},
      {"empty geometry", two_links_with_visual("<geometry/>"), {"link \"b\" <visual>", "no shape"}},
      {"two shapes", two_links_with_visual(R"(<geometry><sphere radius="1"/><box size="1 1 1"/></geometry>)"),
       {"link \"b\" <visual>", "more than one shape"}},
      {"unknown shape", two_links_with_visual(R"(<geometry><capsule radius="1" length="1"/></geometry>)"),
       {"link \"b\" <visual>", "<capsule>", "box, cylinder, sphere or mesh"}},
      {"box without size", two_links_with_visual("<geometry><box/></geometry>"),
       {"link \"b\" <visual>", "<box> missing attribute \"size\""}},
      {"box of two numbers", two_links_with_visual(R"(<geometry><box size="1 1"/></geometry>)"),
       {"link \"b\" <visual>", "size", "3 numbers"}},
      {"flat box", two_links_with_visual(R"(<geometry><box size="1 0 1"/></geometry>)"),
       {"link \"b\" <visual>", "<box size> must be > 0"}},
      {"cylinder without length", two_links_with_visual(R"(<geometry><cylinder radius="1"/></geometry>)"),
       {"link \"b\" <visual>", "<cylinder> missing attribute \"length\""}},
      {"negative radius", two_links_with_visual(R"(<geometry><sphere radius="-1"/></geometry>)"),
       {"link \"b\" <visual>", "<sphere radius> must be > 0"}},
      {"NaN radius", two_links_with_visual(R"(<geometry><cylinder radius="nan" length="1"/></geometry>)"),
       {"link \"b\" <visual>", "radius", "\"nan\""}},
      {"mesh without file", two_links_with_visual("<geometry><mesh/></geometry>"),
       {"link \"b\" <visual>", "<mesh> missing attribute \"filename\""}},
      {"zero mesh scale", two_links_with_visual(R"(<geometry><mesh filename="m.stl" scale="1 0 1"/></geometry>)"),
       {"link \"b\" <visual>", "<mesh scale> must be non-zero"}},
      {"bad origin", two_links_with_visual(R"(<origin xyz="0 x 0"/><geometry><sphere radius="1"/></geometry>)"),
       {"link \"b\" <visual>", "xyz", "\"x\""}},
      {"colour without rgba", two_links_with_visual(R"(<geometry><sphere radius="1"/></geometry><material><color/></material>)"),
       {"link \"b\" <visual>", "<color> missing attribute \"rgba\""}},
      {"three channels", two_links_with_visual(R"(<geometry><sphere radius="1"/></geometry><material><color rgba="1 0 0"/></material>)"),
       {"link \"b\" <visual>", "rgba", "4 numbers"}},
      {"channel over 1", two_links_with_visual(R"(<geometry><sphere radius="1"/></geometry><material><color rgba="1 0 2 1"/></material>)"),
       {"link \"b\" <visual>", "rgba", "[0, 1]", "\"2\""}},
      {"robot material", robot(R"(<material name="m"><color rgba="0 0 nan 1"/></material><link name="a"/>)"),
       {"material \"m\"", "rgba", "\"nan\""}},
      {"unnamed robot material", robot(R"(<material/><link name="a"/>)"), {"material", "\"name\""}},
  };
  expect_errors(cases);
}

// <collision> is read like <visual>, and becomes contact shapes on the maximal bodies:
// spheres and boxes at their links' poses in their bodies (a link welded to another by a
// fixed joint shares its body), cylinders and meshes left out and named.
TEST(UrdfCollision, ShapesOnTheMaximalBodies) {
  const UrdfModel m = parse_urdf(robot(R"(
    <link name="base">
      <inertial><mass value="2"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><origin xyz="0 0 0.1"/><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
      <collision><geometry><cylinder radius="0.1" length="0.2"/></geometry></collision>
    </link>
    <link name="leg">
      <inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
      <collision><geometry><mesh filename="leg.stl"/></geometry></collision>
    </link>
    <link name="foot">
      <collision><origin xyz="0 0 -0.05"/><geometry><sphere radius="0.02"/></geometry></collision>
    </link>
    <joint name="hip" type="revolute"><parent link="base"/><child link="leg"/>
      <origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/>)" + kLimit + R"(</joint>
    <joint name="ankle" type="fixed"><parent link="leg"/><child link="foot"/>
      <origin xyz="0 0 -0.3"/></joint>)"),
                                 "c.urdf");
  ASSERT_EQ(m.links[0].collisions.size(), 2u);
  EXPECT_EQ(m.links[0].collisions[1].shape, UrdfShape::Cylinder);
  std::vector<std::string> left_out;
  const std::vector<maximal::CollisionShape> shapes =
      maximal::collision_shapes_from_urdf(m, true, 0.7, &left_out);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(left_out, (std::vector<std::string>{"link 'base': cylinder", "link 'leg': mesh"}));
  const maximal::Mechanism mech = maximal::mechanism_from_urdf(m, Vec3(0, 0, -9.81), true);
  // The box on the base (body 0, its frame the base link's), the sphere on the leg's body.
  EXPECT_EQ(shapes[0].name, "base");
  EXPECT_EQ(shapes[0].body, 0);
  EXPECT_DOUBLE_EQ(shapes[0].friction, 0.7);
  const auto& box = std::get<geometry::Box>(shapes[0].shape);
  EXPECT_TRUE(box.half_extents().isApprox(Vec3(0.2, 0.1, 0.05)));
  EXPECT_TRUE(box.g_bs().x.isApprox(Vec3(0.0, 0.0, 0.1)));
  EXPECT_EQ(shapes[1].name, "foot");
  EXPECT_EQ(shapes[1].body, 1);
  const auto& sphere = std::get<geometry::Sphere>(shapes[1].shape);
  EXPECT_DOUBLE_EQ(sphere.radius(), 0.02);
  // In the world the foot sphere's centre is 0.1 + 0.3 + 0.05 below the base link.
  const maximal::BodyState& leg = mech.state[1];
  const Vec3 centre = leg.x + leg.q.matrix() * sphere.g_bs().x;
  EXPECT_TRUE(centre.isApprox(Vec3(0.0, 0.0, -0.45), 1e-12)) << centre.transpose();
  // A fixed base's shapes are the world's: left out.
  left_out.clear();
  EXPECT_EQ(maximal::collision_shapes_from_urdf(m, false, 0.7, &left_out).size(), 1u);
  EXPECT_EQ(left_out.front(), "link 'base': on the fixed base");
  // A malformed <collision> is named.
  try {
    parse_urdf(robot(R"(<link name="a"><collision><geometry/></collision></link>)"), "d.urdf");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("link \"a\" <collision>"), std::string::npos) << e.what();
  }
}

TEST(UrdfVisual, MeshFilesResolveRelativeAndByPackage) {
  const TempDir dir;
  std::filesystem::create_directories(dir / "pkg/urdf");
  std::filesystem::create_directories(dir / "pkg/meshes");
  std::filesystem::create_directories(dir / "other/meshes");
  const auto urdf = dir.write("pkg/urdf/r.urdf", "<robot/>");
  const auto mesh = dir.write("pkg/meshes/m.stl", "solid m\nendsolid m\n");
  const auto other = dir.write("other/meshes/o.obj", "v 0 0 0\n");
  const auto same = [](const std::filesystem::path& a, const std::filesystem::path& b) {
    return !a.empty() && std::filesystem::equivalent(a, b);
  };
  EXPECT_TRUE(same(resolve_mesh_file("../meshes/m.stl", urdf), mesh));
  // package://PKG: a folder above the URDF file named PKG, or one that holds a folder PKG.
  EXPECT_TRUE(same(resolve_mesh_file("package://pkg/meshes/m.stl", urdf), mesh));
  EXPECT_TRUE(same(resolve_mesh_file("package://other/meshes/o.obj", urdf), other));
  EXPECT_TRUE(same(resolve_mesh_file("file://" + mesh.string(), urdf), mesh));
  EXPECT_TRUE(same(resolve_mesh_file(mesh.string(), urdf), mesh));
  for (const std::string missing : {"m.stl", "package://pkg/meshes/none.stl", "package://nopkg/m.stl",
                                    "package://pkg", "file:///nowhere/m.stl", "../meshes"})
    EXPECT_TRUE(resolve_mesh_file(missing, urdf).empty()) << missing;
}

TEST(UrdfRead, AcceptsMinimalForms) {
  // Massless links, defaults for origin, axis and dynamics, continuous joints without
  // limits, whitespace around numbers and elements that carry no dynamics.
  const UrdfModel m = parse_urdf(two_links("continuous", R"(<origin xyz=" 1  2
      3 "/>)", R"(<visual><geometry><box size="1 1 1"/></geometry></visual>)"),
                                 "min.urdf");
  const UrdfJoint& j = m.joints.at(0);
  EXPECT_EQ(j.axis, Vec3::UnitX());
  EXPECT_EQ(j.origin.x, Vec3(1, 2, 3));
  EXPECT_TRUE(j.origin.R.isIdentity());
  EXPECT_EQ(j.damping, 0.0);
  EXPECT_FALSE(m.links[1].has_inertial);
}

// What real robot files do (example-robot-data): zero-mass inertials, round-off in
// inertias, point masses, an unnamed robot, an axis on a fixed joint, a <mimic> on a fixed
// joint, a link and a joint of one name.
TEST(UrdfRead, AcceptsWhatRealFilesDo) {
  const std::string diag = R"(ixx="1" iyy="2" izz="3")";
  const UrdfModel zero = parse_urdf(two_links("fixed", "", inertial("0", R"(ixx="0" iyy="0" izz="0")")), "z.urdf");
  EXPECT_FALSE(zero.links[1].has_inertial);
  const UrdfModel rotor = parse_urdf(two_links("fixed", "", inertial("0", diag)), "r.urdf");
  EXPECT_TRUE(rotor.links[1].has_inertial);
  EXPECT_EQ(rotor.links[1].mass, 0.0);
  // Eigenvalues (-1.3e-22, 2.2e-22, 3e-6), as in a real file: the round-off becomes 0.
  const UrdfModel cad = parse_urdf(
      two_links("fixed", "", inertial("0.1", R"(ixx="3e-06" iyy="-1.3e-22" izz="2.2e-22")")),
      "c.urdf");
  const Vec3 eig = Eigen::SelfAdjointEigenSolver<Mat3>(cad.links[1].inertia).eigenvalues();
  EXPECT_EQ(eig.minCoeff(), 0.0);
  EXPECT_NEAR(eig.maxCoeff(), 3e-6, 1e-20);
  const UrdfModel point = parse_urdf(two_links("fixed", "", inertial("1", R"(ixx="0" iyy="0" izz="0")")), "p.urdf");
  EXPECT_TRUE(point.links[1].has_inertial);
  EXPECT_TRUE(point.links[1].inertia.isZero());
  // Physical consistency belongs to rigid bodies: an unphysical 1 mg antenna welded to a
  // 10 kg base loads (the engines see only the base and antenna together), its own inertia
  // as the file gives it.
  const UrdfModel antenna = parse_urdf(
      robot(R"(<link name="a">)" + inertial("10", R"(ixx="0.1" iyy="0.2" izz="0.3")") +
            R"(</link><link name="b">)" + inertial("1e-6", kAntenna) + R"(</link>
            <joint name="j" type="fixed"><parent link="a"/><child link="b"/>
            <origin xyz="0.1 0 0.2"/></joint>)"),
      "antenna.urdf");
  EXPECT_LT(Eigen::SelfAdjointEigenSolver<Mat3>(antenna.links[1].inertia).eigenvalues().minCoeff(), -3e-8);
  const UrdfRigidBodies bodies = rigid_bodies(antenna);
  ASSERT_EQ(bodies.bodies.size(), 1u);
  EXPECT_NEAR(bodies.bodies[0].mass, 10.000001, 1e-12);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat3>(bodies.bodies[0].inertia).eigenvalues().minCoeff(), 0.09);
  EXPECT_EQ(parse_urdf(R"(<robot><link name="a"/></robot>)", "dir/unnamed.urdf").name, "unnamed");
  const UrdfModel fixed = parse_urdf(two_links("fixed", R"(<axis xyz="0 0 0"/><mimic joint="q"/>)"), "f.urdf");
  EXPECT_TRUE(fixed.joints[0].mimic.empty());
  const UrdfModel same = parse_urdf(robot(R"(<link name="a"/><link name="b">)" + inertial("1", diag) + R"(</link>
      <joint name="b" type="continuous"><parent link="a"/><child link="b"/></joint>)"), "s.urdf");
  const tree::Model model = tree::model_from_urdf(same);
  EXPECT_EQ(model.frames()[model.frame_index("b")].type, tree::Transform::Const);  // the link
  EXPECT_EQ(model.frames()[model.frame_index("b_joint")].type, tree::Transform::Rx);
  EXPECT_EQ(model.coords()[0].name, "b");
}

// --- Conversion to a tree model -------------------------------------------------------

TEST(UrdfTree, CartPoleStructure) {
  UrdfTreeOptions options;
  options.gravity = Vec3(0, 0, -9.8);
  const tree::Model model = tree::model_from_urdf(read_urdf(kExamples / "cart_pole.urdf"), options);
  ASSERT_EQ(model.num_coords(), 2);
  const int slider = model.coord_index("slider"), hinge = model.coord_index("hinge");
  EXPECT_EQ(model.coords()[slider].lower, -2.0);
  EXPECT_EQ(model.coords()[slider].upper, 2.0);
  EXPECT_EQ(model.coords()[hinge].upper, 3.14159);
  EXPECT_EQ(model.frames()[model.frame_index("slider")].type, tree::Transform::Tx);
  EXPECT_EQ(model.frames()[model.frame_index("hinge")].type, tree::Transform::Ry);
  for (const char* frame : {"rail", "slider_origin", "cart", "hinge_origin", "pole"})
    EXPECT_EQ(model.frames()[model.frame_index(frame)].type, tree::Transform::Const) << frame;
  ASSERT_EQ(model.coordinate_dampers().size(), 2u);
  EXPECT_EQ(model.coordinate_dampers()[0].coord, slider);
  EXPECT_EQ(model.coordinate_dampers()[0].damping, 0.1);
  EXPECT_EQ(model.coordinate_dampers()[1].damping, 0.01);
  ASSERT_EQ(model.masses().size(), 2u);  // the rail is massless
  EXPECT_EQ(model.gravity(), Vec3(0, 0, -9.8));
}

TEST(UrdfTree, RootMassIsIgnored) {
  const UrdfModel urdf = read_urdf(kExamples / "arm.urdf");
  const tree::Model model = tree::model_from_urdf(urdf);
  EXPECT_TRUE(link_named(urdf, "base_link").has_inertial);
  const int base = model.frame_index("base_link");
  EXPECT_EQ(model.masses().size(), 5u);  // one per moving rigid body: the tool is the hand's
  for (const tree::Mass& mass : model.masses()) EXPECT_NE(mass.frame, base);
}

// The expected world pose of every link: the product, root to link, of the URDF joint
// origins and of the joint motions (rotation about, or translation along, the axis).
std::vector<SE3> expected_link_poses(const UrdfModel& urdf, const tree::Model& model,
                                     const tree::VecX& q, const SE3& base) {
  std::vector<SE3> pose(urdf.links.size());
  for (std::size_t i = 0; i < urdf.links.size(); ++i)
    if (urdf.links[i].name == urdf.root) pose[i] = base;
  for (const UrdfJoint& j : urdf.joints) {
    SE3 motion;
    if (j.type == UrdfJointType::Prismatic) motion.x = q[model.coord_index(j.name)] * j.axis;
    else if (j.type != UrdfJointType::Fixed) motion.R = rotation(j.axis, q[model.coord_index(j.name)]);
    pose[j.child_index] = pose[j.parent_index] * j.origin * motion;
  }
  return pose;
}

TEST(UrdfTree, ArmFramePosesMatchTheUrdfChain) {
  const UrdfModel urdf = read_urdf(kExamples / "arm.urdf");
  UrdfTreeOptions options;
  options.base_pose = SE3{rotation(Vec3(1, 2, 3).normalized(), 0.4), Vec3(0.3, -0.2, 1.0)};
  const tree::Model model = tree::model_from_urdf(urdf, options);
  ASSERT_EQ(model.num_coords(), 5);
  EXPECT_EQ(model.coords()[model.coord_index("elbow")].lower, -2.5);
  EXPECT_EQ(model.coords()[model.coord_index("wrist")].lower, -1e300);  // continuous: none

  tree::Data data(model);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int trial = 0; trial < 5; ++trial) {
    tree::VecX q(model.num_coords()), qd = tree::VecX::Zero(model.num_coords());
    for (int i = 0; i < q.size(); ++i) q[i] = u(rng);
    tree::frame_kinematics(model, data, q, qd, 0);
    const std::vector<SE3> expected = expected_link_poses(urdf, model, q, options.base_pose);
    for (std::size_t i = 0; i < urdf.links.size(); ++i) {
      const SE3& g = data.g_s[model.frame_index(urdf.links[i].name)];
      EXPECT_TRUE(g.R.isApprox(expected[i].R, 1e-12)) << urdf.links[i].name;
      EXPECT_LT((g.x - expected[i].x).norm(), 1e-12) << urdf.links[i].name;
    }
  }
}

// Kinetic and potential energy of the arm, computed from the expected poses alone: the
// centre-of-mass velocity and the angular velocity come from central differences of the
// poses along qd, the inertia is rotated into the world with the centre-of-mass frame.
TEST(UrdfTree, ArmEnergyMatchesDirectSum) {
  const UrdfModel urdf = read_urdf(kExamples / "arm.urdf");
  const tree::Model model = tree::model_from_urdf(urdf);
  tree::Data data(model);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  const Vec3 g(0, 0, -9.81);
  const double eps = 1e-6;
  for (int trial = 0; trial < 3; ++trial) {
    tree::VecX q(model.num_coords()), qd(model.num_coords());
    for (int i = 0; i < q.size(); ++i) {
      q[i] = u(rng);
      qd[i] = u(rng);
    }
    const auto pose = expected_link_poses(urdf, model, q, SE3{});
    const auto plus = expected_link_poses(urdf, model, q + eps * qd, SE3{});
    const auto minus = expected_link_poses(urdf, model, q - eps * qd, SE3{});
    double kinetic = 0.0, potential = 0.0;
    for (std::size_t i = 0; i < urdf.links.size(); ++i) {
      const UrdfLink& link = urdf.links[i];
      if (!link.has_inertial || link.name == urdf.root) continue;
      const SE3 com = pose[i] * link.inertial_origin;
      const Vec3 v = ((plus[i] * link.inertial_origin).x - (minus[i] * link.inertial_origin).x) / (2 * eps);
      const Mat3 W = (plus[i].R - minus[i].R) / (2 * eps) * pose[i].R.transpose();
      const Vec3 w(W(2, 1), W(0, 2), W(1, 0));
      const Mat3 I_world = com.R * link.inertia * com.R.transpose();
      kinetic += 0.5 * link.mass * v.squaredNorm() + 0.5 * w.dot(I_world * w);
      potential -= link.mass * g.dot(com.x);
    }
    tree::lagrangian_terms(model, data, q, qd, true);
    EXPECT_NEAR(data.kinetic, kinetic, 1e-7 * (1.0 + kinetic));
    EXPECT_NEAR(data.potential, potential, 1e-10 * (1.0 + std::abs(potential)));
    EXPECT_NEAR(0.5 * qd.dot(data.M * qd), kinetic, 1e-7 * (1.0 + kinetic));
  }
}

// The URDF double pendulum against the same system built by hand with Rx joints.
TEST(UrdfTree, DoublePendulumMatchesHandBuiltTree) {
  const tree::Model from_urdf = tree::model_from_urdf(read_urdf(kExamples / "double_pendulum.urdf"));

  tree::ModelBuilder b;
  const int upper = b.add_joint_frame("upper", tree::kWorld, tree::Transform::Rx, "shoulder");
  b.add_mass(upper, 1.0, Vec3(0, 0, -0.5), Vec3(0.0835, 0.0835, 0.0005).asDiagonal());
  const int elbow_at = b.add_fixed_frame("elbow_at", upper, tree::Transform::Tz, -1.0);
  const int lower = b.add_joint_frame("lower", elbow_at, tree::Transform::Rx, "elbow");
  b.add_mass(lower, 0.5, Vec3(0, 0, -0.4), Vec3(0.027, 0.027, 0.0002).asDiagonal());
  const tree::Model by_hand = b.build();

  ASSERT_EQ(from_urdf.num_coords(), 2);
  ASSERT_EQ(from_urdf.coord_index("shoulder"), 0);
  ASSERT_EQ(from_urdf.coord_index("elbow"), 1);
  tree::Data d_urdf(from_urdf), d_hand(by_hand);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (int trial = 0; trial < 10; ++trial) {
    const tree::VecX q = tree::VecX::NullaryExpr(2, [&] { return u(rng); });
    const tree::VecX qd = tree::VecX::NullaryExpr(2, [&] { return u(rng); });
    tree::lagrangian_terms(from_urdf, d_urdf, q, qd, true);
    tree::lagrangian_terms(by_hand, d_hand, q, qd, true);
    EXPECT_TRUE(d_urdf.M.isApprox(d_hand.M, 1e-12)) << d_urdf.M << "\n" << d_hand.M;
    EXPECT_LT((d_urdf.L_q - d_hand.L_q).norm(), 1e-12 * (1.0 + d_hand.L_q.norm()));
    EXPECT_LT((d_urdf.L_v - d_hand.L_v).norm(), 1e-12 * (1.0 + d_hand.L_v.norm()));
    EXPECT_NEAR(d_urdf.potential, d_hand.potential, 1e-12);
  }
}

// One body on a joint with an arbitrary axis a through the joint origin o: M = a^T J a
// with J the inertia about the axis point, and L_q = m g . (a x (c - o)) for the centre
// of mass c, all in world axes.
TEST(UrdfTree, SingleBodyOnSkewAxis) {
  const UrdfModel urdf = parse_urdf(robot(R"(<link name="base"/>
      <joint name="j" type="continuous"><parent link="base"/><child link="body"/>
        <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.5 1.1"/><axis xyz="0.2 -0.7 0.4"/></joint>
      <link name="body"><inertial><origin xyz="0.4 0.1 -0.2" rpy="-0.6 0.2 0.9"/>
        <mass value="1.7"/><inertia ixx="0.5" ixy="0.05" ixz="-0.03" iyy="0.4" iyz="0.02" izz="0.3"/>
      </inertial></link>)"),
                                    "skew.urdf");
  const tree::Model model = tree::model_from_urdf(urdf);
  const UrdfJoint& j = urdf.joints[0];
  const UrdfLink& body = urdf.links[1];
  const Vec3 g(0, 0, -9.81);
  tree::Data data(model);
  for (const double angle : {0.0, 0.7, -2.4}) {
    const SE3 link = j.origin * SE3{rotation(j.axis, angle), Vec3::Zero()};
    const SE3 com = link * body.inertial_origin;
    const Vec3 a = j.origin.R * j.axis, r = com.x - j.origin.x;
    const Mat3 J = com.R * body.inertia * com.R.transpose() +
                   body.mass * (r.squaredNorm() * Mat3::Identity() - r * r.transpose());
    tree::VecX q(1), qd(1);
    q << angle;
    qd << 0.8;
    tree::lagrangian_terms(model, data, q, qd, true);
    EXPECT_NEAR(data.M(0, 0), a.dot(J * a), 1e-12);
    EXPECT_NEAR(data.L_q[0], body.mass * g.dot(a.cross(r)), 1e-12);
  }
}

}  // namespace
}  // namespace marsden::io
