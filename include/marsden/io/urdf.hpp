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
// Unsupported features (floating and planar joints) are errors; <visual> geometry (box,
// cylinder, sphere, mesh) is read for the player, a malformed one is an error naming the
// link; other elements that do not affect the dynamics (<collision>, <material>,
// <transmission>, ...) are ignored.
UrdfModel read_urdf(const std::filesystem::path& path);
UrdfModel parse_urdf(std::string_view xml, const std::string& source_name);

// The file a <mesh filename> of the URDF file `urdf_file` names: "file://" and absolute
// paths as they are, other paths relative to the URDF file's folder, and "package://PKG/REST"
// as REST under the nearest folder above the URDF file that is named PKG or holds a folder
// PKG (the layout of a ROS package; there is no package path to search). Empty when no
// such file exists.
std::filesystem::path resolve_mesh_file(const std::string& filename,
                                        const std::filesystem::path& urdf_file);

}  // namespace marsden::io
