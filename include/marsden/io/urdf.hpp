// URDF files (docs/urdf.md): read and validated into the engine-neutral description of
// marsden/urdf.hpp, which the tree and maximal engines turn into their models.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "marsden/urdf.hpp"

namespace marsden::io {

// Reads and validates a URDF file or text. Every problem is an InputError naming the
// source and the element, e.g.  arm.urdf: joint "elbow": unknown type "ball" (line 12).
// Unsupported features (floating and planar joints, <mimic>) are errors; elements that do
// not affect the dynamics (<visual>, <collision>, <material>, <transmission>, ...) are
// ignored.
UrdfModel read_urdf(const std::filesystem::path& path);
UrdfModel parse_urdf(std::string_view xml, const std::string& source_name);

}  // namespace marsden::io
