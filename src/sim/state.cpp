// The state's tangent chart (sim/system.hpp) and the checks of set_state (sim/state.hpp).
#include "sim/state.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "marsden/error.hpp"
#include "marsden/lie/quaternion.hpp"
#include "marsden/sim/simulate.hpp"
#include "marsden/sim/system.hpp"

namespace marsden::sim {

namespace {

void check_sizes(int n, int m, std::size_t x, std::size_t y, std::size_t dx) {
  if (x != std::size_t(n) || y != std::size_t(n) || dx != std::size_t(m))
    throw InputError("state chart: states have " + std::to_string(n) +
                     " entries and tangents " + std::to_string(m) + " (got " +
                     std::to_string(x) + ", " + std::to_string(y) + " and " +
                     std::to_string(dx) + ")");
}

Quat quaternion_at(std::span<const double> x, int at) {
  Quat q;
  q.q = Vec4(x[std::size_t(at)], x[std::size_t(at) + 1], x[std::size_t(at) + 2],
             x[std::size_t(at) + 3]);
  return q;
}

void chart_difference(std::span<const int> quats, std::span<const double> x,
                      std::span<const double> y, std::span<double> dx) {
  std::size_t i = 0, o = 0, next = 0;
  while (i < x.size()) {
    if (next < quats.size() && std::size_t(quats[next]) == i) {
      Quat d = quaternion_at(x, int(i)).inverse() * quaternion_at(y, int(i));
      if (d.q[0] < 0.0) d.q = -d.q;  // q and -q are one rotation: the shorter way round
      const Vec3 phi = Quat::log(d);
      for (int k = 0; k < 3; ++k) dx[o++] = phi[k];
      i += 4;
      ++next;
    } else {
      dx[o++] = y[i] - x[i];
      ++i;
    }
  }
}

void chart_integrate(std::span<const int> quats, std::span<const double> x,
                     std::span<const double> dx, std::span<double> y) {
  std::size_t i = 0, o = 0, next = 0;
  while (i < x.size()) {
    if (next < quats.size() && std::size_t(quats[next]) == i) {
      const Quat q = quaternion_at(x, int(i)) * Quat::exp(Vec3(dx[o], dx[o + 1], dx[o + 2]));
      for (int k = 0; k < 4; ++k) y[i + std::size_t(k)] = q.q[k];
      i += 4;
      o += 3;
      ++next;
    } else {
      y[i] = x[i] + dx[o++];
      ++i;
    }
  }
}

}  // namespace

void System::state_difference(std::span<const double> x, std::span<const double> y,
                              std::span<double> dx) const {
  check_sizes(state_size(), tangent_size(), x.size(), y.size(), dx.size());
  chart_difference(state_quaternions(), x, y, dx);
}

void System::state_integrate(std::span<const double> x, std::span<const double> dx,
                             std::span<double> y) const {
  check_sizes(state_size(), tangent_size(), x.size(), y.size(), dx.size());
  chart_integrate(state_quaternions(), x, dx, y);
}

StateChart System::state_chart() const {
  const std::span<const int> quats = state_quaternions();
  return {state_size(), std::vector<int>(quats.begin(), quats.end())};
}

void StateChart::difference(std::span<const double> x, std::span<const double> y,
                            std::span<double> dx) const {
  check_sizes(size, tangent_size(), x.size(), y.size(), dx.size());
  chart_difference(quaternions, x, y, dx);
}

void StateChart::integrate(std::span<const double> x, std::span<const double> dx,
                           std::span<double> y) const {
  check_sizes(size, tangent_size(), x.size(), y.size(), dx.size());
  chart_integrate(quaternions, x, dx, y);
}

void System::step_derivatives(double, double, std::span<const double>, Eigen::MatrixXd&,
                              Eigen::MatrixXd&) const {
  throw std::logic_error("step_derivatives: this system has no exact step derivatives");
}

void check_state(std::string_view family, const std::vector<std::string>& names,
                 std::span<const double> x) {
  if (x.size() != names.size())
    throw InputError(std::string(family) + " state: expected " + std::to_string(names.size()) +
                     " entries (" + names.front() + " .. " + names.back() + "), got " +
                     std::to_string(x.size()));
  for (std::size_t k = 0; k < x.size(); ++k)
    if (!std::isfinite(x[k]))
      throw InputError(std::string(family) + " state: entry " + std::to_string(k) + " (" +
                       names[k] + ") is " + number_text(x[k]) + ", not finite");
}

Vec4 state_quaternion(std::string_view family, const std::vector<std::string>& names,
                      std::span<const double> x, int at) {
  Vec4 q = quaternion_at(x, at).q;
  const double n2 = q.squaredNorm();
  if (!(n2 > 0.0))
    throw InputError(std::string(family) + " state: the quaternion (" +
                     names[std::size_t(at)] + " .. " + names[std::size_t(at) + 3] +
                     ") is zero");
  if (std::abs(n2 - 1.0) > 8.0 * std::numeric_limits<double>::epsilon()) q /= std::sqrt(n2);
  return q;
}

}  // namespace marsden::sim
