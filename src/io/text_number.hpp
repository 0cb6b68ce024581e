// Numbers as the XML readers (URDF, MJCF) take them from attribute text.
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

namespace marsden::io::detail {

// A finite double spelled in full: an optional '+', then what std::from_chars reads, with
// no characters left over.
inline bool parse_finite_double(std::string_view text, double& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && std::isfinite(value);
}

}  // namespace marsden::io::detail
