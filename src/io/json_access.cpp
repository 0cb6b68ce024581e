#include "json_access.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "marsden/error.hpp"
#include "marsden/sim/simulate.hpp"

namespace marsden::io::detail {

namespace {

using json = nlohmann::json;

// Paths appear in messages only, so a long key is shown cut (shown()).
std::string join_path(const std::string& base, std::string_view key) {
  return base.empty() ? shown(key) : base + "." + shown(key);
}

// Builds the DOM like nlohmann's own parser, but tracks the path of the value being read,
// so that a number overflowing a double can be reported by field, and rejects duplicate
// keys (the DOM parser would keep the last one silently).
class PathTrackingBuilder {
 public:
  PathTrackingBuilder(const std::string& file, std::string_view text, json& root)
      : file_(file), text_(text), root_(root) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool b) { return put(json(b)); }
  bool number_integer(json::number_integer_t n) { return put(json(n)); }
  bool number_unsigned(json::number_unsigned_t n) { return put(json(n)); }
  bool number_float(json::number_float_t x, const json::string_t&) { return put(json(x)); }
  bool string(json::string_t& s) { return put(json(std::move(s))); }
  bool binary(json::binary_t& b) { return put(json::binary(std::move(b))); }
  bool start_object(std::size_t) {
    json* obj = place(json::object());
    stack_.push_back({obj, {}, 0});
    return true;
  }
  bool key(json::string_t& k) {
    Level& top = stack_.back();
    if (top.value->contains(k)) {
      top.key = k;
      throw InputError(file_ + ": field '" + path() + "': duplicate key");
    }
    top.key = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    json* arr = place(json::array());
    stack_.push_back({arr, {}, 0});
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const json::exception& ex) {
    const auto [line, column] = line_column(position);
    std::string what = ex.what();
    // Keep nlohmann's description, drop its own "[json.exception...] parse error at ...:".
    if (const auto p = what.find("parse error"); p != std::string::npos) {
      if (const auto colon = what.find(": ", p); colon != std::string::npos)
        what = what.substr(colon + 2);
    } else if (const auto b = what.find("] "); b != std::string::npos) {
      what = what.substr(b + 2);
    }
    what = shown(what, 2 * kShownChars);  // it may quote the text read, of any length
    std::string where = "line " + std::to_string(line) + ", column " + std::to_string(column);
    if (ex.id == 406)  // number overflow: the value would be infinite
      throw InputError(file_ + ": field '" + path() + "': NaN or infinite (" + what + ", at " +
                       where + ")");
    throw InputError(file_ + ": invalid JSON at " + where + ": " + what);
  }

 private:
  struct Level {
    json* value;
    std::string key;    // current key, in an object
    std::size_t index;  // next index, in an array
  };

  bool put(json&& v) {
    place(std::move(v));
    return true;
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Level& top = stack_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(v));
      ++top.index;
      return &top.value->back();
    }
    json& slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }

  // The path of the value being read: in an enclosing array the element was already
  // placed (its index counted), at the innermost level it is the next index.
  std::string path() const {
    std::string p;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Level& l = stack_[i];
      if (l.value->is_array()) {
        const std::size_t index = i + 1 < stack_.size() ? l.index - 1 : l.index;
        p += '[';
        p += std::to_string(index);
        p += ']';
      } else {
        p = join_path(p, l.key);
      }
    }
    return p;
  }

  std::pair<std::size_t, std::size_t> line_column(std::size_t position) const {
    const std::size_t end = std::min(position, text_.size());
    std::size_t line = 1, column = 0;
    for (std::size_t i = 0; i < end; ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 0;
      } else {
        ++column;
      }
    }
    return {line, std::max<std::size_t>(column, 1)};
  }

  const std::string& file_;
  std::string_view text_;
  json& root_;
  std::vector<Level> stack_;
};

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::string: return "string";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::binary: return "binary";
    case json::value_t::discarded: return "discarded";
    default: return "number";
  }
}

bool names_non_finite(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.erase(0, 1);
  return s == "nan" || s == "inf" || s == "infinity";
}

}  // namespace

std::string shown(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "\u2026(" + std::to_string(text.size()) + " bytes)";
}

JsonDocument parse_json_text(std::string_view text, std::string file_label) {
  JsonDocument doc{std::move(file_label), nullptr};
  PathTrackingBuilder builder(doc.file, text, doc.root);
  json::sax_parse(text, &builder);
  return doc;
}

std::string read_input_file(const std::filesystem::path& path, const std::string& what) {
  const std::string label = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(label + ": no such file");
  if (std::filesystem::is_directory(status))
    throw InputError(label + ": is a directory, expected " + what);
  if (!std::filesystem::is_regular_file(status))
    throw InputError(label + ": is not a regular file (a device or a pipe), expected " + what);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(label + ": cannot read its size: " + ec.message());
  if (size > kMaxInputFileBytes)
    throw InputError(label + ": " + std::to_string(size) + " bytes, more than an input file may "
                     "have (" + std::to_string(kMaxInputFileBytes) + "); expected " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(label + ": cannot open for reading");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.bad() || in.gcount() != static_cast<std::streamsize>(size))
    throw InputError(label + ": read failed");
  return text;
}

JsonDocument read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_input_file(path, "a JSON file"), path.string());
}

void JsonNode::fail(std::string_view what) const {
  if (path_.empty()) throw InputError(doc_->file + ": " + std::string(what));
  throw InputError(doc_->file + ": field '" + path_ + "': " + std::string(what));
}

void JsonNode::fail_type(std::string_view expected) const {
  fail("expected " + std::string(expected) + ", got " + type_name(*j_));
}

void JsonNode::expect_keys(std::initializer_list<std::string_view> allowed) const {
  if (!j_->is_object()) fail_type("an object");
  for (const auto& [key, value] : j_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    JsonNode(doc_, &value, join_path(path_, key)).fail("unknown key; allowed keys here: " + list);
  }
}

bool JsonNode::has(std::string_view key) const {
  return j_->is_object() && j_->contains(key);
}

JsonNode JsonNode::at(std::string_view key) const {
  if (!j_->is_object()) fail_type("an object");
  const auto it = j_->find(key);
  if (it == j_->end()) JsonNode(doc_, j_, join_path(path_, key)).fail("missing");
  return JsonNode(doc_, &*it, join_path(path_, key));
}

std::optional<JsonNode> JsonNode::find(std::string_view key) const {
  if (!j_->is_object()) fail_type("an object");
  const auto it = j_->find(key);
  if (it == j_->end()) return std::nullopt;
  return JsonNode(doc_, &*it, join_path(path_, key));
}

std::size_t JsonNode::array_size() const {
  if (!j_->is_array()) fail_type("an array");
  return j_->size();
}

JsonNode JsonNode::operator[](std::size_t i) const {
  if (!j_->is_array()) fail_type("an array");
  if (i >= j_->size()) fail("index " + std::to_string(i) + " out of range");
  return JsonNode(doc_, &(*j_)[i], path_ + '[' + std::to_string(i) + ']');
}

double JsonNode::number() const {
  if (j_->is_string() && names_non_finite(j_->get<std::string>()))
    fail("NaN or infinite (got \"" + shown(j_->get<std::string>()) + "\"); numbers must be finite");
  if (!j_->is_number()) fail_type("a number");
  const double x = j_->get<double>();
  if (!std::isfinite(x)) fail("NaN or infinite");
  return x;
}

double JsonNode::number_greater(double lower) const {
  const double x = number();
  if (!(x > lower)) fail("must be > " + number_text(lower) + " (got " + number_text(x) + ")");
  return x;
}

double JsonNode::number_at_least(double lower) const {
  const double x = number();
  if (!(x >= lower))
    fail("must be >= " + number_text(lower) + " (got " + number_text(x) + ")");
  return x;
}

double JsonNode::number_in(double lower, double upper) const {
  const double x = number();
  if (!(x >= lower && x <= upper))
    fail("must be in [" + number_text(lower) + ", " + number_text(upper) + "] (got " +
         number_text(x) + ")");
  return x;
}

int JsonNode::integer(int lo, int hi) const {
  const double x = number();
  if (x != std::floor(x)) fail("expected an integer (got " + number_text(x) + ")");
  if (x < lo || x > hi)
    fail("must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " +
         number_text(x) + ")");
  return static_cast<int>(x);
}

bool JsonNode::boolean() const {
  if (!j_->is_boolean()) fail_type("true or false");
  return j_->get<bool>();
}

std::string JsonNode::string() const {
  if (!j_->is_string()) fail_type("a string");
  return j_->get<std::string>();
}

std::string JsonNode::one_of(std::initializer_list<std::string_view> choices) const {
  std::string list;
  for (std::string_view c : choices) list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
  if (!j_->is_string()) fail_type("one of " + list);
  const std::string s = j_->get<std::string>();
  if (std::find(choices.begin(), choices.end(), s) == choices.end())
    fail("must be one of " + list + " (got \"" + shown(s) + "\")");
  return s;
}

std::vector<double> JsonNode::numbers() const {
  if (!j_->is_array()) fail_type("an array of numbers");
  std::vector<double> v;
  v.reserve(j_->size());
  for (std::size_t i = 0; i < j_->size(); ++i) v.push_back((*this)[i].number());
  return v;
}

std::vector<double> JsonNode::numbers(std::size_t n) const {
  const std::string expected = "an array of " + std::to_string(n) + " numbers";
  if (!j_->is_array()) fail_type(expected);
  if (j_->size() != n) fail("expected " + expected + ", got an array of " + std::to_string(j_->size()));
  return numbers();
}

Eigen::Vector3d JsonNode::vec3() const {
  const std::vector<double> v = numbers(3);
  return Eigen::Vector3d(v[0], v[1], v[2]);
}

Eigen::MatrixXd JsonNode::matrix(Eigen::Index rows, Eigen::Index cols) const {
  const std::string expected = "a " + std::to_string(rows) + "x" + std::to_string(cols) +
                               " matrix (an array of " + std::to_string(rows) + " rows of " +
                               std::to_string(cols) + " numbers)";
  if (!j_->is_array()) fail_type(expected);
  if (j_->size() != static_cast<std::size_t>(rows))
    fail("expected " + expected + ", got " + std::to_string(j_->size()) + " rows");
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const std::vector<double> row = (*this)[static_cast<std::size_t>(i)].numbers(
        static_cast<std::size_t>(cols));
    for (Eigen::Index k = 0; k < cols; ++k) m(i, k) = row[static_cast<std::size_t>(k)];
  }
  return m;
}

}  // namespace marsden::io::detail
