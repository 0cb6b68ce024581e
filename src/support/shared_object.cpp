#include "support/shared_object.hpp"

#include <dlfcn.h>

#include "marsden/error.hpp"

namespace marsden::detail {

std::string generated_where(const std::filesystem::path& path) {
  return "generated model '" + path.string() + "'";
}

SharedObject open_shared_object(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(generated_where(path) + ": no such file");
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
