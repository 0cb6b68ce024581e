// Numbers, times and memory sizes as messages and files write them (every layer's errors
// name values this way).
#pragma once

#include <string>

namespace marsden {

// x in the shortest form that reads back to the same double, for messages; "T s" for a time.
std::string number_text(double x);
std::string time_text(double t);
// A memory size for messages: "4294967296 bytes (4 GiB)".
std::string bytes_text(double bytes);

}  // namespace marsden
