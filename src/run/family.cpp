// The one place in run/ that asks which family a scene holds (family.hpp).
#include "family.hpp"

#include <type_traits>
#include <variant>

namespace marsden::run {

std::unique_ptr<Family> family(const io::Scene& scene) {
  return std::visit(
      [&](const auto& setup) {
        using T = std::decay_t<decltype(setup)>;
        if constexpr (std::is_same_v<T, io::VehicleScene>) return vehicle_family(scene);
        else if constexpr (std::is_same_v<T, io::PlanarVehicleScene>)
          return planar_vehicle_family(scene);
        else if constexpr (std::is_same_v<T, io::NonholonomicScene>)
          return nonholonomic_family(scene);
        else if constexpr (std::is_same_v<T, io::TreeScene>) return tree_family(scene);
        else return maximal_family(scene);
      },
      scene.system);
}

}  // namespace marsden::run
