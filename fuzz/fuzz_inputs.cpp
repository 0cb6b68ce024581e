// libFuzzer targets for the readers of untrusted input (docs/reliability.md): the JSON
// layer, scenes, problems, URDF and MJCF files. An input may be refused with InputError (or a
// SolverError when a setup cannot be solved); anything else that escapes, a crash, a
// sanitizer report, a hang or an out-of-memory is a finding. One binary per reader,
// selected by MARSDEN_FUZZ_TARGET at compile time. Fuzzed input runs no code: the readers of
// io/ are given no code resolver, so a "module" (a Python file to run) or a "library" (a
// shared object to load) is refused as bad input before anything runs (io::RefuseCode).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "marsden/error.hpp"
#include "marsden/io/mjcf.hpp"
#include "marsden/io/problem.hpp"
#include "marsden/io/scene.hpp"
#include "marsden/io/urdf.hpp"
#include "io/json_access.hpp"

namespace {

void parse(std::string_view text) {
#if MARSDEN_FUZZ_TARGET == 0
  marsden::io::detail::parse_json_text(text, "fuzz.json");
#elif MARSDEN_FUZZ_TARGET == 1
  marsden::io::parse_scene(text, "fuzz.json");
#elif MARSDEN_FUZZ_TARGET == 2
  marsden::io::parse_problem_text(text, "fuzz.json");
#elif MARSDEN_FUZZ_TARGET == 3
  marsden::io::parse_urdf(text, "fuzz.urdf");
#else
  // Includes resolve beside fuzz.xml, in the working folder (the run's corpus folder).
  marsden::io::parse_mjcf(text, "fuzz.xml");
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    parse(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const marsden::InputError&) {
  } catch (const marsden::SolverError&) {
  } catch (const std::exception& e) {
    // What the command would report as "internal": a bug.
    std::fprintf(stderr, "escaped exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
