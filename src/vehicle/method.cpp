#include "marsden/vehicle/method.hpp"

#include "marsden/error.hpp"

namespace marsden::vehicle {

Method parse_method(const std::string& name) {
  if (name == "vi") return Method::VI;
  if (name == "rk2") return Method::RK2;
  if (name == "rk2_implicit") return Method::RK2Implicit;
  if (name == "rk4") return Method::RK4;
  if (name == "lie_newmark") return Method::LieNewmark;
  throw InputError("unknown method '" + name +
                   "' (expected vi, rk2, rk2_implicit, rk4 or lie_newmark)");
}

std::string method_name(Method m) {
  switch (m) {
    case Method::VI: return "vi";
    case Method::RK2: return "rk2";
    case Method::RK2Implicit: return "rk2_implicit";
    case Method::RK4: return "rk4";
    case Method::LieNewmark: return "lie_newmark";
  }
  return "?";
}

}  // namespace marsden::vehicle
