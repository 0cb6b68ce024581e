// What the run layer asks of a scene's family, in one place per family (family_*.cpp):
// the system to run, its integrator and its own fields in summary.json, its model for the
// player and the recorder of its frames. run/scene.cpp and run/view.cpp ask only this
// interface; run::family is the one place that looks at which family a scene holds.
#pragma once

#include <filesystem>
#include <memory>

#include "marsden/io/scene.hpp"
#include "marsden/record/writers.hpp"
#include "marsden/run/view.hpp"
#include "marsden/sim/simulate.hpp"
#include "view_parts.hpp"

namespace marsden::run {

class Family {
 public:
  explicit Family(const io::Scene& scene) : scene_(scene) {}
  virtual ~Family() = default;

  // The system from the scene's setup (sim::make_*_system).
  virtual std::unique_ptr<sim::System> make_system() const = 0;
  // The time of the initial state.
  virtual double t0() const { return 0.0; }
  // summary.json's "integrator": the method and its options.
  virtual record::Json integrator() const = 0;
  // The family's own summary.json fields, after the shared ones, from the run's summary
  // and the system that ran.
  virtual void summary(record::Json& out, const sim::System& system,
                       const sim::RunSummary& run) const = 0;
  // model.json's "model" (docs/viewer.md); warnings go to `visuals`.
  virtual record::Json view_model(UrdfVisuals& visuals) const = 0;
  // The recorder that writes frames.npz around `inner`; null where the family's trajectory
  // holds its poses.
  virtual std::unique_ptr<sim::Recorder> frame_recorder(sim::Recorder&,
                                                        const std::filesystem::path&) const {
    return nullptr;
  }
  virtual bool writes_frames() const { return false; }

 protected:
  const io::Scene& scene_;
};

// The scene's family; the scene must outlive it.
std::unique_ptr<Family> family(const io::Scene& scene);

std::unique_ptr<Family> vehicle_family(const io::Scene& scene);
std::unique_ptr<Family> planar_vehicle_family(const io::Scene& scene);
std::unique_ptr<Family> nonholonomic_family(const io::Scene& scene);
std::unique_ptr<Family> tree_family(const io::Scene& scene);
std::unique_ptr<Family> maximal_family(const io::Scene& scene);

}  // namespace marsden::run
