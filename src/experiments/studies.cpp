// The studies' rows and claims by name (marsden/experiments/studies.hpp), and the loop that
// makes a study an experiment.
#include "experiments/studies.hpp"

#include <algorithm>
#include <cstddef>

#include "marsden/error.hpp"

namespace marsden::experiments {

namespace {

const std::vector<StudyDefinition>& definitions() {
  static const std::vector<StudyDefinition> d = {car_accuracy_study(),
                                                 rigid_body_accuracy_study()};
  return d;
}

const StudyDefinition& find(const std::string& study) {
  for (const auto& d : definitions())
    if (d.name == study) return d;
  std::string known;
  for (const auto& name : study_names()) known += (known.empty() ? "" : ", ") + name;
  throw InputError("unknown study '" + study + "' (known: " + known + ")");
}

std::string where(const std::string& study, bool quick) {
  return "study " + study + " (" + (quick ? "quick" : "full") + ")";
}

std::string describe(const StudyKey& k) {
  return "row (run " + std::to_string(k.run) + ", method " + std::to_string(k.method) +
         ", level " + std::to_string(k.level) + ")";
}

void check_key(const std::string& study, bool quick, const StudyShape& s, const StudyKey& k) {
  auto check = [&](const char* what, int value, int count) {
    if (value < 0 || value >= count)
      throw InputError(where(study, quick) + ": " + what + " index " + std::to_string(value) +
                       " outside [0, " + std::to_string(count) + ")");
  };
  check("run", k.run, s.runs);
  check("method", k.method, s.methods);
  check("level", k.level, s.levels);
}

std::size_t index(const StudyShape& s, const StudyKey& k) {
  return (static_cast<std::size_t>(k.run) * s.methods + k.method) * s.levels + k.level;
}

}  // namespace

double StudyRow::at(const std::string& name) const {
  for (const auto& [n, v] : measures)
    if (n == name) return v;
  throw InputError(describe(key) + ": no measure '" + name + "'");
}

std::vector<std::string> study_names() {
  std::vector<std::string> names;
  for (const auto& d : definitions()) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<StudyKey> study_rows(const std::string& study, bool quick) {
  const StudyShape s = find(study).shape(quick);
  std::vector<StudyKey> keys;
  for (int r = 0; r < s.runs; ++r)
    for (int m = 0; m < s.methods; ++m)
      for (int l = 0; l < s.levels; ++l) keys.push_back({r, m, l});
  return keys;
}

StudyRow study_row(const std::string& study, bool quick, const StudyKey& key) {
  const StudyDefinition& d = find(study);
  check_key(study, quick, d.shape(quick), key);
  return d.row(quick, key);
}

StudyResult study_claims(const std::string& study, bool quick, const std::vector<StudyRow>& rows) {
  const StudyDefinition& d = find(study);
  const StudyShape s = d.shape(quick);
  std::vector<const StudyRow*> ordered(static_cast<std::size_t>(s.runs) * s.methods * s.levels,
                                       nullptr);
  for (const StudyRow& row : rows) {
    check_key(study, quick, s, row.key);
    const StudyRow*& slot = ordered[index(s, row.key)];
    if (slot != nullptr)
      throw InputError(where(study, quick) + ": " + describe(row.key) + " given twice");
    slot = &row;
  }
  for (const StudyKey& k : study_rows(study, quick))
    if (ordered[index(s, k)] == nullptr)
      throw InputError(where(study, quick) + ": " + describe(k) + " missing (" +
                       std::to_string(rows.size()) + " of " + std::to_string(ordered.size()) +
                       " rows given)");
  return d.claims(quick, ordered);
}

void run_study(ExperimentContext& ctx, const std::string& study,
               const std::string& summary_description) {
  const bool quick = ctx.quick();
  const StudyShape s = find(study).shape(quick);
  std::vector<StudyRow> rows;
  for (const StudyKey& k : study_rows(study, quick)) {
    if (k.method == 0 && k.level == 0)
      ctx.part("run " + std::to_string(k.run + 1) + " of " + std::to_string(s.runs));
    ctx.poll();
    rows.push_back(study_row(study, quick, k));
  }
  record::Json table = record::Json::array();
  for (const StudyRow& row : rows) {
    record::Json entry = record::Json::object();
    entry.set("run", row.key.run).set("method", row.key.method).set("level", row.key.level);
    for (const auto& [measure, value] : row.measures) entry.set(measure, value);
    table.push_back(std::move(entry));
  }
  const auto rows_path = ctx.out_dir() / "rows.json";
  table.write_file(rows_path);
  ctx.add_data_file(rows_path, "every row of the study: run, method, level and its measures "
                               "(null where a measure does not exist)");
  StudyResult result = study_claims(study, quick, rows);
  for (auto& [name, value] : result.parameters) ctx.add_parameter(name, std::move(value));
  const auto summary_path = ctx.out_dir() / "sweep.json";
  result.summary.write_file(summary_path);
  ctx.add_data_file(summary_path, summary_description);
  for (auto& claim : result.claims) ctx.add_claim(std::move(claim));
  for (auto& note : result.notes) ctx.add_note(std::move(note));
}

}  // namespace marsden::experiments
