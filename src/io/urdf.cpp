// URDF reading and validation (docs/urdf.md). tinyxml2 is used only in this file.
#include "marsden/io/urdf.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <tinyxml2.h>

#include "marsden/error.hpp"
#include "json_access.hpp"
#include "text_number.hpp"

namespace marsden::io {
namespace {

using tinyxml2::XMLElement;

// Builds the messages "SOURCE: ELEMENT: problem (line N)".
class Reporter {
 public:
  explicit Reporter(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const std::string& where, const std::string& what,
                         const XMLElement* at = nullptr) const {
    std::string msg = source_ + ": " + where + ": " + what;
    if (at != nullptr) msg += " (line " + std::to_string(at->GetLineNum()) + ")";
    throw InputError(msg);
  }

 private:
  std::string source_;
};

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Inertia eigenvalues from -(relative * largest + absolute) to 0 are round-off.
double round_off_tolerance(const Vec3& lambda) {
  return kInertiaRelativeRoundOff * lambda.maxCoeff() + kInertiaAbsoluteRoundOff;
}

// Reading of one element's attributes, with messages that name the element.
class ElementReader {
 public:
  ElementReader(const Reporter& rep, std::string where)
      : rep_(rep), where_(std::move(where)) {}
  [[noreturn]] void fail(const std::string& what, const XMLElement* at) const {
    rep_.fail(where_, what, at);
  }

  std::string required_string(const XMLElement* e, const char* attr) const {
    const char* value = e->Attribute(attr);
    if (value == nullptr || *value == '\0')
      fail("<" + std::string(e->Name()) + "> missing attribute \"" + attr + "\"", e);
    return value;
  }

  double number(const XMLElement* e, const char* attr, std::optional<double> fallback) const {
    const char* text = e->Attribute(attr);
    if (text == nullptr) {
      if (!fallback) fail("<" + std::string(e->Name()) + "> missing attribute \"" + attr + "\"", e);
      return *fallback;
    }
    double value = 0.0;
    if (!detail::parse_finite_double(trim(text), value))
      fail(attribute_name(e, attr) + ": not a finite number: " + in_quotes(text), e);
    return value;
  }

  // A whitespace-separated triple such as xyz="0 0 1".
  Vec3 triple(const XMLElement* e, const char* attr, const Vec3& fallback) const {
    const char* text = e->Attribute(attr);
    if (text == nullptr) return fallback;
    std::istringstream words{std::string(text)};
    std::vector<std::string> parts;
    for (std::string w; words >> w;) parts.push_back(w);
    if (parts.size() != 3)
      fail(attribute_name(e, attr) + ": expected 3 numbers, got " +
               std::to_string(parts.size()) + " in " + in_quotes(text),
           e);
    Vec3 v;
    for (int i = 0; i < 3; ++i)
      if (!detail::parse_finite_double(parts[i], v[i]))
        fail(attribute_name(e, attr) + ": not a finite number: " + in_quotes(parts[i]), e);
    return v;
  }

  // <origin xyz rpy>, absent meaning the identity. URDF's fixed-axis roll-pitch-yaw:
  // R = Rz(yaw) Ry(pitch) Rx(roll).
  SE3 origin(const XMLElement* parent) const {
    const XMLElement* e = only_child(parent, "origin", false);
    if (e == nullptr) return SE3::identity();
    const Vec3 xyz = triple(e, "xyz", Vec3::Zero());
    const Vec3 rpy = triple(e, "rpy", Vec3::Zero());
    const Mat3 R_parent_child = (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) *
                                 Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
                                 Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
                                    .toRotationMatrix();
    return SE3{R_parent_child, xyz};
  }

  const XMLElement* only_child(const XMLElement* parent, const char* name, bool required) const {
    const XMLElement* e = parent->FirstChildElement(name);
    if (e == nullptr) {
      if (required) fail("missing <" + std::string(name) + ">", parent);
      return nullptr;
    }
    if (e->NextSiblingElement(name) != nullptr)
      fail("more than one <" + std::string(name) + ">", e->NextSiblingElement(name));
    return e;
  }

 private:
  static std::string_view trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return s.substr(first, last - first + 1);
  }
  static std::string attribute_name(const XMLElement* e, const char* attr) {
    return "<" + std::string(e->Name()) + " " + attr + ">";
  }

  const Reporter& rep_;
  std::string where_;
};

// A strictly positive length of a <visual> shape.
double positive(const ElementReader& r, const XMLElement* e, const char* attr) {
  const double v = r.number(e, attr, std::nullopt);
  if (!(v > 0.0))
    r.fail("<" + std::string(e->Name()) + " " + attr + "> must be > 0 (got " + number_text(v) + ")",
           e);
  return v;
}

// <color rgba>: four numbers in [0, 1].
Vec4 read_rgba(const ElementReader& r, const XMLElement* color) {
  const char* text = color->Attribute("rgba");
  if (text == nullptr) r.fail("<color> missing attribute \"rgba\"", color);
  std::istringstream words{std::string(text)};
  std::vector<std::string> parts;
  for (std::string w; words >> w;) parts.push_back(w);
  Vec4 rgba;
  if (parts.size() != 4)
    r.fail("<color rgba>: expected 4 numbers, got " + std::to_string(parts.size()), color);
  for (int i = 0; i < 4; ++i)
    if (!detail::parse_finite_double(parts[std::size_t(i)], rgba[i]) || rgba[i] < 0.0 || rgba[i] > 1.0)
      r.fail("<color rgba>: not a number in [0, 1]: " + in_quotes(parts[std::size_t(i)]), color);
  return rgba;
}

// <visual> or <collision>: its origin and one geometry. A malformed one is named rather
// than drawn or collided wrong.
UrdfVisual read_visual(const ElementReader& r, const XMLElement* v) {
  UrdfVisual out;
  out.origin = r.origin(v);
  if (const XMLElement* material = r.only_child(v, "material", false)) {
    if (const char* name = material->Attribute("name")) out.material = name;
    if (const XMLElement* color = r.only_child(material, "color", false)) {
      out.rgba = read_rgba(r, color);
      out.has_color = true;
    }
  }
  const XMLElement* geometry = r.only_child(v, "geometry", true);
  const XMLElement* shape = geometry->FirstChildElement();
  if (shape == nullptr)
    r.fail("<geometry> holds no shape (box, cylinder, sphere or mesh)", geometry);
  if (shape->NextSiblingElement() != nullptr)
    r.fail("<geometry> holds more than one shape", shape->NextSiblingElement());
  const std::string_view kind = shape->Name();
  if (kind == "box") {
    out.shape = UrdfShape::Box;
    if (shape->Attribute("size") == nullptr) r.fail("<box> missing attribute \"size\"", shape);
    out.size = r.triple(shape, "size", Vec3::Zero());
    if (!(out.size.minCoeff() > 0.0)) r.fail("<box size> must be > 0 in each axis", shape);
  } else if (kind == "cylinder") {
    out.shape = UrdfShape::Cylinder;
    out.radius = positive(r, shape, "radius");
    out.length = positive(r, shape, "length");
  } else if (kind == "sphere") {
    out.shape = UrdfShape::Sphere;
    out.radius = positive(r, shape, "radius");
  } else if (kind == "mesh") {
    out.shape = UrdfShape::Mesh;
    out.filename = r.required_string(shape, "filename");
    out.scale = r.triple(shape, "scale", Vec3::Ones());
    if (out.scale.cwiseAbs().minCoeff() == 0.0)
      r.fail("<mesh scale> must be non-zero in each axis", shape);
  } else {
    r.fail("<geometry> shape <" + std::string(kind) + "> is not box, cylinder, sphere or mesh",
           shape);
  }
  return out;
}

UrdfLink read_link(const Reporter& rep, const XMLElement* e, const std::string& name) {
  const ElementReader r(rep, "link " + in_quotes(name));
  UrdfLink link;
  link.name = name;
  const ElementReader visual_reader(rep, "link " + in_quotes(name) + " <visual>");
  for (const XMLElement* v = e->FirstChildElement("visual"); v != nullptr;
       v = v->NextSiblingElement("visual"))
    link.visuals.push_back(read_visual(visual_reader, v));
  const ElementReader collision_reader(rep, "link " + in_quotes(name) + " <collision>");
  for (const XMLElement* v = e->FirstChildElement("collision"); v != nullptr;
       v = v->NextSiblingElement("collision"))
    link.collisions.push_back(read_visual(collision_reader, v));
  const XMLElement* inertial = r.only_child(e, "inertial", false);
  if (inertial == nullptr) return link;
  const SE3 origin = r.origin(inertial);
  const XMLElement* mass = r.only_child(inertial, "mass", true);
  const double m = r.number(mass, "value", std::nullopt);
  if (m < 0.0) r.fail("mass must be >= 0 (got " + number_text(m) + ")", mass);
  const XMLElement* in = r.only_child(inertial, "inertia", true);
  const double ixx = r.number(in, "ixx", std::nullopt), ixy = r.number(in, "ixy", 0.0),
               ixz = r.number(in, "ixz", 0.0), iyy = r.number(in, "iyy", std::nullopt),
               iyz = r.number(in, "iyz", 0.0), izz = r.number(in, "izz", std::nullopt);
  Mat3 inertia;
  inertia << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
  // Real files mark end-effector, sensor and camera frames with a zero mass and inertia: a
  // massless link. A zero mass with a rotational inertia is kept as it is.
  if (m == 0.0 && inertia.cwiseAbs().maxCoeff() == 0.0) return link;
  // Inertias exported from CAD carry round-off (eigenvalues such as -1e-22); a point mass
  // has none at all. Eigenvalues down to -round_off_tolerance are taken as zero; an inertia
  // further from positive semi-definite is kept as it is for check_rigid_bodies, which
  // accepts it only inside a rigid body whose combined inertia is physical.
  const Eigen::SelfAdjointEigenSolver<Mat3> eig(inertia);
  const Vec3 lambda = eig.eigenvalues();
  link.has_inertial = true;
  link.mass = m;
  link.inertial_origin = origin;
  link.inertia = lambda.minCoeff() < -round_off_tolerance(lambda)
                     ? inertia
                     : Mat3(eig.eigenvectors() * lambda.cwiseMax(0.0).asDiagonal() *
                            eig.eigenvectors().transpose());
  return link;
}

std::string eigenvalue_text(const Vec3& lambda) {
  std::ostringstream s;
  s << lambda.transpose();
  return s.str();
}

// Each rigid body's combined inertia is positive semi-definite to round-off. A link of its
// own is named as such; a link whose inertia is not physical but whose rigid body's is (a
// light antenna on a heavy base, as Tiago's) passes, since the engines see only the body.
void check_rigid_bodies(const Reporter& rep, const UrdfModel& model,
                        const std::vector<const XMLElement*>& inertia_elements) {
  const UrdfRigidBodies rb = rigid_bodies(model);
  for (const UrdfRigidBody& body : rb.bodies) {
    int culprit = -1;
    for (const int i : body.links) {
      const UrdfLink& link = model.links[i];
      if (!link.has_inertial) continue;
      const Vec3 lambda = Eigen::SelfAdjointEigenSolver<Mat3>(link.inertia).eigenvalues();
      if (culprit < 0 && lambda.minCoeff() < -round_off_tolerance(lambda)) culprit = i;
    }
    if (culprit < 0) continue;
    const Vec3 lambda_link =
        Eigen::SelfAdjointEigenSolver<Mat3>(model.links[culprit].inertia).eigenvalues();
    // body.inertia is the combined one with its negative eigenvalues set to zero.
    const Vec3 lambda_body = Eigen::SelfAdjointEigenSolver<Mat3>(body.inertia).eigenvalues();
    if (body.smallest_eigenvalue >= -round_off_tolerance(lambda_body)) continue;
    std::string what = "inertia is not positive semi-definite (eigenvalues " +
                       eigenvalue_text(lambda_link) + ", below -" +
                       number_text(round_off_tolerance(lambda_link)) + ")";
    if (body.links.size() > 1) {
      what += ", nor is the inertia of the " + std::to_string(body.links.size()) +
              " links welded to it by fixed joints (smallest eigenvalue " +
              number_text(body.smallest_eigenvalue) + ")";
    }
    rep.fail("link " + in_quotes(model.links[culprit].name), what, inertia_elements[culprit]);
  }
}

UrdfJoint read_joint(const Reporter& rep, const XMLElement* e, const std::string& name) {
  const ElementReader r(rep, "joint " + in_quotes(name));
  UrdfJoint joint;
  joint.name = name;

  const std::string type = r.required_string(e, "type");
  if (type == "revolute") joint.type = UrdfJointType::Revolute;
  else if (type == "continuous") joint.type = UrdfJointType::Continuous;
  else if (type == "prismatic") joint.type = UrdfJointType::Prismatic;
  else if (type == "fixed") joint.type = UrdfJointType::Fixed;
  else if (type == "floating" || type == "planar")
    r.fail("type " + in_quotes(type) +
               " is not supported (revolute, continuous, prismatic, fixed)",
           e);
  else
    r.fail("unknown type " + in_quotes(type), e);

  joint.parent = r.required_string(r.only_child(e, "parent", true), "link");
  joint.child = r.required_string(r.only_child(e, "child", true), "link");
  joint.origin = r.origin(e);

  // A fixed joint has no axis to use; files give it one anyway, sometimes zero.
  const XMLElement* axis = r.only_child(e, "axis", false);
  if (axis != nullptr && joint.type != UrdfJointType::Fixed) {
    const Vec3 a = r.triple(axis, "xyz", Vec3::UnitX());
    const double length = a.norm();
    if (!(length > 0.0) || !std::isfinite(length))
      r.fail("zero axis (or one whose length overflows)", axis);
    joint.axis = a / length;
  }

  const bool needs_limits =
      joint.type == UrdfJointType::Revolute || joint.type == UrdfJointType::Prismatic;
  const XMLElement* limit = r.only_child(e, "limit", false);
  if (limit == nullptr && needs_limits)
    r.fail("type " + in_quotes(type) + " needs <limit lower upper effort velocity>", e);
  if (limit != nullptr) {
    joint.has_limits = true;
    joint.lower = r.number(limit, "lower", 0.0);
    joint.upper = r.number(limit, "upper", 0.0);
    joint.effort = r.number(limit, "effort", std::nullopt);
    joint.velocity = r.number(limit, "velocity", std::nullopt);
    if (joint.lower > joint.upper)
      r.fail("limit lower " + number_text(joint.lower) + " > upper " + number_text(joint.upper),
             limit);
    if (joint.effort < 0.0 || joint.velocity < 0.0)
      r.fail("limit effort and velocity must be >= 0", limit);
  }

  if (const XMLElement* dyn = r.only_child(e, "dynamics", false)) {
    joint.damping = r.number(dyn, "damping", 0.0);
    joint.friction = r.number(dyn, "friction", 0.0);
    if (joint.damping < 0.0 || joint.friction < 0.0)
      r.fail("dynamics damping and friction must be >= 0", dyn);
  }
  if (const XMLElement* mimic = r.only_child(e, "mimic", false)) {
    // A fixed joint has no coordinate to tie: its <mimic> says nothing.
    if (joint.type != UrdfJointType::Fixed) joint.mimic = r.required_string(mimic, "joint");
    joint.mimic_multiplier = r.number(mimic, "multiplier", 1.0);
    joint.mimic_offset = r.number(mimic, "offset", 0.0);
  }
  return joint;
}

// Resolves link indices, checks that the joints form one tree and orders them parent
// first (depth first from the root, siblings in file order).
void link_tree(const Reporter& rep, const XMLElement* robot,
               const std::vector<const XMLElement*>& joint_elements, UrdfModel& model) {
  std::map<std::string, int> link_index;
  for (int i = 0; i < static_cast<int>(model.links.size()); ++i)
    link_index.emplace(model.links[i].name, i);

  const int n_links = static_cast<int>(model.links.size());
  std::vector<int> parent_joint(n_links, -1);
  std::vector<std::vector<int>> child_joints(n_links);
  for (int j = 0; j < static_cast<int>(model.joints.size()); ++j) {
    UrdfJoint& joint = model.joints[j];
    const std::string where = "joint " + in_quotes(joint.name);
    const XMLElement* at = joint_elements[j];
    const auto parent = link_index.find(joint.parent);
    if (parent == link_index.end())
      rep.fail(where, "parent link " + in_quotes(joint.parent) + " does not exist", at);
    const auto child = link_index.find(joint.child);
    if (child == link_index.end())
      rep.fail(where, "child link " + in_quotes(joint.child) + " does not exist", at);
    joint.parent_index = parent->second;
    joint.child_index = child->second;
    if (joint.parent_index == joint.child_index)
      rep.fail(where, "link " + in_quotes(joint.child) + " is its own parent (a cycle)", at);
    int& pj = parent_joint[joint.child_index];
    if (pj >= 0)
      rep.fail("link " + in_quotes(joint.child),
               "has two parents (joints " + in_quotes(model.joints[pj].name) + " and " +
                   in_quotes(joint.name) + ")",
               at);
    pj = j;
    child_joints[joint.parent_index].push_back(j);
  }

  std::vector<int> roots;
  for (int i = 0; i < n_links; ++i)
    if (parent_joint[i] < 0) roots.push_back(i);
  if (roots.size() > 1) {
    std::string names;
    for (int i : roots) names += (names.empty() ? "" : ", ") + in_quotes(model.links[i].name);
    rep.fail("robot " + in_quotes(model.name),
             "more than one root link (" + names + "); connect them with joints");
  }
  if (roots.empty())
    rep.fail("robot " + in_quotes(model.name), "no root link: the joints form a cycle", robot);
  model.root = model.links[roots.front()].name;

  std::vector<UrdfJoint> ordered;
  ordered.reserve(model.joints.size());
  std::vector<int> stack(child_joints[roots.front()].rbegin(), child_joints[roots.front()].rend());
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    ordered.push_back(model.joints[j]);
    const auto& next = child_joints[model.joints[j].child_index];
    stack.insert(stack.end(), next.rbegin(), next.rend());
  }
  // With one parent per link, joints not reached from the root lie on a cycle.
  if (ordered.size() != model.joints.size()) {
    std::vector<bool> reached(model.joints.size(), false);
    for (const UrdfJoint& joint : ordered) reached[parent_joint[joint.child_index]] = true;
    for (std::size_t j = 0; j < model.joints.size(); ++j)
      if (!reached[j])
        rep.fail("joint " + in_quotes(model.joints[j].name),
                 "lies on a cycle of joints (not reachable from root link " +
                     in_quotes(model.root) + ")",
                 joint_elements[j]);
  }
  model.joints = std::move(ordered);
}

// A mimic joint follows a movable joint that follows no other (one level, as ROS reads it).
void check_mimics(const Reporter& rep, const UrdfModel& model) {
  std::map<std::string, const UrdfJoint*> by_name;
  for (const UrdfJoint& joint : model.joints) by_name.emplace(joint.name, &joint);
  for (const UrdfJoint& joint : model.joints) {
    if (joint.mimic.empty()) continue;
    const std::string where = "joint " + in_quotes(joint.name);
    const auto leader = by_name.find(joint.mimic);
    if (leader == by_name.end())
      rep.fail(where, "<mimic joint> " + in_quotes(joint.mimic) + " does not exist");
    if (leader->second == &joint) rep.fail(where, "<mimic> names the joint itself");
    if (leader->second->type == UrdfJointType::Fixed)
      rep.fail(where, "<mimic joint> " + in_quotes(joint.mimic) + " is a fixed joint");
    if (!leader->second->mimic.empty())
      rep.fail(where, "<mimic joint> " + in_quotes(joint.mimic) +
                          " mimics another joint itself; name the joint it follows");
  }
}

}  // namespace

UrdfModel parse_urdf(std::string_view xml, const std::string& source_name) {
  const Reporter rep(source_name);
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS)
    throw InputError(source_name + ": line " + std::to_string(doc.ErrorLineNum()) +
                     ": malformed XML: " + doc.ErrorStr());
  const XMLElement* robot = doc.RootElement();
  if (robot == nullptr || std::string_view(robot->Name()) != "robot")
    rep.fail("document", "missing <robot> root element", robot);

  UrdfModel model;
  // Some files leave the robot unnamed; the file's name stands in.
  const char* robot_name = robot->Attribute("name");
  model.name = robot_name != nullptr && *robot_name != '\0'
                   ? std::string(robot_name)
                   : std::filesystem::path(source_name).stem().string();

  std::map<std::string, const XMLElement*> seen;
  const auto unique_name = [&](const XMLElement* e, const char* kind) {
    const char* name = e->Attribute("name");
    if (name == nullptr || *name == '\0')
      rep.fail(kind, "missing attribute \"name\"", e);
    const std::string key = std::string(kind) + " " + in_quotes(name);
    const auto [it, inserted] = seen.emplace(key, e);
    if (!inserted)
      rep.fail(key,
               "duplicate name (first at line " + std::to_string(it->second->GetLineNum()) + ")",
               e);
    return std::string(name);
  };

  // Named colours: the robot's <material>s, then those that visuals define, first one wins.
  std::map<std::string, Vec4> colors;
  for (const XMLElement* e = robot->FirstChildElement("material"); e != nullptr;
       e = e->NextSiblingElement("material")) {
    const char* name = e->Attribute("name");
    if (name == nullptr || *name == '\0') rep.fail("material", "missing attribute \"name\"", e);
    const ElementReader r(rep, "material " + in_quotes(name));
    if (const XMLElement* color = r.only_child(e, "color", false))
      colors.emplace(name, read_rgba(r, color));
  }

  std::vector<const XMLElement*> inertia_elements;
  for (const XMLElement* e = robot->FirstChildElement("link"); e != nullptr;
       e = e->NextSiblingElement("link")) {
    model.links.push_back(read_link(rep, e, unique_name(e, "link")));
    const XMLElement* inertial = e->FirstChildElement("inertial");
    inertia_elements.push_back(inertial != nullptr ? inertial->FirstChildElement("inertia")
                                                   : nullptr);
  }
  std::vector<const XMLElement*> joint_elements;
  for (const XMLElement* e = robot->FirstChildElement("joint"); e != nullptr;
       e = e->NextSiblingElement("joint")) {
    model.joints.push_back(read_joint(rep, e, unique_name(e, "joint")));
    joint_elements.push_back(e);
  }
  if (model.links.empty()) rep.fail("robot " + in_quotes(model.name), "has no <link>", robot);
  for (const UrdfLink& link : model.links)
    for (const UrdfVisual& v : link.visuals)
      if (v.has_color && !v.material.empty()) colors.emplace(v.material, v.rgba);
  for (UrdfLink& link : model.links)
    for (UrdfVisual& v : link.visuals)
      if (const auto c = colors.find(v.material); !v.has_color && c != colors.end()) {
        v.rgba = c->second;
        v.has_color = true;
      }

  link_tree(rep, robot, joint_elements, model);
  check_mimics(rep, model);
  check_rigid_bodies(rep, model, inertia_elements);
  return model;
}

UrdfModel read_urdf(const std::filesystem::path& path) {
  return parse_urdf(detail::read_input_file(path, "a URDF file"), path.string());
}

std::filesystem::path resolve_mesh_file(const std::string& filename,
                                        const std::filesystem::path& urdf_file) {
  namespace fs = std::filesystem;
  const auto exists = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) ? p.lexically_normal() : fs::path();
  };
  const fs::path folder = fs::absolute(urdf_file).parent_path();
  constexpr std::string_view kFile = "file://", kPackage = "package://";
  const std::string_view name = filename;
  if (name.starts_with(kFile)) return exists(fs::path(name.substr(kFile.size())));
  if (!name.starts_with(kPackage)) return exists(folder / fs::path(filename));
  const std::string_view rest = name.substr(kPackage.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  const fs::path package(rest.substr(0, slash)), inside(rest.substr(slash + 1));
  for (fs::path dir = folder; !dir.empty(); dir = dir.parent_path()) {
    if (dir.filename() == package) return exists(dir / inside);
    if (const fs::path p = exists(dir / package / inside); !p.empty()) return p;
    if (dir == dir.parent_path()) break;
  }
  return {};
}

}  // namespace marsden::io
