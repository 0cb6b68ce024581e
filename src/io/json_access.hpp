// Internal: typed, path-tracked reading of a parsed JSON input file. Every error is an
// InputError reading "FILE: field 'a.b[2]': PROBLEM", e.g.
//   scene.json: field 'integrator.tolerance': must be > 0 (got -0.1)
#pragma once

#include <cstdint>

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include <nlohmann/json.hpp>

namespace marsden::io::detail {

// A parsed document and the file label used in messages.
struct JsonDocument {
  std::string file;
  nlohmann::json root;
};

// Reads and parses a file; a missing file, a read error, invalid JSON (with line and
// column), a duplicate key or a number that overflows a double is an InputError.
JsonDocument read_json_file(const std::filesystem::path& path);

// Input files are read whole, so their size is bounded (docs/scene.md): 64 MiB.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{64} << 20;

// The text of an input file (scene, problem, URDF, warm start): an InputError naming the
// path when it is missing, not a regular file (a directory, /dev/zero), larger than
// kMaxInputFileBytes or unreadable. `what` says what the file should be.
std::string read_input_file(const std::filesystem::path& path, const std::string& what);
JsonDocument parse_json_text(std::string_view text, std::string file_label);

// An input string as messages echo it: whole up to max_chars bytes, else its first
// max_chars bytes (not cutting a UTF-8 character) and "…(N bytes)", so that a 10 MB key
// or value never fills an error message.
inline constexpr std::size_t kShownChars = 60;
std::string shown(std::string_view text, std::size_t max_chars = kShownChars);

// A view of one value of a JsonDocument together with its path from the root. Views are
// cheap to copy and must not outlive the document.
class JsonNode {
 public:
  explicit JsonNode(const JsonDocument& doc) : doc_(&doc), j_(&doc.root) {}

  const std::string& path() const { return path_; }
  const std::string& file() const { return doc_->file; }
  const nlohmann::json& raw() const { return *j_; }

  // Throws "FILE: field 'PATH': what" (or "FILE: what" at the root).
  [[noreturn]] void fail(std::string_view what) const;

  // Objects.
  bool is_object() const { return j_->is_object(); }
  // Requires an object whose keys are all in `allowed`; the message lists them.
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  bool has(std::string_view key) const;
  JsonNode at(std::string_view key) const;                  // "missing" if absent
  std::optional<JsonNode> find(std::string_view key) const;  // nullopt if absent

  // Arrays.
  bool is_array() const { return j_->is_array(); }
  std::size_t array_size() const;  // requires an array
  JsonNode operator[](std::size_t i) const;

  // Scalars.
  double number() const;  // finite number
  double number_greater(double lower) const;
  double number_at_least(double lower) const;
  double number_in(double lower, double upper) const;  // in [lower, upper]
  int integer(int lo, int hi) const;  // an integral value in [lo, hi]
  bool boolean() const;
  std::string string() const;
  std::string one_of(std::initializer_list<std::string_view> choices) const;

  // Arrays of numbers.
  std::vector<double> numbers() const;  // any length
  std::vector<double> numbers(std::size_t n) const;  // "expected an array of n numbers"
  Eigen::Vector3d vec3() const;
  Eigen::MatrixXd matrix(Eigen::Index rows, Eigen::Index cols) const;

 private:
  JsonNode(const JsonDocument* doc, const nlohmann::json* j, std::string path)
      : doc_(doc), j_(j), path_(std::move(path)) {}
  [[noreturn]] void fail_type(std::string_view expected) const;

  const JsonDocument* doc_;
  const nlohmann::json* j_;
  std::string path_;
};

}  // namespace marsden::io::detail
