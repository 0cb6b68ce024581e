// The studies' definitions (src/experiments/*_accuracy.cpp), behind
// marsden/experiments/studies.hpp. Private to the library.
#pragma once

#include <string>
#include <vector>

#include "marsden/experiments/studies.hpp"

namespace marsden::experiments {

// A study's rows are every (run, method, level) with run < runs, method < methods and
// level < levels.
struct StudyShape {
  int runs = 0, methods = 0, levels = 0;
};

struct StudyDefinition {
  std::string name;
  StudyShape (*shape)(bool quick);
  // Called with a key inside the shape.
  StudyRow (*row)(bool quick, const StudyKey& key);
  // Called with every row once, ordered as study_rows (run, then method, then level).
  StudyResult (*claims)(bool quick, const std::vector<const StudyRow*>& rows);
};

StudyDefinition rigid_body_accuracy_study();
StudyDefinition car_accuracy_study();

// The experiment of a study: every row in order (a part per run, so that progress and the
// stop flag work), written to out_dir/rows.json, then the claims, notes and parameters
// into ctx, and the summary written to out_dir/sweep.json with the given description.
void run_study(ExperimentContext& ctx, const std::string& study,
               const std::string& summary_description);

}  // namespace marsden::experiments
