// What the scene-file tests share: loading a scene text and checking its error message.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/io/scene.hpp"

namespace marsden::test {

// Loads `text` as DIR/scene.json and returns the InputError message ("" if none).
inline std::string load_error(const TempDir& dir, const std::string& text) {
  const auto path = dir.write("scene.json", text);
  try {
    io::load_scene(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Every message names the file, the field and the problem.
inline void expect_message(const TempDir& dir, const std::string& msg, const std::string& field,
                           const std::string& problem) {
  EXPECT_NE(msg.find((dir / "scene.json").string() + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("field '" + field + "': "), std::string::npos) << msg;
  EXPECT_NE(msg.find(problem), std::string::npos) << msg;
}

}  // namespace marsden::test
