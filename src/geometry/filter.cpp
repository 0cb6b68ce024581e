// Collision filtering: bodies, exclusions, groups and masks (filter.hpp).
#include "marsden/geometry/filter.hpp"

#include <algorithm>
#include <string>

#include "marsden/error.hpp"

namespace marsden::geometry {

namespace {

void check_body(const char* what, int body) {
  if (body < kWorld)
    throw InputError(std::string("collision filter: ") + what + " " + std::to_string(body) +
                     " is neither a body (>= 0) nor the world (-1)");
}

std::pair<int, int> body_pair(int body_a, int body_b) {
  check_body("body_a", body_a);
  check_body("body_b", body_b);
  if (body_a == body_b)
    throw InputError("collision filter: a body pair needs two bodies, got " +
                     std::to_string(body_a) + " twice");
  return {std::min(body_a, body_b), std::max(body_a, body_b)};
}

}  // namespace

int CollisionFilter::add_shape(int body, std::uint32_t group, std::uint32_t mask) {
  check_body("body", body);
  shapes_.push_back({body, group, mask});
  return shape_count() - 1;
}

void CollisionFilter::exclude_bodies(int body_a, int body_b) {
  const auto key = body_pair(body_a, body_b);
  const auto it = std::lower_bound(excluded_.begin(), excluded_.end(), key);
  if (it == excluded_.end() || *it != key) excluded_.insert(it, key);
}

void CollisionFilter::allow_bodies(int body_a, int body_b) {
  const auto key = body_pair(body_a, body_b);
  const auto it = std::lower_bound(excluded_.begin(), excluded_.end(), key);
  if (it != excluded_.end() && *it == key) excluded_.erase(it);
}

bool CollisionFilter::bodies_excluded(int body_a, int body_b) const {
  if (body_a == body_b) return false;
  const std::pair<int, int> key = std::minmax(body_a, body_b);
  return std::binary_search(excluded_.begin(), excluded_.end(), key);
}

int CollisionFilter::body_of(int shape) const {
  if (shape < 0 || shape >= shape_count())
    throw InputError("collision filter: shape " + std::to_string(shape) + " is not registered (" +
                     std::to_string(shape_count()) + " shapes)");
  return shapes_[shape].body;
}

bool CollisionFilter::should_collide(int shape_a, int shape_b) const {
  const int body_a = body_of(shape_a), body_b = body_of(shape_b);
  if (body_a == body_b) return false;  // one body (or both the world's)
  if (bodies_excluded(body_a, body_b)) return false;
  const Entry &a = shapes_[shape_a], &b = shapes_[shape_b];
  return (a.group & b.mask) != 0u && (b.group & a.mask) != 0u;
}

std::vector<std::pair<int, int>> CollisionFilter::candidate_pairs() const {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < shape_count(); ++a)
    for (int b = a + 1; b < shape_count(); ++b)
      if (should_collide(a, b)) pairs.emplace_back(a, b);
  return pairs;
}

}  // namespace marsden::geometry
