// Checks shared by the contact tests (test_contact, test_legged), written apart from the
// library's maximal::excess_penetration so that they test it rather than repeat it.
#pragma once

#include <algorithm>

#include "marsden/maximal/integrator.hpp"

namespace marsden::maximal::test {

// How far any contact is through its surface beyond what the step allows (m, <= 0 when
// none is): the tolerance on its gap-rate row, dt tol, and its compliance's sink,
// eps dt^2 F / m (StepOptions::contact_compliance).
inline double excess_penetration(const Model& model, const Data& data, const StepOptions& options) {
  double worst = -1.0;
  for (std::size_t i = 0; i < data.contact.size(); ++i) {
    const ContactState& c = data.contact[i];
    const double m = model.mass_scale(model.contact_points()[i].body);
    const double allowed = options.dt * options.newton.tolerance +
                           options.contact_compliance * options.dt * options.dt *
                               c.normal_force / m;
    worst = std::max(worst, -c.phi - allowed);
  }
  return worst;
}

}  // namespace marsden::maximal::test
