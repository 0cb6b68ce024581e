// Parameters of the car of Kelly and Murray (vehicles §5.2.1), shared by the RDP car
// (vehicle/rdp_models.hpp) and the full-coordinate car (nonholonomic/model.hpp).
#pragma once

namespace marsden {

struct CarParams {
  double m = 1.0;    // mass
  double I = 0.1;    // rear wheel inertia
  double K = 0.2;    // rotational inertia of the body
  double rho = 0.3;  // wheel radius
  double l = 1.0;    // axle distance
};

}  // namespace marsden
