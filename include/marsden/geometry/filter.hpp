// Which pairs of shapes are tested for contact (docs/contact.md, Geometry). Each shape is
// registered with its body, a group and a mask of 32 bits; shapes a and b may collide when
//   - they are on different bodies, not both the world's (kWorld: the environment does
//     not collide with itself),
//   - the pair of bodies is not excluded: bodies joined by a joint are excluded by whoever
//     builds the filter from a mechanism (exclude_bodies), unless the joint asks for
//     contact (allow_bodies removes the exclusion),
//   - and (group_a & mask_b) != 0 and (group_b & mask_a) != 0 (both must accept).
// The defaults (group 1, mask all ones) let every pair of bodies collide.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace marsden::geometry {

inline constexpr int kWorld = -1;  // the body of the environment's shapes (as maximal::kWorld)

class CollisionFilter {
 public:
  // Registers a shape on `body` (>= 0, or kWorld) and returns its index (0, 1, ...).
  int add_shape(int body, std::uint32_t group = 1u, std::uint32_t mask = ~0u);
  // Never test shapes of bodies a and b against each other (a joint between them), or
  // test them again. Bodies are >= 0 or kWorld, and a != b.
  void exclude_bodies(int body_a, int body_b);
  void allow_bodies(int body_a, int body_b);

  bool bodies_excluded(int body_a, int body_b) const;
  // Shapes a and b by index; throws InputError for an index not registered.
  bool should_collide(int shape_a, int shape_b) const;
  // Every pair (a < b) that should collide, a before b, in order: set up once.
  std::vector<std::pair<int, int>> candidate_pairs() const;

  int shape_count() const { return static_cast<int>(shapes_.size()); }
  int body_of(int shape) const;

 private:
  struct Entry {
    int body;
    std::uint32_t group, mask;
  };
  std::vector<Entry> shapes_;
  std::vector<std::pair<int, int>> excluded_;  // (lower, higher), sorted
};

}  // namespace marsden::geometry
