// MJCF reading (docs/mjcf.md) into the engine-neutral description of marsden/urdf.hpp.
// tinyxml2 is used only here and in urdf.cpp.
#include "marsden/io/mjcf.hpp"

#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <tinyxml2.h>

#include "marsden/error.hpp"
#include "json_access.hpp"
#include "text_number.hpp"

namespace marsden::io {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

// Elements copied in by <include> keep their own file and line in these attributes.
constexpr const char* kFileAttr = "marsden-file";
constexpr const char* kLineAttr = "marsden-line";
constexpr int kMaxIncludes = 256;  // more is a cycle of includes

// tag -> attribute -> value, of one default class (its parents' merged in).
using ClassDefaults = std::map<std::string, std::map<std::string, std::string>>;

enum class InertiaFromGeom { False, True, Auto };

struct Reader {
  std::string source;
  std::filesystem::path folder;  // for <include file>
  bool degree = true;
  std::string eulerseq = "xyz";
  InertiaFromGeom inertia_from_geom = InertiaFromGeom::Auto;
  bool autolimits = true;
  double total_mass = -1.0;  // <compiler settotalmass>: scale every body to this sum, if > 0
  std::map<std::string, ClassDefaults> classes;
  std::map<std::string, std::string> mesh_files;  // <asset><mesh name file>
  UrdfModel model;
  std::set<std::string> link_names, joint_names;
  int unnamed_bodies = 0;

  std::string file_of(const XMLElement* e) const {
    const char* f = e->Attribute(kFileAttr);
    return f != nullptr ? std::string(f) : source;
  }
  static int line_of(const XMLElement* e) { return e->IntAttribute(kLineAttr, e->GetLineNum()); }
  static std::string label(const XMLElement* e) {
    std::string out = "<";
    out += e->Name();
    if (const char* name = e->Attribute("name"); name != nullptr && *name != '\0')
      out.append(" \"").append(name).append("\"");
    return out += ">";
  }
  std::string where(const XMLElement* e, const std::string& what) const {
    return file_of(e) + ": " + label(e) + ": " + what + " (line " + std::to_string(line_of(e)) +
           ")";
  }
  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const {
    throw InputError(where(e, what));
  }
  void warn(const XMLElement* e, const std::string& what) {
    model.warnings.push_back(where(e, what));
  }

  // --- attributes -------------------------------------------------------------------

  std::vector<double> numbers(const XMLElement* e, const char* attr) const {
    const char* text = e->Attribute(attr);
    std::vector<double> out;
    if (text == nullptr) return out;
    std::istringstream words{std::string(text)};
    for (std::string w; words >> w;) {
      double v = 0.0;
      if (!detail::parse_finite_double(w, v))
        fail(e, std::string(attr) + ": not a finite number: \"" + w + "\"");
      out.push_back(v);
    }
    return out;
  }
  // Exactly n numbers, or the fallback when the attribute is absent.
  std::vector<double> fixed(const XMLElement* e, const char* attr, std::size_t n,
                            std::vector<double> fallback) const {
    if (e->Attribute(attr) == nullptr) return fallback;
    std::vector<double> v = numbers(e, attr);
    if (v.size() != n)
      fail(e, std::string(attr) + ": expected " + std::to_string(n) + " numbers, got " +
                  std::to_string(v.size()));
    return v;
  }
  double number(const XMLElement* e, const char* attr, double fallback) const {
    return fixed(e, attr, 1, {fallback})[0];
  }
  double non_negative(const XMLElement* e, const char* attr, double fallback) const {
    const double v = number(e, attr, fallback);
    if (v < 0.0) fail(e, std::string(attr) + " must be >= 0 (got " + std::to_string(v) + ")");
    return v;
  }
  Vec3 vec3(const XMLElement* e, const char* attr, const Vec3& fallback) const {
    const std::vector<double> v = fixed(e, attr, 3, {fallback.x(), fallback.y(), fallback.z()});
    return Vec3(v[0], v[1], v[2]);
  }
  std::string word(const XMLElement* e, const char* attr, const std::string& fallback) const {
    const char* text = e->Attribute(attr);
    return text != nullptr ? std::string(text) : fallback;
  }
  // "true", "false" or (where allowed) "auto".
  std::optional<bool> tri_state(const XMLElement* e, const char* attr) const {
    const std::string v = word(e, attr, "auto");
    if (v == "true") return true;
    if (v == "false") return false;
    if (v != "auto") fail(e, std::string(attr) + ": expected true, false or auto, got \"" + v + "\"");
    return std::nullopt;
  }
  double angle(double value) const { return degree ? value * std::numbers::pi / 180.0 : value; }
  // v / |v|, an error when v is zero; stableNorm, so that huge entries do not overflow.
  template <int N>
  Eigen::Matrix<double, N, 1> unit(const XMLElement* e, const Eigen::Matrix<double, N, 1>& v,
                                   const std::string& what) const {
    const double length = v.stableNorm();
    if (!(length > 0.0)) fail(e, what);
    return v / length;
  }

  // The one orientation an element may give (quat, axisangle, euler, xyaxes, zaxis).
  Mat3 orientation(const XMLElement* e) const {
    int given = 0;
    for (const char* a : {"quat", "axisangle", "euler", "xyaxes", "zaxis"})
      given += e->Attribute(a) != nullptr ? 1 : 0;
    if (given > 1) fail(e, "more than one of quat, axisangle, euler, xyaxes, zaxis");
    if (e->Attribute("quat") != nullptr) {
      const std::vector<double> q = fixed(e, "quat", 4, {});
      const Vec4 wxyz = unit(e, Vec4(q[0], q[1], q[2], q[3]), "quat: zero quaternion");
      return Eigen::Quaterniond(wxyz[0], wxyz[1], wxyz[2], wxyz[3]).toRotationMatrix();
    }
    if (e->Attribute("axisangle") != nullptr) {
      const std::vector<double> a = fixed(e, "axisangle", 4, {});
      const Vec3 axis(a[0], a[1], a[2]);
      return Eigen::AngleAxisd(angle(a[3]), unit(e, axis, "axisangle: zero axis"))
          .toRotationMatrix();
    }
    if (e->Attribute("euler") != nullptr) {
      const Vec3 a = vec3(e, "euler", Vec3::Zero());
      // Lower case: about the moving frame's axis (post-multiplied); upper case: about the
      // fixed frame's (pre-multiplied).
      Mat3 R = Mat3::Identity();
      for (int i = 0; i < 3; ++i) {
        const char c = eulerseq[std::size_t(i)];
        const int axis = (c == 'x' || c == 'X') ? 0 : (c == 'y' || c == 'Y') ? 1 : 2;
        const Mat3 Ri = Eigen::AngleAxisd(angle(a[i]), Vec3::Unit(axis)).toRotationMatrix();
        R = (c >= 'a') ? Mat3(R * Ri) : Mat3(Ri * R);
      }
      return R;
    }
    if (e->Attribute("xyaxes") != nullptr) {
      const std::vector<double> a = fixed(e, "xyaxes", 6, {});
      Vec3 x(a[0], a[1], a[2]), y(a[3], a[4], a[5]);
      x = unit(e, x, "xyaxes: zero x axis");
      y = unit(e, y, "xyaxes: zero y axis");
      y -= y.dot(x) * x;
      if (!(y.norm() > 1e-12)) fail(e, "xyaxes: y axis parallel to x");
      y.normalize();
      Mat3 R;
      R << x, y, x.cross(y);
      return R;
    }
    if (e->Attribute("zaxis") != nullptr) {
      const Vec3 z = vec3(e, "zaxis", Vec3::UnitZ());
      return Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), unit(e, z, "zaxis: zero vector"))
          .toRotationMatrix();
    }
    return Mat3::Identity();
  }
  SE3 pose(const XMLElement* e) const { return SE3{orientation(e), vec3(e, "pos", Vec3::Zero())}; }
};

// --- <include> ------------------------------------------------------------------------

// Marks a copied element and its descendants with the file and lines they came from.
void tag_source(XMLElement* copy, const XMLElement* original, const std::string& file) {
  if (copy->Attribute(kFileAttr) == nullptr) {
    copy->SetAttribute(kFileAttr, file.c_str());
    copy->SetAttribute(kLineAttr, original->GetLineNum());
  }
  const XMLElement* o = original->FirstChildElement();
  for (XMLElement* c = copy->FirstChildElement(); c != nullptr && o != nullptr;
       c = c->NextSiblingElement(), o = o->NextSiblingElement())
    tag_source(c, o, file);
}

// Replaces each <include file> below `parent` by the children of the included file's
// <mujoco> element, included files' includes too (paths relative to the main file).
void expand_includes(const Reader& r, XMLDocument& doc, XMLElement* parent, int& count) {
  for (XMLElement* e = parent->FirstChildElement(); e != nullptr;) {
    if (std::string_view(e->Name()) != "include") {
      expand_includes(r, doc, e, count);
      e = e->NextSiblingElement();
      continue;
    }
    if (++count > kMaxIncludes)
      r.fail(e, "more than " + std::to_string(kMaxIncludes) + " includes (a file including itself?)");
    const char* file = e->Attribute("file");
    if (file == nullptr || *file == '\0') r.fail(e, "missing attribute \"file\"");
    const std::filesystem::path path = r.folder / file;
    std::string text;
    try {
      text = detail::read_input_file(path, "an included MJCF file");
    } catch (const InputError& err) {
      r.fail(e, err.what());
    }
    XMLDocument included;
    if (included.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS)
      throw InputError(path.string() + ": line " + std::to_string(included.ErrorLineNum()) +
                       ": malformed XML: " + included.ErrorStr());
    const XMLElement* root = included.RootElement();
    if (root == nullptr || std::string_view(root->Name()) != "mujoco")
      throw InputError(path.string() + ": missing <mujoco> root element");
    XMLElement* after = e;
    for (const XMLElement* c = root->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
      XMLElement* copy = c->DeepClone(&doc)->ToElement();
      tag_source(copy, c, path.string());
      parent->InsertAfterChild(after, copy);
      after = copy;
    }
    XMLElement* next = e->NextSiblingElement();
    parent->DeleteChild(e);
    // The copies come next and are expanded in turn.
    e = next;
    for (XMLElement* c = parent->FirstChildElement(); c != nullptr; c = c->NextSiblingElement())
      if (std::string_view(c->Name()) == "include") {
        e = parent->FirstChildElement();
        break;
      }
  }
}

// --- <default> ------------------------------------------------------------------------

// The actuator shortcuts share one default slot, as in MuJoCo.
std::string default_slot(std::string_view tag) {
  return tag == "motor" ? std::string("general") : std::string(tag);
}

void read_defaults(Reader& r, const XMLElement* e, const ClassDefaults& inherited, bool top) {
  std::string name = r.word(e, "class", top ? "main" : "");
  if (name.empty()) r.fail(e, "a nested <default> needs a class");
  if (r.classes.count(name) != 0) r.fail(e, "class \"" + name + "\" defined twice");
  ClassDefaults own = inherited;
  for (const XMLElement* c = e->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    if (std::string_view(c->Name()) == "default") continue;
    auto& slot = own[default_slot(c->Name())];
    for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a != nullptr; a = a->Next())
      if (!std::string_view(a->Name()).starts_with("marsden-")) slot[a->Name()] = a->Value();
  }
  r.classes.emplace(name, own);
  for (const XMLElement* c = e->FirstChildElement("default"); c != nullptr;
       c = c->NextSiblingElement("default"))
    read_defaults(r, c, own, false);
}

// Writes the class defaults onto an element where it does not set the attribute itself.
void apply_defaults(const Reader& r, XMLElement* e, const std::string& childclass) {
  const std::string cls = r.word(e, "class", childclass);
  const auto it = r.classes.find(cls);
  if (it == r.classes.end()) {
    if (cls != "main") r.fail(e, "unknown class \"" + cls + "\"");
    return;  // "main" without any <default>
  }
  const auto slot = it->second.find(default_slot(e->Name()));
  if (slot == it->second.end()) return;
  for (const auto& [attr, value] : slot->second)
    if (e->Attribute(attr.c_str()) == nullptr) e->SetAttribute(attr.c_str(), value.c_str());
}

// --- geoms ----------------------------------------------------------------------------

struct GeomMass {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();        // in the body frame
  Mat3 inertia = Mat3::Zero();    // about com, body axes
};

// A geom's shape in its own frame and, for the shapes MuJoCo derives mass from, its volume
// and unit-density inertia about its centre (principal axes are the geom's).
struct GeomShape {
  UrdfVisual visual;
  double volume = 0.0;
  Vec3 unit_inertia = Vec3::Zero();  // per unit mass
  bool massive = false;              // a primitive with a volume
};

GeomShape read_geom_shape(const Reader& r, const XMLElement* g) {
  GeomShape out;
  UrdfVisual& v = out.visual;
  const std::string type = r.word(g, "type", "sphere");
  std::vector<double> size = r.numbers(g, "size");
  if (size.size() > 3) r.fail(g, "size: expected at most 3 numbers");
  size.resize(3, 0.0);
  const bool from_to = g->Attribute("fromto") != nullptr;
  v.origin = r.pose(g);
  double half_length = size[1];
  if (from_to) {
    if (type != "capsule" && type != "cylinder" && type != "box" && type != "ellipsoid")
      r.fail(g, "fromto is for capsule, cylinder, box and ellipsoid geoms, not \"" + type + "\"");
    const std::vector<double> ft = r.fixed(g, "fromto", 6, {});
    const Vec3 a(ft[0], ft[1], ft[2]), b(ft[3], ft[4], ft[5]);
    if (!((b - a).norm() > 0.0) || !std::isfinite((b - a).norm()))
      r.fail(g, "fromto: the two points coincide or lie too far apart");
    v.origin = SE3{Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), b - a).toRotationMatrix(),
                   0.5 * (a + b)};
    half_length = 0.5 * (b - a).norm();
  }
  const auto positive = [&](double value, const char* what) {
    if (!(value > 0.0)) r.fail(g, std::string("size: ") + what + " must be > 0");
    return value;
  };
  const double pi = std::numbers::pi;
  if (type == "sphere") {
    v.shape = UrdfShape::Sphere;
    const double rad = positive(size[0], "the radius");
    v.radius = rad;
    out.volume = 4.0 / 3.0 * pi * rad * rad * rad;
    out.unit_inertia.setConstant(0.4 * rad * rad);
    out.massive = true;
  } else if (type == "capsule" || type == "cylinder") {
    const double rad = positive(size[0], "the radius");
    const double h = positive(half_length, "the half length");
    v.radius = rad;
    v.length = 2.0 * h;
    const double cyl = pi * rad * rad * 2.0 * h;
    if (type == "cylinder") {
      v.shape = UrdfShape::Cylinder;
      out.volume = cyl;
      out.unit_inertia << (3.0 * rad * rad + 4.0 * h * h) / 12.0,
          (3.0 * rad * rad + 4.0 * h * h) / 12.0, 0.5 * rad * rad;
    } else {
      // A cylinder and two hemispheres, each hemisphere's centre of mass 3r/8 beyond its
      // base: parallel axes at distance h + 3r/8.
      v.shape = UrdfShape::Capsule;
      const double sph = 4.0 / 3.0 * pi * rad * rad * rad;
      out.volume = cyl + sph;
      const double axial = cyl * 0.5 * rad * rad + sph * 0.4 * rad * rad;
      const double d = h + 3.0 * rad / 8.0;
      const double transverse = cyl * (3.0 * rad * rad + 4.0 * h * h) / 12.0 +
                                sph * (83.0 / 320.0 * rad * rad + d * d);
      out.unit_inertia << transverse / out.volume, transverse / out.volume, axial / out.volume;
    }
    out.massive = true;
  } else if (type == "box" || type == "ellipsoid") {
    const Vec3 half(positive(size[0], "x"), positive(size[1], "y"),
                    positive(from_to ? half_length : size[2], "z"));
    const Vec3 sq = half.cwiseProduct(half);
    const Vec3 pairs(sq.y() + sq.z(), sq.x() + sq.z(), sq.x() + sq.y());
    if (type == "box") {
      v.shape = UrdfShape::Box;
      v.size = 2.0 * half;
      out.volume = 8.0 * half.prod();
      out.unit_inertia = pairs / 3.0;
    } else {
      v.shape = UrdfShape::Ellipsoid;
      v.size = half;
      out.volume = 4.0 / 3.0 * pi * half.prod();
      out.unit_inertia = pairs / 5.0;
    }
    out.massive = true;
  } else if (type == "plane") {
    v.shape = UrdfShape::Plane;
    v.size = Vec3(size[0], size[1], size[2]);
  } else if (type == "mesh") {
    v.shape = UrdfShape::Mesh;
    const std::string mesh = r.word(g, "mesh", "");
    const auto file = r.mesh_files.find(mesh);
    v.filename = file != r.mesh_files.end() ? file->second : mesh;
  } else if (type == "hfield" || type == "sdf") {
    r.fail(g, "type \"" + type + "\" is not supported");
  } else {
    r.fail(g, "unknown type \"" + type + "\"");
  }
  if (g->Attribute("rgba") != nullptr) {
    const std::vector<double> c = r.fixed(g, "rgba", 4, {});
    v.rgba = Vec4(c[0], c[1], c[2], c[3]);
    if (v.rgba.minCoeff() < 0.0 || v.rgba.maxCoeff() > 1.0) r.fail(g, "rgba: not in [0, 1]");
    v.has_color = true;
  }
  v.material = r.word(g, "material", "");
  const std::vector<double> friction = r.numbers(g, "friction");
  if (!friction.empty()) {
    if (friction.size() > 3) r.fail(g, "friction: expected at most 3 numbers");
    if (friction[0] < 0.0) r.fail(g, "friction must be >= 0");
    v.has_friction = true;
    v.friction = friction[0];
  }
  return out;
}

// --- bodies ---------------------------------------------------------------------------

int add_link(Reader& r, const XMLElement* at, std::string name) {
  if (!r.link_names.insert(name).second) r.fail(at, "body name \"" + name + "\" used twice");
  UrdfLink link;
  link.name = std::move(name);
  r.model.links.push_back(std::move(link));
  return static_cast<int>(r.model.links.size()) - 1;
}

std::string joint_name(Reader& r, const XMLElement* at, std::string name) {
  if (!r.joint_names.insert(name).second) r.fail(at, "joint name \"" + name + "\" used twice");
  return name;
}

void add_joint(Reader& r, UrdfJoint joint, int parent, int child) {
  joint.parent_index = parent;
  joint.child_index = child;
  joint.parent = r.model.links[std::size_t(parent)].name;
  joint.child = r.model.links[std::size_t(child)].name;
  r.model.joints.push_back(std::move(joint));
}

// A hinge or slide joint's dynamics fields; its frame is set by the caller.
UrdfJoint read_joint(Reader& r, const XMLElement* j, const std::string& name, bool hinge) {
  UrdfJoint out;
  out.name = name;
  const Vec3 axis = r.vec3(j, "axis", Vec3::UnitZ());
  out.axis = r.unit(j, axis, "axis: zero vector");
  const auto unit = [&](double v) { return hinge ? r.angle(v) : v; };
  const std::optional<bool> limited = r.tri_state(j, "limited");
  const bool has_range = j->Attribute("range") != nullptr;
  if (!limited && !r.autolimits && has_range)
    r.fail(j, "limited=\"auto\" needs <compiler autolimits=\"true\">; set limited");
  out.has_limits = limited ? *limited : has_range;
  if (out.has_limits) {
    const std::vector<double> range = r.fixed(j, "range", 2, {0.0, 0.0});
    out.lower = unit(range[0]);
    out.upper = unit(range[1]);
    if (!(out.lower < out.upper)) r.fail(j, "range: a limited joint needs lower < upper");
  }
  out.type = !hinge ? UrdfJointType::Prismatic
             : out.has_limits ? UrdfJointType::Revolute
                              : UrdfJointType::Continuous;
  out.damping = r.non_negative(j, "damping", 0.0);
  out.stiffness = r.non_negative(j, "stiffness", 0.0);
  out.armature = r.non_negative(j, "armature", 0.0);
  out.springref = unit(r.number(j, "springref", 0.0));
  if (r.number(j, "frictionloss", 0.0) != 0.0)
    r.fail(j, "frictionloss (dry friction) is not supported");
  if (j->Attribute("springdamper") != nullptr &&
      r.fixed(j, "springdamper", 2, {}) != std::vector<double>{0.0, 0.0})
    r.fail(j, "springdamper is not supported; give stiffness and damping");
  return out;
}

// The mass, centre of mass and inertia of a body, from <inertial> or its geoms.
void set_body_inertia(Reader& r, UrdfLink& link, const XMLElement* inertial,
                      const std::vector<std::pair<const XMLElement*, GeomShape>>& geoms) {
  const bool from_geoms = r.inertia_from_geom == InertiaFromGeom::True ||
                          (r.inertia_from_geom == InertiaFromGeom::Auto && inertial == nullptr);
  if (!from_geoms) {
    if (inertial == nullptr) return;
    if (inertial->Attribute("mass") == nullptr) r.fail(inertial, "missing attribute \"mass\"");
    const double mass = r.non_negative(inertial, "mass", 0.0);
    const bool full = inertial->Attribute("fullinertia") != nullptr;
    const bool diag = inertial->Attribute("diaginertia") != nullptr;
    if (full == diag) r.fail(inertial, "needs exactly one of diaginertia and fullinertia");
    SE3 origin = r.pose(inertial);
    Mat3 inertia;
    if (diag) {
      const Vec3 d = r.vec3(inertial, "diaginertia", Vec3::Zero());
      if (d.minCoeff() < 0.0) r.fail(inertial, "diaginertia must be >= 0");
      inertia = d.asDiagonal();
    } else {
      if (origin.R != Mat3::Identity())
        r.fail(inertial, "fullinertia cannot be combined with an orientation");
      const std::vector<double> f = r.fixed(inertial, "fullinertia", 6, {});
      inertia << f[0], f[3], f[4], f[3], f[1], f[5], f[4], f[5], f[2];
    }
    const Vec3 lambda = Eigen::SelfAdjointEigenSolver<Mat3>(inertia).eigenvalues();
    if (lambda.minCoeff() < -(kInertiaRelativeRoundOff * lambda.maxCoeff() + kInertiaAbsoluteRoundOff))
      r.fail(inertial, "inertia is not positive semi-definite");
    if (mass == 0.0 && inertia.cwiseAbs().maxCoeff() == 0.0) return;
    link.has_inertial = true;
    link.mass = mass;
    link.inertial_origin = origin;
    link.inertia = inertia;
    return;
  }
  std::vector<GeomMass> parts;
  for (const auto& [g, shape] : geoms) {
    const bool has_mass = g->Attribute("mass") != nullptr;
    const double density = r.non_negative(g, "density", 1000.0);
    const double mass = has_mass ? r.non_negative(g, "mass", 0.0) : density * shape.volume;
    if (r.word(g, "shellinertia", "false") != "false")
      r.fail(g, "shellinertia is not supported");
    // A mesh has a mass unless it says 0 (mass, or density without mass).
    if (!shape.massive && (has_mass ? mass > 0.0 : density > 0.0))
      r.fail(g, "a " + r.word(g, "type", "sphere") +
                    " geom cannot give the body's inertia; give the body an <inertial> or the "
                    "geom mass=\"0\"");
    if (mass == 0.0) continue;
    const SE3& o = shape.visual.origin;
    parts.push_back({mass, o.x, o.R * (mass * shape.unit_inertia).asDiagonal() * o.R.transpose()});
    if (!std::isfinite(mass) || !parts.back().inertia.allFinite())
      r.fail(g, "its mass or inertia overflows (size, density or mass too large)");
  }
  double mass = 0.0;
  Vec3 first_moment = Vec3::Zero();
  for (const GeomMass& p : parts) {
    mass += p.mass;
    first_moment += p.mass * p.com;
  }
  if (mass == 0.0) return;
  const Vec3 com = first_moment / mass;
  Mat3 inertia = Mat3::Zero();
  for (const GeomMass& p : parts) {
    const Vec3 d = p.com - com;
    inertia += p.inertia + p.mass * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
  }
  if (!std::isfinite(mass) || !com.allFinite() || !inertia.allFinite())
    r.fail(geoms.front().first, "the body's mass or inertia overflows (geoms too large or heavy)");
  link.has_inertial = true;
  link.mass = mass;
  link.inertial_origin = SE3{Mat3::Identity(), com};
  link.inertia = inertia;
}

void read_body(Reader& r, XMLElement* b, int parent_link, const std::string& inherited_class,
               bool world_child, bool single_world_child) {
  const std::string childclass = r.word(b, "childclass", inherited_class);
  if (childclass != "main" && r.classes.count(childclass) == 0)
    r.fail(b, "unknown childclass \"" + childclass + "\"");
  if (r.word(b, "mocap", "false") != "false") r.fail(b, "mocap bodies are not supported");
  if (r.number(b, "gravcomp", 0.0) != 0.0) r.fail(b, "gravcomp is not supported");
  const char* given_name = b->Attribute("name");
  const std::string name = given_name != nullptr && *given_name != '\0'
                               ? std::string(given_name)
                               : "body" + std::to_string(++r.unnamed_bodies);
  const SE3 parent_body = r.pose(b);

  const XMLElement* inertial = nullptr;
  std::vector<XMLElement*> joints, geoms, bodies;
  for (XMLElement* c = b->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    const std::string_view tag = c->Name();
    if (tag == "inertial") {
      if (inertial != nullptr) r.fail(c, "more than one <inertial> in a body");
      inertial = c;
    } else if (tag == "joint" || tag == "freejoint") {
      apply_defaults(r, c, childclass);
      joints.push_back(c);
    } else if (tag == "geom") {
      apply_defaults(r, c, childclass);
      geoms.push_back(c);
    } else if (tag == "body") {
      bodies.push_back(c);
    } else if (tag == "site" || tag == "camera" || tag == "light") {
      // Not part of the dynamics.
    } else if (tag == "frame" || tag == "composite" || tag == "flexcomp" ||
               tag == "replicate" || tag == "plugin" || tag == "attach") {
      r.fail(c, "not supported");
    } else {
      r.fail(c, "unknown element in a <body>");
    }
  }

  const auto is_free = [&](const XMLElement* j) {
    return std::string_view(j->Name()) == "freejoint" || r.word(j, "type", "hinge") == "free";
  };
  bool free = false;
  for (const XMLElement* j : joints) {
    if (!is_free(j)) continue;
    if (!world_child || !single_world_child || joints.size() != 1)
      r.fail(j, "a free joint is supported only as the one joint of the one body of "
                "<worldbody> (the floating base)");
    // The floating base's coordinates are not MuJoCo's velocities: their rotor inertia,
    // springs and dampers would differ, so none is taken.
    for (const char* a : {"armature", "damping", "stiffness", "frictionloss"})
      if (r.number(j, a, 0.0) != 0.0)
        r.fail(j, std::string("a free joint's ") + a + " is not supported");
    free = true;
  }

  int link = -1;
  if (free) {
    // This body is the root: the world and its geoms stay outside the tree.
    r.model.links.clear();
    r.link_names.clear();
    link = add_link(r, b, name);
    r.model.root = name;
    r.model.floating_root = true;
    r.model.root_pose = parent_body;
  } else {
    // Joints in file order, each in the body frame at the body's pose as the joints before
    // it left it: joint i turns about (slides along) axis_i through pos_i by q_i - ref_i
    // (MuJoCo's qpos - qpos0, so that the coordinate is MuJoCo's qpos). Its child link L_i
    // is the joint frame moved by q_i, so the body frame after it is L_i M_i(-ref_i)
    // T(-pos_i), and the next joint's frame that times T(pos_(i+1)).
    int previous = parent_link;
    SE3 origin = parent_body;
    Vec3 previous_pos = Vec3::Zero();
    int index = 0;
    for (const XMLElement* j : joints) {
      const std::string type = r.word(j, "type", "hinge");
      if (type != "hinge" && type != "slide")
        r.fail(j, "type \"" + type + "\" is not supported (hinge, slide, free)");
      const char* jn = j->Attribute("name");
      const std::string jname = joint_name(
          r, j, jn != nullptr && *jn != '\0' ? std::string(jn)
                                             : name + "_joint" + std::to_string(index));
      const bool hinge = type == "hinge";
      UrdfJoint joint = read_joint(r, j, jname, hinge);
      const Vec3 pos = r.vec3(j, "pos", Vec3::Zero());
      const double ref = hinge ? r.angle(r.number(j, "ref", 0.0)) : r.number(j, "ref", 0.0);
      joint.origin = origin * SE3{Mat3::Identity(), pos - previous_pos};
      origin = hinge ? SE3{Eigen::AngleAxisd(-ref, joint.axis).toRotationMatrix(), Vec3::Zero()}
                     : SE3{Mat3::Identity(), -ref * joint.axis};
      const bool last = ++index == static_cast<int>(joints.size());
      const int child = last && pos.isZero(0.0) && ref == 0.0
                            ? add_link(r, b, name)
                            : add_link(r, j, name + "_" + jname);
      add_joint(r, std::move(joint), previous, child);
      previous = child;
      previous_pos = pos;
    }
    if (joints.empty() || !previous_pos.isZero(0.0) || origin.R != Mat3::Identity() ||
        !origin.x.isZero(0.0)) {
      UrdfJoint weld;
      weld.name = joint_name(r, b, name + (joints.empty() ? "_weld" : "_offset"));
      weld.type = UrdfJointType::Fixed;
      weld.origin = origin * SE3{Mat3::Identity(), -previous_pos};
      link = add_link(r, b, name);
      add_joint(r, std::move(weld), previous, link);
    } else {
      link = previous;
    }
  }

  std::vector<std::pair<const XMLElement*, GeomShape>> shapes;
  for (const XMLElement* g : geoms) {
    GeomShape shape = read_geom_shape(r, g);
    if (shape.visual.shape == UrdfShape::Plane)
      r.fail(g, "a plane must belong to <worldbody> (a plane has no mass)");
    shapes.emplace_back(g, std::move(shape));
  }
  UrdfLink& out = r.model.links[std::size_t(link)];
  set_body_inertia(r, out, inertial, shapes);
  for (const auto& [g, shape] : shapes) {
    out.visuals.push_back(shape.visual);
    if (r.number(g, "contype", 1.0) != 0.0 || r.number(g, "conaffinity", 1.0) != 0.0)
      out.collisions.push_back(shape.visual);
  }
  for (XMLElement* c : bodies) read_body(r, c, link, childclass, false, false);
}

void read_worldbody(Reader& r, XMLElement* world) {
  std::vector<XMLElement*> bodies;
  std::vector<UrdfVisual> geoms;
  std::vector<const XMLElement*> geom_elements;
  const std::string childclass = r.word(world, "childclass", "main");
  for (XMLElement* c = world->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    const std::string_view tag = c->Name();
    if (tag == "body") {
      bodies.push_back(c);
    } else if (tag == "geom") {
      apply_defaults(r, c, childclass);
      geoms.push_back(read_geom_shape(r, c).visual);
      geom_elements.push_back(c);
    } else if (tag == "site" || tag == "camera" || tag == "light") {
    } else if (tag == "joint" || tag == "freejoint" || tag == "inertial") {
      r.fail(c, "the world body cannot have one");
    } else if (tag == "frame" || tag == "composite" || tag == "flexcomp" ||
               tag == "replicate" || tag == "plugin" || tag == "attach") {
      r.fail(c, "not supported");
    } else {
      r.fail(c, "unknown element in <worldbody>");
    }
  }
  const int world_link = add_link(r, world, "world");
  r.model.root = "world";
  for (XMLElement* b : bodies) read_body(r, b, world_link, childclass, true, bodies.size() == 1);
  std::vector<UrdfVisual>& visuals =
      r.model.floating_root ? r.model.world_geoms : r.model.links[std::size_t(world_link)].visuals;
  for (std::size_t i = 0; i < geoms.size(); ++i) {
    visuals.push_back(geoms[i]);
    if (!r.model.floating_root &&
        (r.number(geom_elements[i], "contype", 1.0) != 0.0 ||
         r.number(geom_elements[i], "conaffinity", 1.0) != 0.0))
      r.model.links[std::size_t(world_link)].collisions.push_back(geoms[i]);
  }
}

// --- top level ------------------------------------------------------------------------

void read_compiler(Reader& r, const XMLElement* c) {
  const std::string angle = r.word(c, "angle", r.degree ? "degree" : "radian");
  if (angle != "degree" && angle != "radian")
    r.fail(c, "angle: expected degree or radian, got \"" + angle + "\"");
  r.degree = angle == "degree";
  r.eulerseq = r.word(c, "eulerseq", r.eulerseq);
  if (r.eulerseq.size() != 3 || r.eulerseq.find_first_not_of("xyzXYZ") != std::string::npos)
    r.fail(c, "eulerseq: expected three of x, y, z, X, Y, Z, got \"" + r.eulerseq + "\"");
  const std::string from_geom = r.word(c, "inertiafromgeom", "");
  if (from_geom == "true") r.inertia_from_geom = InertiaFromGeom::True;
  else if (from_geom == "false") r.inertia_from_geom = InertiaFromGeom::False;
  else if (from_geom == "auto") r.inertia_from_geom = InertiaFromGeom::Auto;
  else if (!from_geom.empty())
    r.fail(c, "inertiafromgeom: expected true, false or auto, got \"" + from_geom + "\"");
  const std::string autolimits = r.word(c, "autolimits", r.autolimits ? "true" : "false");
  if (autolimits != "true" && autolimits != "false")
    r.fail(c, "autolimits: expected true or false");
  r.autolimits = autolimits == "true";
  if (r.word(c, "coordinate", "local") != "local")
    r.fail(c, "coordinate=\"global\" is not supported (MuJoCo 3 removed it)");
  for (const char* a : {"boundmass", "boundinertia"})
    if (r.number(c, a, 0.0) > 0.0) r.fail(c, std::string(a) + " is not supported");
  r.total_mass = r.number(c, "settotalmass", r.total_mass);
  if (r.word(c, "balanceinertia", "false") != "false")
    r.fail(c, "balanceinertia is not supported");
  if (c->Attribute("inertiagrouprange") != nullptr)
    r.fail(c, "inertiagrouprange is not supported");
}

void read_option(Reader& r, const XMLElement* o) {
  r.model.timestep = r.number(o, "timestep", 0.002);
  if (!(r.model.timestep > 0.0)) r.fail(o, "timestep must be > 0");
  r.model.gravity = r.vec3(o, "gravity", r.model.gravity);
  for (const char* a : {"density", "viscosity"})
    if (r.number(o, a, 0.0) != 0.0)
      r.fail(o, std::string(a) + ": fluid forces are not supported");
  for (const XMLElement* c = o->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    if (std::string_view(c->Name()) != "flag") r.fail(c, "not supported");
    if (r.word(c, "gravity", "enable") == "disable") r.model.gravity.setZero();
    for (const char* a : {"passive", "actuation", "clampctrl", "limit", "spring", "damper"})
      if (r.word(c, a, "enable") == "disable")
        r.fail(c, std::string(a) + "=\"disable\" is not supported");
  }
}

void read_actuators(Reader& r, XMLElement* list) {
  for (XMLElement* a = list->FirstChildElement(); a != nullptr; a = a->NextSiblingElement()) {
    if (std::string_view(a->Name()) != "motor")
      r.fail(a, "not supported (motor is; other actuators add dynamics of their own)");
    apply_defaults(r, a, "main");
    UrdfActuator out;
    out.joint = r.word(a, "joint", "");
    if (out.joint.empty() || r.joint_names.count(out.joint) == 0)
      r.fail(a, out.joint.empty() ? "needs a joint (other transmissions are not supported)"
                                  : "joint \"" + out.joint + "\" does not exist");
    const char* name = a->Attribute("name");
    out.name = name != nullptr ? std::string(name) : out.joint;
    const std::vector<double> gear = r.numbers(a, "gear");
    if (gear.size() > 6) r.fail(a, "gear: expected at most 6 numbers");
    out.gear = gear.empty() ? 1.0 : gear[0];
    const std::optional<bool> limited = r.tri_state(a, "ctrllimited");
    const bool has_range = a->Attribute("ctrlrange") != nullptr;
    out.ctrl_limited = limited ? *limited : (r.autolimits && has_range);
    if (out.ctrl_limited) {
      const std::vector<double> range = r.fixed(a, "ctrlrange", 2, {0.0, 0.0});
      out.ctrl_lower = range[0];
      out.ctrl_upper = range[1];
      if (!(out.ctrl_lower < out.ctrl_upper)) r.fail(a, "ctrlrange: needs lower < upper");
    }
    const std::optional<bool> force_limited = r.tri_state(a, "forcelimited");
    if (force_limited.value_or(r.autolimits && a->Attribute("forcerange") != nullptr))
      r.fail(a, "forcerange (force clamping) is not supported");
    r.model.actuators.push_back(std::move(out));
  }
}

}  // namespace

UrdfModel parse_mjcf(std::string_view xml, const std::string& source_name) {
  Reader r;
  r.source = source_name;
  r.folder = std::filesystem::path(source_name).parent_path();
  XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS)
    throw InputError(source_name + ": line " + std::to_string(doc.ErrorLineNum()) +
                     ": malformed XML: " + doc.ErrorStr());
  XMLElement* root = doc.RootElement();
  if (root == nullptr || std::string_view(root->Name()) != "mujoco")
    throw InputError(source_name + ": missing <mujoco> root element");
  int includes = 0;
  expand_includes(r, doc, root, includes);
  const char* model_name = root->Attribute("model");
  r.model.name = model_name != nullptr && *model_name != '\0'
                     ? std::string(model_name)
                     : std::filesystem::path(source_name).stem().string();

  // The compiler settings and classes hold for the whole file, wherever they stand.
  for (const XMLElement* c = root->FirstChildElement("compiler"); c != nullptr;
       c = c->NextSiblingElement("compiler"))
    read_compiler(r, c);
  for (const XMLElement* d = root->FirstChildElement("default"); d != nullptr;
       d = d->NextSiblingElement("default"))
    read_defaults(r, d, r.classes.count("main") ? r.classes["main"] : ClassDefaults{},
                  r.classes.count("main") == 0);
  for (const XMLElement* a = root->FirstChildElement("asset"); a != nullptr;
       a = a->NextSiblingElement("asset"))
    for (const XMLElement* m = a->FirstChildElement("mesh"); m != nullptr;
         m = m->NextSiblingElement("mesh")) {
      const std::string file = r.word(m, "file", "");
      const std::string name =
          r.word(m, "name", std::filesystem::path(file).stem().string());
      r.mesh_files[name] = file;
    }

  XMLElement* world = nullptr;
  XMLElement* actuators = nullptr;
  for (XMLElement* c = root->FirstChildElement(); c != nullptr; c = c->NextSiblingElement()) {
    const std::string_view tag = c->Name();
    if (tag == "compiler" || tag == "default" || tag == "asset" || tag == "size" ||
        tag == "visual" || tag == "statistic" || tag == "sensor" || tag == "keyframe" ||
        tag == "custom") {
      // Read above, or not part of the dynamics.
    } else if (tag == "option") {
      read_option(r, c);
    } else if (tag == "worldbody") {
      if (world != nullptr) r.fail(c, "more than one <worldbody>");
      world = c;
    } else if (tag == "actuator") {
      if (actuators != nullptr) r.fail(c, "more than one <actuator>");
      actuators = c;
    } else if (tag == "contact") {
      if (c->FirstChildElement() != nullptr)
        r.warn(c, "contact pairs and exclusions are not read");
    } else if (tag == "tendon" || tag == "equality" || tag == "deformable" ||
               tag == "extension") {
      if (c->FirstChildElement() != nullptr)
        r.fail(c->FirstChildElement(), "not supported (inside <" + std::string(tag) + ">)");
    } else {
      r.fail(c, "unknown element in <mujoco>");
    }
  }
  if (world == nullptr) throw InputError(source_name + ": missing <worldbody>");
  read_worldbody(r, world);
  if (actuators != nullptr) read_actuators(r, actuators);
  if (r.total_mass > 0.0) {
    // Masses and inertias scaled alike, as MuJoCo's compiler does.
    double sum = 0.0;
    for (const UrdfLink& l : r.model.links) sum += l.mass;
    if (!(sum > 0.0)) throw InputError(source_name + ": settotalmass: the bodies have no mass");
    for (UrdfLink& l : r.model.links) {
      l.mass *= r.total_mass / sum;
      l.inertia *= r.total_mass / sum;
    }
  }
  return std::move(r.model);
}

UrdfModel read_mjcf(const std::filesystem::path& path) {
  return parse_mjcf(detail::read_input_file(path, "an MJCF file"), path.string());
}

}  // namespace marsden::io
