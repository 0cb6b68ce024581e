// Output writers: a streaming CSV trajectory writer, an .npz archive writer and a JSON
// document type for results files. None of them exposes the JSON library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "marsden/sim/simulate.hpp"

namespace marsden::record {

// CSV with a header line of column names and one row per write_row call. Every row is
// flushed at once, so rows already written survive a later failure or crash. Numbers are
// written in the shortest form that reads back to the same double.
class CsvWriter {
 public:
  // Where the rows go until close(): straight into path, or (Staging::Hidden) into a
  // hidden DIR/.NAME.part that close() renames to path and that the destructor removes when
  // close() was never called (an exception, an interrupt), so that no partial file ever
  // appears under path.
  enum class Staging { Direct, Hidden };
  // Throws InputError if the file cannot be opened for writing.
  CsvWriter(const std::filesystem::path& path, std::vector<std::string> columns,
            Staging staging = Staging::Direct);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // values.size() must equal the number of columns (std::invalid_argument otherwise).
  // A NaN or infinite value throws SolverError naming the row and column; nothing of that
  // row is written.
  void write_row(std::span<const double> values);
  void write_row(std::initializer_list<double> values) {
    write_row(std::span<const double>(values.begin(), values.size()));
  }

  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t rows_written() const { return rows_; }
  const std::filesystem::path& path() const { return path_; }
  // Flushes and closes the file; a staged one is renamed to path(). Rows written after
  // close() throw std::logic_error. Throws InputError if the file cannot be written.
  void close();

 private:
  std::filesystem::path path_;
  std::filesystem::path staging_;  // the hidden file until close(); empty when Direct
  bool closed_ = false;
  std::vector<std::string> columns_;
  std::ofstream out_;
  std::string line_;
  std::size_t rows_ = 0;
};

// One float64 array of an .npz archive, in C (row-major) order.
struct NpyArray {
  std::string name;                // entry name, stored as NAME.npy
  std::vector<std::size_t> shape;  // e.g. {N} or {N, 3}; {N, 0} is allowed
  std::vector<double> data;        // product(shape) values, row-major
};

NpyArray npy_vector(std::string name, std::span<const double> values);
NpyArray npy_matrix(std::string name, const Eigen::Ref<const Eigen::MatrixXd>& m);

// Writes an uncompressed zip of .npy (format 1.0, little-endian '<f8') entries, the layout
// numpy.savez produces, so numpy.load(path)[name] returns each array. Throws InputError if
// the file cannot be written, SolverError on a NaN or infinite value (naming the array and
// the index), InputError for a missing name or two names alike once '/' and '\\' become
// '_' (as entries are named), std::invalid_argument on a shape/data size mismatch.
void write_npz(const std::filesystem::path& path, const std::vector<NpyArray>& arrays);

// path + ".part": where a file is written before it appears under its final name.
std::filesystem::path part_path(const std::filesystem::path& path);
// DIR/.NAME.part for DIR/NAME: the same, hidden from a listing of DIR.
std::filesystem::path hidden_part_path(const std::filesystem::path& path);
// Renames part to path (atomic on one file system); throws InputError if it cannot.
void publish(const std::filesystem::path& part, const std::filesystem::path& path);

// The recorder of simulate() for files: OUT_DIR/STEM.csv streamed row by row (flushed) and
// OUT_DIR/STEM.npz ("t" and one array per layout group, rows first). While the run goes
// the CSV is STEM.csv.part and each array grows in a hidden file of its own; finish()
// streams them into the .npz in chunks (memory stays flat however long the run) and
// renames both, so a run that is interrupted never leaves a file that looks
// whole, and one that stops early still publishes what it computed. begin() removes an old
// STEM.csv and STEM.npz from the directory. With csv false, only the .npz is written.
class FileRecorder final : public sim::Recorder {
 public:
  FileRecorder(std::filesystem::path out_dir, std::string stem = "trajectory", bool csv = true);
  ~FileRecorder() override;
  void begin(const sim::Layout& layout) override;
  void row(std::span<const double> values) override;
  void finish(bool ok) override;
  std::filesystem::path csv_path() const;
  std::filesystem::path npz_path() const;

 private:
  std::filesystem::path dir_;
  std::string stem_;
  bool write_csv_ = true;
  bool open_ = false;  // between begin() and finish()
  std::size_t rows_ = 0;
  sim::Layout layout_;
  std::unique_ptr<CsvWriter> csv_;
  // One file per .npz array (time first), appended row by row, so that neither the run
  // nor the archive holds the trajectory in memory.
  std::vector<std::filesystem::path> array_paths_;
  std::vector<std::ofstream> array_files_;
  std::vector<double> gathered_;
};

// A JSON value for results and summary files. Objects keep insertion order. NaN and
// infinite numbers are written as null (JSON has no representation for them).
class Json {
 public:
  Json();  // null
  Json(std::nullptr_t) : Json() {}
  Json(bool b);
  Json(double x);
  Json(const char* s);
  Json(std::string s);
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  Json(T n) : Json(from_integer(static_cast<std::int64_t>(n))) {}
  Json(const Json& other);
  Json(Json&& other);
  Json& operator=(const Json& other);
  Json& operator=(Json&& other);
  ~Json();

  static Json object();
  static Json array();
  static Json array(std::span<const double> values);
  static Json array(const Eigen::Ref<const Eigen::VectorXd>& values);

  // Object member (insert or replace); the value must be an object or null (which becomes
  // an object). Returns *this, so calls chain.
  Json& set(const std::string& key, Json value);
  // Array element; the value must be an array or null.
  Json& push_back(Json value);

  bool is_null() const;
  std::string dump(int indent = 2) const;
  // Writes dump() and a newline (to path + ".part", then renamed); throws InputError if
  // the file cannot be written.
  void write_file(const std::filesystem::path& path) const;

 private:
  struct Impl;
  static Json from_integer(std::int64_t n);
  std::unique_ptr<Impl> impl_;
};

}  // namespace marsden::record
