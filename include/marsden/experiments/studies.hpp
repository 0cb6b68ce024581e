// The papers' Monte Carlo accuracy studies (rigid-body-accuracy, car-accuracy), split into
// rows and claims so that the experiment and a sweep (marsden.sweep, any subset of rows on
// any machine, in any order) share one implementation of each.
//
// A row is one (run r, method m, step level l) of a study: run r's random model and
// initial state derive from (the study's seed, r) alone, and its reference run is computed
// the same way wherever it is needed (once per process). The claims are a function of the
// whole table of rows, summed in key order, so the same rows give the same claims bit for
// bit whatever order they were computed in.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "marsden/experiments/experiment.hpp"

namespace marsden::experiments {

struct StudyKey {
  int run = 0, method = 0, level = 0;
  friend bool operator==(const StudyKey&, const StudyKey&) = default;
};

struct StudyRow {
  StudyKey key;
  // The row's measures in the study's fixed order, e.g. ("position_error", 1e-3); NaN where
  // a measure does not exist (the error of a run that blew up).
  std::vector<std::pair<std::string, double>> measures;
  // Throws InputError naming the measure and the row when it is missing.
  double at(const std::string& name) const;
};

struct StudyResult {
  std::vector<Claim> claims;
  std::vector<std::string> notes;
  // Measured from the rows, e.g. the reference's self error (results.json parameters).
  std::vector<std::pair<std::string, record::Json>> parameters;
  // Per method and step count: the means over the runs (the experiment's sweep.json).
  record::Json summary;
};

// The studies' names, sorted.
std::vector<std::string> study_names();

// Every row of a study, in the experiment's order (run, then method, then level). Throws
// InputError for an unknown study, listing the known ones.
std::vector<StudyKey> study_rows(const std::string& study, bool quick);

// Computes one row. Throws InputError for an unknown study or a key outside the study.
StudyRow study_row(const std::string& study, bool quick, const StudyKey& key);

// The claims from the full table of rows, in any order. Throws InputError naming the key
// of a missing, repeated or unknown row, or a missing measure.
StudyResult study_claims(const std::string& study, bool quick, const std::vector<StudyRow>& rows);

}  // namespace marsden::experiments
