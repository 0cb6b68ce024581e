#include "marsden/tree/model.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include "marsden/error.hpp"
#include "tree/detail.hpp"

namespace marsden::tree {

namespace {

const char* const kTransformNames[] = {"tx", "ty", "tz", "rx", "ry", "rz", "const"};

bool finite(const Vec3& v) { return v.allFinite(); }

std::string number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

}  // namespace

std::optional<Transform> transform_from_name(const std::string& name) {
  for (int i = 0; i < 7; ++i)
    if (name == kTransformNames[i]) return static_cast<Transform>(i);
  return std::nullopt;
}

const char* transform_name(Transform t) { return kTransformNames[static_cast<int>(t)]; }

namespace {

// The first few names, for a message that stays short on a model of any size.
template <class Items>
std::string some_names(const Items& items) {
  constexpr std::size_t kShown = 20;
  std::string known;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i)
    known += (i == 0 ? "" : ", ") + items[i].name;
  if (items.size() > kShown) known += ", ... (" + std::to_string(items.size()) + " in all)";
  return known;
}

// A name quoted for a message, cut to 80 characters.
std::string quoted_name(const std::string& name) {
  return "\"" + (name.size() > 80 ? name.substr(0, 80) + "..." : name) + "\"";
}

}  // namespace

int Model::frame_index(const std::string& name) const {
  if (const auto it = frame_by_name_.find(name); it != frame_by_name_.end()) return it->second;
  throw InputError("tree model: no frame named " + quoted_name(name) + " (frames: " +
                   some_names(frames_) + ")");
}

int Model::coord_index(const std::string& name) const {
  if (const auto it = coord_by_name_.find(name); it != coord_by_name_.end()) return it->second;
  throw InputError("tree model: no coordinate named " + quoted_name(name) + " (coordinates: " +
                   some_names(coords_) + ")");
}

bool Model::joint_supports(int a, int b) const {
  if (a < 0) return true;
  while (b >= 0 && joint_depth_[b] > joint_depth_[a]) b = joints_[b].parent;
  return a == b;
}

ModelBuilder::ModelBuilder() = default;

ModelBuilder::ModelBuilder(Model model) : model_(std::move(model)) {}

void ModelBuilder::check_frame(int frame, const char* what) const {
  if (frame < 0 || frame >= num_frames())
    throw InputError(std::string("tree model: ") + what + ": frame index " +
                     std::to_string(frame) + " out of range (" + std::to_string(num_frames()) +
                     " frames)");
}

void ModelBuilder::check_coord(int coord, const char* what) const {
  if (coord < 0 || coord >= num_coords())
    throw InputError(std::string("tree model: ") + what + ": coordinate index " +
                     std::to_string(coord) + " out of range (" +
                     std::to_string(num_coords()) + " coordinates)");
}

int ModelBuilder::add_frame(Frame frame) {
  if (frame.name.empty()) throw InputError("tree model: a frame needs a name");
  if (model_.frame_by_name_.count(frame.name) != 0)
    throw InputError("tree model: duplicate frame name " + quoted_name(frame.name));
  if (frame.parent != kWorld) check_frame(frame.parent, ("frame \"" + frame.name + "\" parent").c_str());
  model_.frame_by_name_.emplace(frame.name, num_frames());
  model_.frames_.push_back(std::move(frame));
  return num_frames() - 1;
}

int ModelBuilder::add_joint_frame(const std::string& name, int parent, Transform type,
                                  const std::string& coord_name, bool prescribed) {
  if (type == Transform::Const)
    throw InputError("tree model: frame \"" + name +
                     "\": a coordinate drives a primitive transform (tx..rz), not const");
  if (coord_name.empty())
    throw InputError("tree model: frame \"" + name + "\": the coordinate needs a name");
  if (model_.coord_by_name_.count(coord_name) != 0)
    throw InputError("tree model: frame " + quoted_name(name) + ": duplicate coordinate name " +
                     quoted_name(coord_name));
  Frame f;
  f.name = name;
  f.parent = parent;
  f.type = type;
  f.coord = num_coords();
  const int index = add_frame(std::move(f));
  Coordinate c;
  c.name = coord_name;
  c.frame = index;
  c.prescribed = prescribed;
  model_.coord_by_name_.emplace(coord_name, num_coords());
  model_.coords_.push_back(c);
  return index;
}

int ModelBuilder::add_fixed_frame(const std::string& name, int parent, Transform type,
                                  double value) {
  if (type == Transform::Const)
    throw InputError("tree model: frame \"" + name + "\": use add_const_frame for const");
  if (!std::isfinite(value))
    throw InputError("tree model: frame \"" + name + "\": value is not finite");
  Frame f;
  f.name = name;
  f.parent = parent;
  f.type = type;
  f.value = value;
  return add_frame(std::move(f));
}

int ModelBuilder::add_const_frame(const std::string& name, int parent, const SE3& transform) {
  const double orth = (transform.R.transpose() * transform.R - Mat3::Identity()).norm();
  if (!transform.R.allFinite() || !transform.x.allFinite() || orth > 1e-9 ||
      transform.R.determinant() < 0.0)
    throw InputError("tree model: frame \"" + name +
                     "\": the constant transform is not a finite rigid motion");
  Frame f;
  f.name = name;
  f.parent = parent;
  f.type = Transform::Const;
  f.constant = transform;
  return add_frame(std::move(f));
}

void ModelBuilder::add_mass(int frame, double mass, const Vec3& com, const Mat3& inertia) {
  check_frame(frame, "mass");
  const std::string where = "tree model: mass on frame \"" + model_.frames_[frame].name + "\"";
  if (!(mass >= 0.0) || !std::isfinite(mass))
    throw InputError(where + ": mass must be non-negative and finite, got " + number(mass));
  if (!finite(com)) throw InputError(where + ": centre of mass is not finite");
  if (!inertia.allFinite() || (inertia - inertia.transpose()).norm() > 1e-9 * (1.0 + inertia.norm()))
    throw InputError(where + ": inertia must be a finite symmetric matrix");
  const Vec3 eig = Eigen::SelfAdjointEigenSolver<Mat3>(inertia).eigenvalues();
  if (eig.minCoeff() < -1e-12 * (1.0 + eig.maxCoeff()))
    throw InputError(where + ": inertia must be positive semi-definite (smallest eigenvalue " +
                     number(eig.minCoeff()) + ")");
  if (mass == 0.0 && eig.maxCoeff() == 0.0)
    throw InputError(where + ": neither mass nor inertia (leave a massless frame without one)");
  model_.masses_.push_back(Mass{frame, mass, com, inertia});
}

void ModelBuilder::set_gravity(const Vec3& g) {
  if (!finite(g)) throw InputError("tree model: gravity is not finite");
  model_.gravity_ = g;
}

void ModelBuilder::set_armature(int coord, double armature) {
  check_coord(coord, "armature");
  if (!(armature >= 0.0) || !std::isfinite(armature))
    throw InputError("tree model: coordinate \"" + model_.coords_[coord].name +
                     "\": armature must be finite and >= 0");
  model_.coords_[coord].armature = armature;
}

void ModelBuilder::set_limits(int coord, double lower, double upper) {
  check_coord(coord, "limits");
  if (std::isnan(lower) || std::isnan(upper) || lower > upper)
    throw InputError("tree model: coordinate \"" + model_.coords_[coord].name +
                     "\": limits need lower <= upper");
  model_.coords_[coord].lower = lower;
  model_.coords_[coord].upper = upper;
}

void ModelBuilder::add_coordinate_spring(int coord, double stiffness, double rest) {
  check_coord(coord, "coordinate spring");
  if (!std::isfinite(stiffness) || stiffness < 0.0 || !std::isfinite(rest))
    throw InputError("tree model: spring on \"" + model_.coords_[coord].name +
                     "\": stiffness must be finite and >= 0, rest finite");
  model_.coord_springs_.push_back({coord, stiffness, rest});
}

void ModelBuilder::add_frame_spring(int frame_a, int frame_b, double stiffness,
                                    double rest_length) {
  check_frame(frame_a, "frame spring");
  check_frame(frame_b, "frame spring");
  if (!std::isfinite(stiffness) || stiffness < 0.0 || !std::isfinite(rest_length) ||
      rest_length < 0.0)
    throw InputError("tree model: spring between \"" + model_.frames_[frame_a].name +
                     "\" and \"" + model_.frames_[frame_b].name +
                     "\": stiffness and rest length must be finite and >= 0");
  model_.frame_springs_.push_back({frame_a, frame_b, stiffness, rest_length});
}

void ModelBuilder::add_coordinate_damper(int coord, double damping) {
  check_coord(coord, "coordinate damper");
  if (!std::isfinite(damping) || damping < 0.0)
    throw InputError("tree model: damper on \"" + model_.coords_[coord].name +
                     "\": damping must be finite and >= 0");
  model_.coord_dampers_.push_back({coord, damping});
}

void ModelBuilder::add_frame_damper(int frame_a, int frame_b, double damping) {
  check_frame(frame_a, "frame damper");
  check_frame(frame_b, "frame damper");
  if (!std::isfinite(damping) || damping < 0.0)
    throw InputError("tree model: damper between \"" + model_.frames_[frame_a].name +
                     "\" and \"" + model_.frames_[frame_b].name +
                     "\": damping must be finite and >= 0");
  model_.frame_dampers_.push_back({frame_a, frame_b, damping});
}

int ModelBuilder::add_coordinate_force_input(int coord, double gear, double lower,
                                             double upper) {
  check_coord(coord, "force input");
  if (!std::isfinite(gear) || gear == 0.0)
    throw InputError("tree model: force input on \"" + model_.coords_[coord].name +
                     "\": gear must be finite and non-zero");
  if (std::isnan(lower) || std::isnan(upper) || !(lower < upper) ||
      lower == std::numeric_limits<double>::infinity() ||
      upper == -std::numeric_limits<double>::infinity())
    throw InputError("tree model: force input on \"" + model_.coords_[coord].name +
                     "\": its control range needs lower < upper");
  model_.inputs_.push_back({InputKind::CoordinateForce, coord, model_.num_inputs_, gear, lower, upper});
  return model_.num_inputs_++;
}

int ModelBuilder::add_wrench_input(int frame, bool body_axes) {
  check_frame(frame, "wrench input");
  model_.inputs_.push_back({body_axes ? InputKind::BodyWrench : InputKind::WorldWrench, frame,
                            model_.num_inputs_});
  const int first = model_.num_inputs_;
  model_.num_inputs_ += 6;
  return first;
}

void ModelBuilder::add_distance_constraint(const std::string& name, int frame_a, int frame_b,
                                           double distance) {
  check_frame(frame_a, "distance constraint");
  check_frame(frame_b, "distance constraint");
  if (!std::isfinite(distance) || !(distance > 0.0))
    throw InputError("tree model: constraint \"" + name +
                     "\": the distance must be positive and finite (got " + number(distance) +
                     "); use a point-to-point constraint for coincident points");
  Constraint c;
  c.name = name;
  c.kind = ConstraintKind::Distance;
  c.frame_a = frame_a;
  c.frame_b = frame_b;
  c.distance = distance;
  model_.constraints_.push_back(c);
}

void ModelBuilder::add_prescribed_distance_constraint(const std::string& name, int frame_a,
                                                      int frame_b, int distance_coord) {
  check_frame(frame_a, "distance constraint");
  check_frame(frame_b, "distance constraint");
  check_coord(distance_coord, "distance constraint");
  Constraint c;
  c.name = name;
  c.kind = ConstraintKind::Distance;
  c.frame_a = frame_a;
  c.frame_b = frame_b;
  c.distance_coord = distance_coord;
  model_.constraints_.push_back(c);
}

void ModelBuilder::add_point_on_plane_constraint(const std::string& name, int frame_a,
                                                 int plane_frame, const Vec3& normal) {
  check_frame(frame_a, "point-on-plane constraint");
  check_frame(plane_frame, "point-on-plane constraint");
  if (!finite(normal) || normal.norm() < 1e-12)
    throw InputError("tree model: constraint \"" + name + "\": the normal must be non-zero");
  Constraint c;
  c.name = name;
  c.kind = ConstraintKind::PointOnPlane;
  c.frame_a = frame_a;
  c.frame_b = plane_frame;
  c.normal = normal.normalized();
  model_.constraints_.push_back(c);
}

void ModelBuilder::add_point_to_point_constraint(const std::string& name, int frame_a,
                                                 int frame_b) {
  check_frame(frame_a, "point-to-point constraint");
  check_frame(frame_b, "point-to-point constraint");
  Constraint c;
  c.name = name;
  c.kind = ConstraintKind::PointToPoint;
  c.frame_a = frame_a;
  c.frame_b = frame_b;
  model_.constraints_.push_back(c);
}

void ModelBuilder::add_coordinate_coupling_constraint(const std::string& name, int follower,
                                                      int leader, double multiplier,
                                                      double offset) {
  check_coord(follower, "coordinate coupling");
  check_coord(leader, "coordinate coupling");
  if (follower == leader || !std::isfinite(multiplier) || !std::isfinite(offset))
    throw InputError("tree model: constraint \"" + name +
                     "\": a coupling needs two different coordinates and a finite multiplier "
                     "and offset");
  Constraint c;
  c.name = name;
  c.kind = ConstraintKind::CoordinateCoupling;
  c.frame_a = c.frame_b = kWorld;
  c.coord_a = follower;
  c.coord_b = leader;
  c.multiplier = multiplier;
  c.offset = offset;
  model_.constraints_.push_back(c);
}

Model ModelBuilder::build() {
  Model m = std::move(model_);
  model_ = Model{};
  const int nf = m.num_frames(), nc = m.num_coords();
  // What follows derives from the elements; a builder continued from a model rebuilds it.
  m.dynamic_.clear();
  m.prescribed_.clear();
  m.joints_.clear();
  m.joint_depth_.clear();

  m.dyn_index_.assign(nc, -1);
  m.prescribed_index_.assign(nc, -1);
  for (int i = 0; i < nc; ++i) {
    if (m.coords_[i].prescribed) {
      m.prescribed_index_[i] = static_cast<int>(m.prescribed_.size());
      m.prescribed_.push_back(i);
    } else {
      m.dyn_index_[i] = static_cast<int>(m.dynamic_.size());
      m.dynamic_.push_back(i);
    }
  }

  // Collapse fixed frames onto the nearest driven ancestor (frames come parent first).
  m.frame_joint_.assign(nf, -1);
  m.frame_offset_.assign(nf, SE3::identity());
  m.coord_joint_.assign(nc, -1);
  for (int f = 0; f < nf; ++f) {
    const Frame& fr = m.frames_[f];
    const int parent_joint = fr.parent == kWorld ? -1 : m.frame_joint_[fr.parent];
    const SE3 parent_offset = fr.parent == kWorld ? SE3::identity() : m.frame_offset_[fr.parent];
    if (fr.coord >= 0) {
      Model::Joint j;
      j.frame = f;
      j.coord = fr.coord;
      j.parent = parent_joint;
      j.placement = parent_offset;
      j.revolute = detail::is_rotation(fr.type);
      j.axis = detail::primitive_axis(fr.type);
      m.frame_joint_[f] = static_cast<int>(m.joints_.size());
      m.coord_joint_[fr.coord] = m.frame_joint_[f];
      m.joint_depth_.push_back(parent_joint < 0 ? 0 : m.joint_depth_[parent_joint] + 1);
      m.joints_.push_back(j);
    } else {
      m.frame_joint_[f] = parent_joint;
      m.frame_offset_[f] =
          parent_offset * (fr.type == Transform::Const ? fr.constant
                                                       : detail::primitive(fr.type, fr.value));
    }
  }

  // Lump the masses onto their joints, in the joint frame. Masses fixed to the world only
  // add a constant to the energy and are left out.
  for (const Mass& mass : m.masses_) {
    const int j = m.frame_joint_[mass.frame];
    if (j < 0) continue;
    const SE3& off = m.frame_offset_[mass.frame];
    const Vec3 c = off.act(mass.com);
    Model::Joint& joint = m.joints_[j];
    joint.mass += mass.mass;
    joint.first_moment += mass.mass * c;
    joint.inertia_origin += off.R * mass.inertia * off.R.transpose() +
                            mass.mass * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  }

  int row = 0;
  for (Constraint& c : m.constraints_) {
    c.first_row = row;
    row += c.rows();
  }
  m.num_constraint_rows_ = row;
  check_coordinates_move_mass(m);
  return m;
}

// A dynamic coordinate whose joint moves no mass has a zero row in M: its acceleration is
// undetermined and a given velocity would silently be lost. Refused unless a constraint
// involves what it moves (a coupling, or a constrained frame it moves, may determine it).
void ModelBuilder::check_coordinates_move_mass(const Model& m) {
  const auto& joints = m.joints_;
  const int nj = static_cast<int>(joints.size());
  // Joints come parent first: a backward sweep gathers each subtree.
  std::vector<bool> moves(nj, false), constrained(nj, false);
  for (int j = 0; j < nj; ++j) {
    const Model::Joint& joint = joints[j];
    // A revolute joint's own masses count when they do not all lie on its axis.
    const Vec3 e = joint.axis.head<3>();
    moves[j] = joint.revolute ? e.dot(joint.inertia_origin * e) > 0.0 : joint.mass > 0.0;
  }
  auto mark_path = [&](int frame) {
    for (int j = frame >= 0 ? m.frame_joint_[frame] : -1; j >= 0; j = joints[j].parent)
      constrained[j] = true;
  };
  for (const Constraint& c : m.constraints_) {
    if (c.kind == ConstraintKind::CoordinateCoupling) {
      constrained[m.coord_joint_[c.coord_a]] = constrained[m.coord_joint_[c.coord_b]] = true;
    } else if (c.kind == ConstraintKind::Generated) {
      const GeneratedConstraint& g = m.generated_constraints_[c.generated];
      for (int a = 0; a < g.size; ++a) constrained[m.coord_joint_[g.coords[a]]] = true;
    } else {
      mark_path(c.frame_a);
      mark_path(c.frame_b);
    }
  }
  for (int j = nj - 1; j >= 0; --j) {
    const int p = joints[j].parent;
    if (p >= 0 && (moves[j] || joints[j].mass > 0.0 || !joints[j].inertia_origin.isZero()))
      moves[p] = true;
  }
  std::vector<std::string> names;
  for (int j = 0; j < nj; ++j) {
    const Coordinate& c = m.coords_[joints[j].coord];
    if (!moves[j] && !constrained[j] && !c.prescribed) names.push_back("'" + c.name + "'");
  }
  if (names.empty()) return;
  std::string list;
  for (std::size_t k = 0; k < names.size() && k < 20; ++k) list += (k ? ", " : "") + names[k];
  if (names.size() > 20) list += " and " + std::to_string(names.size() - 20) + " more";
  throw InputError("tree model: coordinate" + std::string(names.size() > 1 ? "s " : " ") + list +
                   (names.size() > 1 ? " move" : " moves") +
                   " no mass (no frame it moves carries a mass or inertia off its axis, and no "
                   "constraint involves them), so its acceleration is undetermined; give such a "
                   "frame a mass, make the coordinate kinematic, or remove it");
}

}  // namespace marsden::tree
