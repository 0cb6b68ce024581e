// Loading the potentials, forces and constraints of marsden.symbolic.TreePotential,
// TreeForce and TreeConstraint (tree/generated.hpp) and binding their coordinates to a model's.
#include "marsden/tree/generated.hpp"

#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "marsden/error.hpp"
#include "marsden/tree/model.hpp"
#include "support/shared_object.hpp"

namespace marsden::tree {

namespace {

using CountFn = int (*)();
using NameFn = const char* (*)(int);
using IndexFn = int (*)(int);

// Checks the object's ABI and kind and binds the coordinates of its element (kind
// "potential", "force" or "constraint"), named or indexed, to the model's; returns n_c.
int bind_coordinates(const marsden::detail::SharedObject& so, const Model& model,
                     const std::string& kind,
                     std::array<int, kGeneratedElementMaxCoords>& coords) {
  using marsden::detail::entry;
  const std::string where = marsden::detail::generated_where(so.path);
  const int abi = entry<CountFn>(so, "marsden_tree_abi_version")();
  if (abi != kGeneratedTreeAbiVersion)
    throw InputError(where + ": tree ABI version " + std::to_string(abi) + ", expected " +
                     std::to_string(kGeneratedTreeAbiVersion) +
                     "; rebuild it with marsden.symbolic");
  const std::string prefix = "marsden_tree_" + kind;
  if (!marsden::detail::shared_object_find(so, (prefix + "_size").c_str()))
    for (const char* other : {"potential", "force", "constraint"})
      if (marsden::detail::shared_object_find(
              so, ("marsden_tree_" + std::string(other) + "_size").c_str()))
        throw InputError(where + ": a tree " + other + ", not a " + kind + "; add it as a " +
                         other);
  const int size = entry<CountFn>(so, (prefix + "_size").c_str())();
  if (size < 1 || size > kGeneratedElementMaxCoords)
    throw InputError(where + ": a " + kind + " of " + std::to_string(size) +
                     " coordinates; a tree " + kind + " takes 1.." +
                     std::to_string(kGeneratedElementMaxCoords));
  const auto name = entry<NameFn>(so, (prefix + "_coordinate").c_str());
  const auto index = entry<IndexFn>(so, (prefix + "_coordinate_index").c_str());
  for (int a = 0; a < size; ++a) {
    int coord = index(a);
    if (const char* s = name(a)) {
      try {
        coord = model.coord_index(s);
      } catch (const InputError& e) {
        throw InputError(where + ": its coordinate " + std::to_string(a) + ": " + e.what());
      }
    } else if (coord < 0 || coord >= model.num_coords()) {
      throw InputError(where + ": its coordinate " + std::to_string(a) + " is index " +
                       std::to_string(coord) + ", but the model has coordinates 0.." +
                       std::to_string(model.num_coords() - 1));
    }
    for (int b = 0; b < a; ++b)
      if (coords[b] == coord)
        throw InputError(where + ": coordinate \"" + model.coords()[coord].name +
                         "\" appears twice in the " + kind);
    coords[a] = coord;
  }
  return size;
}

// The element of kind "potential", "force" or "constraint" in the object at `library`, bound to the
// model's coordinates, with its entry point marsden_tree_<kind>.
template <class Element>
Element load_element(const std::string& library, const Model& model, const std::string& kind) {
  const marsden::detail::SharedObject so = marsden::detail::open_shared_object(library);
  Element e;
  e.size = bind_coordinates(so, model, kind, e.coords);
  e.library = library;
  e.evaluate = marsden::detail::entry<decltype(e.evaluate)>(so, ("marsden_tree_" + kind).c_str());
  e.handle = so.handle;
  if constexpr (std::is_same_v<Element, GeneratedConstraint>) {
    using marsden::detail::entry;
    e.rows = entry<CountFn>(so, "marsden_tree_constraint_rows")();
    if (e.rows < 1 || e.rows > e.size)
      throw InputError(marsden::detail::generated_where(so.path) + ": a constraint of " +
                       std::to_string(e.rows) + " rows on " + std::to_string(e.size) +
                       " coordinates; it takes 1.." + std::to_string(e.size) +
                       " (independent rows)");
  }
  return e;
}

}  // namespace

void ModelBuilder::add_generated_potential(const std::string& library) {
  model_.generated_potentials_.push_back(
      load_element<GeneratedPotential>(library, model_, "potential"));
}

void ModelBuilder::add_generated_force(const std::string& library) {
  model_.generated_forces_.push_back(load_element<GeneratedForce>(library, model_, "force"));
}

void ModelBuilder::add_generated_constraint(const std::string& library) {
  GeneratedConstraint g = load_element<GeneratedConstraint>(library, model_, "constraint");
  const marsden::detail::SharedObject so{library, g.handle};
  using NameOfFn = const char* (*)();
  const char* name = marsden::detail::entry<NameOfFn>(so, "marsden_tree_constraint_name")();
  Constraint c;
  c.name = name ? name : "constraint" + std::to_string(model_.constraints_.size());
  c.kind = ConstraintKind::Generated;
  c.frame_a = c.frame_b = kWorld;
  c.generated = static_cast<int>(model_.generated_constraints_.size());
  c.generated_rows = g.rows;
  model_.generated_constraints_.push_back(std::move(g));
  model_.constraints_.push_back(c);
}

}  // namespace marsden::tree
