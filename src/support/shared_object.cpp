#include "support/shared_object.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "marsden/error.hpp"
#include "marsden/support/sha256.hpp"

namespace marsden::detail {

std::string generated_where(const std::filesystem::path& path) {
  return "generated model '" + path.string() + "'";
}

std::filesystem::path symbolic_cache_dir() {
  if (const char* env = std::getenv("MARSDEN_CACHE"); env != nullptr && *env != '\0') return env;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::filesystem::path(home) / ".cache" / "marsden" / "symbolic";
  return {};
}

namespace {

// An object of the cache is named NAME-KEY-SHA256.so, SHA256 the digest of its content
// (64 hexadecimal digits): it is loaded only when the two agree.
void check_cached_object(const std::filesystem::path& path) {
  const std::filesystem::path cache = symbolic_cache_dir();
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
  if (cache.empty() || !std::filesystem::equivalent(folder, cache, ec)) return;
  const std::string clear = "clear the cache (rm -r " + cache.string() +
                            ") and build the model again with marsden.symbolic";
  const std::string stem = path.stem().string();
  const std::string named = stem.size() > 65 ? stem.substr(stem.size() - 64) : std::string();
  if (path.extension() != ".so" || stem.size() <= 65 || stem[stem.size() - 65] != '-' ||
      !std::all_of(named.begin(), named.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) ||
                                       (c >= 'a' && c <= 'f'); }))
    throw InputError(generated_where(path) + ": lies in the compiled-model cache (" +
                     cache.string() + ") without the hash of its content in its name "
                     "(NAME-KEY-SHA256.so), so it is not loaded; " + clear);
  if (file_sha256_hex(path) != named)
    throw InputError(generated_where(path) + ": its content does not match the hash in its "
                     "name (it changed after marsden.symbolic compiled it), so it is not "
                     "loaded; " + clear);
}

}  // namespace

SharedObject open_shared_object(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(generated_where(path) + ": no such file");
  check_cached_object(path);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw InputError(generated_where(path) + ": cannot be loaded (" + (why ? why : "unknown") +
                     ")");
  }
  return {path, std::shared_ptr<void>(handle, [](void* h) { dlclose(h); })};
}

void* shared_object_entry(const SharedObject& so, const char* name) {
  void* symbol = dlsym(so.handle.get(), name);
  if (!symbol)
    throw InputError(generated_where(so.path) + ": not a Marsden generated model (no entry point '" +
                     name + "'); build it with marsden.symbolic");
  return symbol;
}

void* shared_object_find(const SharedObject& so, const char* name) {
  return dlsym(so.handle.get(), name);
}

namespace {

[[noreturn]] void throw_status(int status, const std::filesystem::path& path, const char* name) {
  throw SolverError(generated_where(path) + ": " + name + " returned status " +
                    std::to_string(status));
}

}  // namespace

void check_status(int status, const SharedObject& so, const char* name) {
  if (status != 0) throw_status(status, so.path, name);
}

void check_status(int status, const std::string& library, const char* name) {
  if (status != 0) throw_status(status, library, name);
}

}  // namespace marsden::detail
