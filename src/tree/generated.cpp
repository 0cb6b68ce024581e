// Loading the potentials of marsden.symbolic.TreePotential (tree/generated.hpp) and binding
// their coordinates to a model's.
#include "marsden/tree/generated.hpp"

#include <string>

#include "marsden/error.hpp"
#include "marsden/tree/model.hpp"
#include "vehicle/shared_object.hpp"

namespace marsden::tree {

namespace {

using CountFn = int (*)();
using NameFn = const char* (*)(int);
using IndexFn = int (*)(int);

}  // namespace

void ModelBuilder::add_generated_potential(const std::filesystem::path& library) {
  using marsden::detail::entry;
  using marsden::detail::generated_where;
  const marsden::detail::SharedObject so = marsden::detail::open_shared_object(library);
  const std::string where = generated_where(library);
  const int abi = entry<CountFn>(so, "marsden_tree_abi_version")();
  if (abi != kGeneratedTreeAbiVersion)
    throw InputError(where + ": tree ABI version " + std::to_string(abi) + ", expected " +
                     std::to_string(kGeneratedTreeAbiVersion) +
                     "; rebuild it with marsden.symbolic");
  GeneratedPotential p;
  p.library = library;
  p.size = entry<CountFn>(so, "marsden_tree_potential_size")();
  if (p.size < 1 || p.size > kGeneratedPotentialMaxCoords)
    throw InputError(where + ": a potential of " + std::to_string(p.size) +
                     " coordinates; a tree potential takes 1.." +
                     std::to_string(kGeneratedPotentialMaxCoords));
  const auto name = entry<NameFn>(so, "marsden_tree_potential_coordinate");
  const auto index = entry<IndexFn>(so, "marsden_tree_potential_coordinate_index");
  for (int a = 0; a < p.size; ++a) {
    int coord = index(a);
    if (const char* s = name(a)) {
      try {
        coord = model_.coord_index(s);
      } catch (const InputError& e) {
        throw InputError(where + ": its coordinate " + std::to_string(a) + ": " + e.what());
      }
    } else if (coord < 0 || coord >= num_coords()) {
      throw InputError(where + ": its coordinate " + std::to_string(a) + " is index " +
                       std::to_string(coord) + ", but the model has coordinates 0.." +
                       std::to_string(num_coords() - 1));
    }
    for (int b = 0; b < a; ++b)
      if (p.coords[b] == coord)
        throw InputError(where + ": coordinate \"" + model_.coords_[coord].name +
                         "\" appears twice in the potential");
    p.coords[a] = coord;
  }
  p.evaluate = entry<GeneratedPotentialFn>(so, "marsden_tree_potential");
  p.handle = so.handle;
  model_.generated_potentials_.push_back(std::move(p));
}

}  // namespace marsden::tree
