#include "marsden/support/text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace marsden {

std::string number_text(double x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

std::string time_text(double t) { return number_text(t) + " s"; }

std::string bytes_text(double bytes) {
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.3g", bytes / double(1 << 30));
  return number_text(std::round(bytes)) + " bytes (" + gib + " GiB)";
}

}  // namespace marsden
