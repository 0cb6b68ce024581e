// A description's link and joint by name, for the URDF and MJCF reader tests.
#pragma once

#include <stdexcept>
#include <string>

#include "marsden/urdf.hpp"

namespace marsden::test {

inline const UrdfLink& link_named(const UrdfModel& m, const std::string& name) {
  for (const UrdfLink& l : m.links)
    if (l.name == name) return l;
  throw std::runtime_error("no link " + name);
}

inline const UrdfJoint& joint_named(const UrdfModel& m, const std::string& name) {
  for (const UrdfJoint& j : m.joints)
    if (j.name == name) return j;
  throw std::runtime_error("no joint " + name);
}

}  // namespace marsden::test
