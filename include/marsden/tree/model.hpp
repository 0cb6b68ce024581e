// Mechanical systems as trees of frames in generalized coordinates (tree paper §II).
// Each frame hangs from its parent (or the fixed world frame) by one primitive transform:
// a translation along or a rotation about the parent's x, y or z axis, driven by one
// coordinate or fixed at a constant, or a constant SE(3) transform. Arbitrary joint axes
// come from constant transforms around a primitive one.
//
// Conventions: SI units; the world frame is fixed, z up; twists are (omega, v) and wrenches
// (torque, force), as in lie/se3.hpp. Build a Model with ModelBuilder; a Model is
// immutable, evaluations write into a tree::Data (data.hpp).
#pragma once

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "marsden/lie/se3.hpp"
#include "marsden/lie/types.hpp"

namespace marsden::tree {

enum class Transform { Tx, Ty, Tz, Rx, Ry, Rz, Const };

// Parses "tx", "ty", "tz", "rx", "ry", "rz", "const"; nullopt otherwise.
std::optional<Transform> transform_from_name(const std::string& name);
const char* transform_name(Transform t);

inline constexpr int kWorld = -1;  // parent index of frames attached to the world

struct Frame {
  std::string name;
  int parent = kWorld;
  Transform type = Transform::Const;
  int coord = -1;         // driving coordinate, or -1 for a fixed transform
  double value = 0.0;     // the fixed amount of a primitive without a coordinate (m or rad)
  SE3 constant;           // the transform of a Const frame
};

struct Coordinate {
  std::string name;
  int frame = -1;           // the frame it drives
  bool prescribed = false;  // its next value is an input of the step (files: "kinematic")
  // Joint limits as read from a model file; recorded, not enforced by the dynamics.
  double lower = -1e300, upper = 1e300;
  // Rotor inertia on this coordinate (MJCF armature): kinetic energy 1/2 armature qd^2,
  // added to the mass matrix's diagonal (kg m^2 or kg, >= 0).
  double armature = 0.0;
};

// A rigid mass attached to a frame: mass, centre of mass in the frame, rotational inertia
// about the centre of mass in the frame's axes (symmetric positive definite).
struct Mass {
  int frame = -1;
  double mass = 0.0;
  Vec3 com = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
};

// Potentials and forces. Frame springs and dampers act between the frame origins.
struct CoordinateSpring { int coord; double stiffness; double rest; };     // N/m or N m/rad
struct FrameSpring { int frame_a, frame_b; double stiffness; double rest_length; };
struct CoordinateDamper { int coord; double damping; };                    // N s/m or N m s/rad
struct FrameDamper { int frame_a, frame_b; double damping; };
// Generated elements act on a few coordinates q_c (at most this many), written with
// marsden.symbolic and compiled there; they call the loaded object (tree/generated.hpp).
inline constexpr int kGeneratedElementMaxCoords = 16;
// A potential V(q_c) (marsden.symbolic.TreePotential): it enters the Lagrangian as a
// CoordinateSpring does, V, dV/dq_c and d2V/dq_c2.
// V (1), grad V (n_c) and hess V (n_c x n_c, column-major) at q_c; a null output is skipped.
using GeneratedPotentialFn = int (*)(const double* q_c, double* V, double* grad_V,
                                     double* hess_V);
struct GeneratedPotential {
  std::string library;  // the object's path, for messages
  int size = 0;                   // n_c
  std::array<int, kGeneratedElementMaxCoords> coords{};
  GeneratedPotentialFn evaluate = nullptr;
  std::shared_ptr<void> handle;   // keeps the object loaded while a model uses it
};
// A generalized force Q(q_c, qd_c) on its coordinates (marsden.symbolic.TreeForce): it
// enters Q as a CoordinateDamper does, with dQ/dq_c and dQ/dqd_c. Outputs as above:
// Q (n_c), Q_q and Q_v (n_c x n_c, column-major); a null output is skipped.
using GeneratedForceFn = int (*)(const double* q_c, const double* qd_c, double* Q, double* Q_q,
                                 double* Q_v);
struct GeneratedForce {
  std::string library;
  int size = 0;
  std::array<int, kGeneratedElementMaxCoords> coords{};
  GeneratedForceFn evaluate = nullptr;
  std::shared_ptr<void> handle;
};
// A holonomic constraint h(q_c) = 0 of m rows, 1 <= m <= n_c
// (marsden.symbolic.TreeConstraint): it enters h, Dh and sum_i w_i d2h_i/dq2 as the
// built-in constraints do (ConstraintKind::Generated). Outputs h (m), Dh (m x n_c) and
// h_qq_w = sum_i w_i d2h_i/dq_c2 (n_c x n_c) for the weights w (m), column-major; a null
// output is skipped, w is read only for h_qq_w.
using GeneratedConstraintFn = int (*)(const double* q_c, const double* w, double* h,
                                      double* Dh, double* h_qq_w);
struct GeneratedConstraint {
  std::string library;
  int size = 0;
  int rows = 0;                   // m
  std::array<int, kGeneratedElementMaxCoords> coords{};
  GeneratedConstraintFn evaluate = nullptr;
  std::shared_ptr<void> handle;
};
// Inputs (the vector u of a step): a generalized force on a coordinate (1 input), or a
// wrench at a frame's origin (6 inputs, (torque, force)) in the frame's axes (body) or in
// the world's axes.
enum class InputKind { CoordinateForce, BodyWrench, WorldWrench };
struct Input {
  InputKind kind;
  int index;  // coordinate or frame
  int first;  // its first entry in u
  // A coordinate force is a motor (MJCF <motor>): gear * u, u clamped to [lower, upper]
  // (MuJoCo's ctrlrange; infinite bounds where unlimited). gear: N m or N per unit of u.
  double gear = 1.0;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
};

// Holonomic constraints h(q) = 0, imposed at the position level.
enum class ConstraintKind {
  Distance,      // |p_a - p_b| - d, d constant or the value of a (prescribed) coordinate
  PointOnPlane,  // n_b . (p_a - p_b): frame a's origin on the plane through frame b's
                 // origin with normal n (in b's axes)
  PointToPoint,  // p_a - p_b in world axes (3 rows)
  CoordinateCoupling,  // q_a - (multiplier q_b + offset): URDF's <mimic>
  Generated            // Model::generated_constraints()[generated] (m rows)
};
struct Constraint {
  std::string name;
  ConstraintKind kind;
  int frame_a, frame_b;
  double distance = 0.0;
  int distance_coord = -1;  // Distance: the coordinate giving d, or -1 for the constant
  Vec3 normal = Vec3::UnitZ();
  int coord_a = -1, coord_b = -1;  // CoordinateCoupling: follower and leader
  double multiplier = 1.0, offset = 0.0;
  int generated = -1, generated_rows = 0;  // Generated: the element and its m
  int first_row = 0;
  int rows() const {
    return kind == ConstraintKind::PointToPoint ? 3
           : kind == ConstraintKind::Generated  ? generated_rows
                                                : 1;
  }
};

class ModelBuilder;

class Model {
 public:
  int num_frames() const { return static_cast<int>(frames_.size()); }
  int num_coords() const { return static_cast<int>(coords_.size()); }
  int num_dynamic() const { return static_cast<int>(dynamic_.size()); }
  int num_prescribed() const { return static_cast<int>(prescribed_.size()); }
  int num_inputs() const { return num_inputs_; }
  int num_constraint_rows() const { return num_constraint_rows_; }

  const std::vector<Frame>& frames() const { return frames_; }
  const std::vector<Coordinate>& coords() const { return coords_; }
  const std::vector<Mass>& masses() const { return masses_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const std::vector<CoordinateSpring>& coordinate_springs() const { return coord_springs_; }
  const std::vector<FrameSpring>& frame_springs() const { return frame_springs_; }
  const std::vector<CoordinateDamper>& coordinate_dampers() const { return coord_dampers_; }
  const std::vector<FrameDamper>& frame_dampers() const { return frame_dampers_; }
  const std::vector<GeneratedPotential>& generated_potentials() const {
    return generated_potentials_;
  }
  const std::vector<GeneratedForce>& generated_forces() const { return generated_forces_; }
  const std::vector<GeneratedConstraint>& generated_constraints() const {
    return generated_constraints_;
  }
  const std::vector<Input>& inputs() const { return inputs_; }
  const Vec3& gravity() const { return gravity_; }

  // Coordinate indices of the dynamic and of the prescribed coordinates, ascending.
  const std::vector<int>& dynamic_coords() const { return dynamic_; }
  const std::vector<int>& prescribed_coords() const { return prescribed_; }
  // Position of coordinate i among the dynamic (or prescribed) ones, -1 if it is not one.
  int dynamic_index(int coord) const { return dyn_index_[coord]; }
  int prescribed_index(int coord) const { return prescribed_index_[coord]; }

  // Index by name; throws InputError naming the model's frames/coordinates when absent.
  int frame_index(const std::string& name) const;
  int coord_index(const std::string& name) const;

  // Joints: the coordinate-driven frames, ordered so that a parent comes before its
  // children. Fixed frames ride on the nearest driven ancestor (or the world); the
  // recursion runs over joints only, so its cost does not depend on how many constant
  // frames the model spells out.
  struct Joint {
    int frame;             // the driven frame
    int coord;             // its coordinate
    int parent;            // parent joint, or -1 for the world
    SE3 placement;         // from the parent joint's frame to this frame before q moves it
    Vec6 axis;             // unit twist of the primitive in its own frame: (e, 0) or (0, e)
    bool revolute;
    // The masses riding on this joint, lumped, in the joint frame.
    double mass = 0.0;
    Vec3 first_moment = Vec3::Zero();  // sum m c
    Mat3 inertia_origin = Mat3::Zero();  // about the joint frame's origin
  };
  const std::vector<Joint>& joints() const { return joints_; }
  // The joint a frame rides on (-1: the world) and the frame's pose relative to it.
  int frame_joint(int frame) const { return frame_joint_[frame]; }
  const SE3& frame_offset(int frame) const { return frame_offset_[frame]; }
  // Joint index of a coordinate (every coordinate drives exactly one frame).
  int coord_joint(int coord) const { return coord_joint_[coord]; }
  // True when joint a is joint b or one of its ancestors.
  bool joint_supports(int a, int b) const;

 private:
  friend class ModelBuilder;
  std::vector<Frame> frames_;
  std::vector<Coordinate> coords_;
  // Names to indices: lookups and the builder's duplicate checks stay O(1) on large models.
  std::unordered_map<std::string, int> frame_by_name_, coord_by_name_;
  std::vector<Mass> masses_;
  std::vector<Constraint> constraints_;
  std::vector<CoordinateSpring> coord_springs_;
  std::vector<FrameSpring> frame_springs_;
  std::vector<CoordinateDamper> coord_dampers_;
  std::vector<FrameDamper> frame_dampers_;
  std::vector<GeneratedPotential> generated_potentials_;
  std::vector<GeneratedForce> generated_forces_;
  std::vector<GeneratedConstraint> generated_constraints_;
  std::vector<Input> inputs_;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
  int num_inputs_ = 0;
  int num_constraint_rows_ = 0;
  std::vector<int> dynamic_, prescribed_, dyn_index_, prescribed_index_;
  std::vector<Joint> joints_;
  std::vector<int> frame_joint_, coord_joint_;
  std::vector<SE3> frame_offset_;
  std::vector<int> joint_depth_;
};

// Builds a Model step by step; every call validates its arguments and throws InputError
// naming the offending frame, coordinate or value. Frames must be added parent first.
class ModelBuilder {
 public:
  ModelBuilder();
  // Continues from a built model (to add elements to a built-in or URDF model).
  explicit ModelBuilder(Model model);

  // A frame driven by a new coordinate (dynamic unless prescribed is true). Returns the
  // frame index. type must be a primitive (not Const).
  int add_joint_frame(const std::string& name, int parent, Transform type,
                      const std::string& coord_name, bool prescribed = false);
  // A primitive transform fixed at value (m or rad).
  int add_fixed_frame(const std::string& name, int parent, Transform type, double value);
  // A constant SE(3) transform.
  int add_const_frame(const std::string& name, int parent, const SE3& transform);

  void add_mass(int frame, double mass, const Vec3& com, const Mat3& inertia);
  void set_gravity(const Vec3& g);
  void set_limits(int coord, double lower, double upper);
  void set_armature(int coord, double armature);  // Coordinate::armature, >= 0

  void add_coordinate_spring(int coord, double stiffness, double rest);
  void add_frame_spring(int frame_a, int frame_b, double stiffness, double rest_length);
  void add_coordinate_damper(int coord, double damping);
  void add_frame_damper(int frame_a, int frame_b, double damping);
  // Loads the potential compiled by marsden.symbolic.TreePotential at `library` (tree
  // generated ABI, src/tree/generated.cpp) and binds its coordinates, named or indexed in
  // the object, to this model's. InputError naming the file and the coordinate otherwise.
  void add_generated_potential(const std::string& library);
  // The same for a force compiled by marsden.symbolic.TreeForce.
  void add_generated_force(const std::string& library);
  // The same for a constraint compiled by marsden.symbolic.TreeConstraint: a constraint
  // named as the object names it, of its m rows.
  void add_generated_constraint(const std::string& library);
  // Each returns the index of its first entry in the input vector u. A coordinate force is
  // gear * u with u clamped to [lower, upper] (a motor; the defaults apply u as it is).
  int add_coordinate_force_input(int coord, double gear = 1.0,
                                 double lower = -std::numeric_limits<double>::infinity(),
                                 double upper = std::numeric_limits<double>::infinity());
  int add_wrench_input(int frame, bool body_axes);

  void add_distance_constraint(const std::string& name, int frame_a, int frame_b,
                               double distance);
  // The distance is the value of coordinate distance_coord (usually prescribed).
  void add_prescribed_distance_constraint(const std::string& name, int frame_a, int frame_b,
                                          int distance_coord);
  void add_point_on_plane_constraint(const std::string& name, int frame_a, int plane_frame,
                                     const Vec3& normal);
  void add_point_to_point_constraint(const std::string& name, int frame_a, int frame_b);
  // q[follower] = multiplier q[leader] + offset.
  void add_coordinate_coupling_constraint(const std::string& name, int follower, int leader,
                                          double multiplier, double offset);

  int num_frames() const { return static_cast<int>(model_.frames_.size()); }
  int num_coords() const { return static_cast<int>(model_.coords_.size()); }
  int frame_index(const std::string& name) const { return model_.frame_index(name); }
  int coord_index(const std::string& name) const { return model_.coord_index(name); }

  // Validates the whole model, including that every dynamic coordinate moves some mass
  // (or a constraint involves what it moves), and returns it; the builder is left empty.
  // A mass matrix that is singular only at some configurations is found at run time.
  Model build();

 private:
  static void check_coordinates_move_mass(const Model& m);
  int add_frame(Frame frame);
  void check_frame(int frame, const char* what) const;
  void check_coord(int coord, const char* what) const;
  Model model_;
};

}  // namespace marsden::tree
