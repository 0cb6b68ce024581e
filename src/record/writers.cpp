#include "marsden/record/writers.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "marsden/error.hpp"

namespace marsden::record {

namespace {

void append_number(std::string& s, double x) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x);
  s.append(buf, res.ptr);
}

std::string quote_csv(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

}  // namespace

// ---------------------------------------------------------------------------------------
// CSV

CsvWriter::CsvWriter(const std::filesystem::path& path, std::vector<std::string> columns,
                     Staging staging)
    : path_(path),
      staging_(staging == Staging::Hidden ? hidden_part_path(path) : std::filesystem::path()),
      columns_(std::move(columns)),
      out_(staging_.empty() ? path : staging_, std::ios::binary | std::ios::trunc) {
  if (!out_) throw InputError(path_.string() + ": cannot open for writing");
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    if (i > 0) line_ += ',';
    line_ += quote_csv(columns_[i]);
  }
  line_ += '\n';
  out_ << line_;
  out_.flush();
  if (!out_) throw InputError(path_.string() + ": write failed");
}

CsvWriter::~CsvWriter() {
  if (closed_ || staging_.empty()) return;
  out_.close();
  std::error_code ec;
  std::filesystem::remove(staging_, ec);
}

void CsvWriter::close() {
  if (closed_) return;
  out_.close();
  closed_ = true;
  if (!out_) throw InputError(path_.string() + ": write failed when closing");
  if (!staging_.empty()) publish(staging_, path_);
}

void CsvWriter::write_row(std::span<const double> values) {
  if (closed_) throw std::logic_error(path_.string() + ": row written after close()");
  if (values.size() != columns_.size())
    throw std::invalid_argument(path_.string() + ": row has " + std::to_string(values.size()) +
                                " values for " + std::to_string(columns_.size()) + " columns");
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      std::string msg = path_.string() + ": row " + std::to_string(rows_) + ", column '" +
                        columns_[i] + "': ";
      msg += std::isnan(values[i]) ? "NaN" : "infinite value";
      throw SolverError(msg + " refused; the row was not written");
    }
  }
  line_.clear();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) line_ += ',';
    append_number(line_, values[i]);
  }
  line_ += '\n';
  out_ << line_;
  out_.flush();
  if (!out_) throw InputError(path_.string() + ": write failed at row " + std::to_string(rows_));
  ++rows_;
}

// ---------------------------------------------------------------------------------------
// NPZ: a zip archive (PKWARE APPNOTE 6.3, method 0 "stored", no ZIP64) of NPY 1.0 files.

NpyArray npy_vector(std::string name, std::span<const double> values) {
  return NpyArray{std::move(name), {values.size()}, {values.begin(), values.end()}};
}

NpyArray npy_matrix(std::string name, const Eigen::Ref<const Eigen::MatrixXd>& m) {
  NpyArray a{std::move(name),
             {static_cast<std::size_t>(m.rows()), static_cast<std::size_t>(m.cols())},
             {}};
  a.data.reserve(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) a.data.push_back(m(i, j));
  return a;
}

namespace {

void put_u16(std::string& s, std::uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}

void put_u32(std::string& s, std::uint32_t v) {
  put_u16(s, v & 0xffff);
  put_u16(s, v >> 16);
}

// The .npy header of a float64 array: magic, version 1.0, header length, a Python dict
// literal padded with spaces to a multiple of 64 bytes. The little-endian data follow.
std::string npy_header(const std::vector<std::size_t>& shape_of) {
  std::string shape = "(";
  for (std::size_t i = 0; i < shape_of.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(shape_of[i]);
  }
  shape += shape_of.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  put_u16(out, static_cast<std::uint32_t>(header.size()));
  return out + header;
}

// Doubles as the .npy data bytes (little-endian float64, the host's order here).
static_assert(std::endian::native == std::endian::little, "npz data are written as stored");
std::span<const char> as_bytes(std::span<const double> values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double)};
}

// An array's entry in the archive: its name with the path separators '/' and '\\' made '_'
// (names come from coordinates and joints, which URDF files may spell "arm/joint1").
std::string entry_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == '/' || c == '\\') c = '_';
  return out;
}

// One .npy entry of an archive: its name, shape and its data, streamed in chunks to a sink
// (twice: once for the CRC, once to write), so that an array never has to be in memory.
struct NpzEntry {
  std::string name;
  std::vector<std::size_t> shape;
  std::uint64_t values = 0;
  std::function<void(const std::function<void(std::span<const char>)>&)> stream;
};

void check_entries(const std::vector<NpzEntry>& entries) {
  std::set<std::string> names;
  for (const NpzEntry& e : entries) {
    if (e.name.empty()) throw InputError("npz: an array without a name");
    if (!names.insert(entry_name(e.name)).second)
      throw InputError("npz: two arrays named '" + entry_name(e.name) +
                       "' (after '/' and '\\' became '_')");
    std::uint64_t n = 1;
    for (std::size_t d : e.shape) n *= d;
    if (n != e.values)
      throw std::invalid_argument("npz: array '" + e.name + "' has " + std::to_string(e.values) +
                                  " values for its shape");
  }
}

void write_entries(const std::filesystem::path& path, const std::vector<NpzEntry>& entries) {
  check_entries(entries);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string() + ": cannot open for writing");

  constexpr std::uint32_t kDosDate = (0u << 9) | (1u << 5) | 1u;  // 1980-01-01, reproducible
  constexpr std::uint64_t kZipLimit = 0xffffffffu;
  std::string central;
  std::uint64_t offset = 0;
  for (const NpzEntry& e : entries) {
    const std::string entry = entry_name(e.name) + ".npy";
    const std::string header = npy_header(e.shape);
    const std::uint64_t bytes = header.size() + 8 * e.values;
    if (bytes >= kZipLimit || offset >= kZipLimit)
      throw InputError(path.string() + ": archive exceeds 4 GiB (ZIP64 is not supported)");
    const auto size = static_cast<std::uint32_t>(bytes);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(header.data()),
                      static_cast<uInt>(header.size()));
    e.stream([&crc](std::span<const char> chunk) {
      // An empty chunk may have no data pointer, and crc32 of Z_NULL restarts at 0.
      if (chunk.empty()) return;
      crc = crc32(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<uInt>(chunk.size()));
    });

    std::string local;
    put_u32(local, 0x04034b50);  // local file header signature
    put_u16(local, 20);          // version needed: 2.0
    put_u16(local, 0);           // flags
    put_u16(local, 0);           // method: stored
    put_u16(local, 0);           // time
    put_u16(local, kDosDate);
    put_u32(local, static_cast<std::uint32_t>(crc));
    put_u32(local, size);  // compressed size
    put_u32(local, size);  // uncompressed size
    put_u16(local, static_cast<std::uint32_t>(entry.size()));
    put_u16(local, 0);  // extra field length
    local += entry;

    put_u32(central, 0x02014b50);  // central directory header signature
    put_u16(central, 20);          // version made by
    put_u16(central, 20);          // version needed
    put_u16(central, 0);
    put_u16(central, 0);
    put_u16(central, 0);
    put_u16(central, kDosDate);
    put_u32(central, static_cast<std::uint32_t>(crc));
    put_u32(central, size);
    put_u32(central, size);
    put_u16(central, static_cast<std::uint32_t>(entry.size()));
    put_u16(central, 0);  // extra field length
    put_u16(central, 0);  // comment length
    put_u16(central, 0);  // disk number
    put_u16(central, 0);  // internal attributes
    put_u32(central, 0);  // external attributes
    put_u32(central, static_cast<std::uint32_t>(offset));
    central += entry;

    out.write(local.data(), static_cast<std::streamsize>(local.size()));
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    e.stream([&out](std::span<const char> chunk) {
      out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    });
    offset += local.size() + bytes;
  }
  if (offset >= kZipLimit || entries.size() >= 0xffff)
    throw InputError(path.string() + ": archive too large (ZIP64 is not supported)");

  std::string end;
  put_u32(end, 0x06054b50);  // end of central directory signature
  put_u16(end, 0);           // this disk
  put_u16(end, 0);           // disk with the central directory
  put_u16(end, static_cast<std::uint32_t>(entries.size()));
  put_u16(end, static_cast<std::uint32_t>(entries.size()));
  put_u32(end, static_cast<std::uint32_t>(central.size()));
  put_u32(end, static_cast<std::uint32_t>(offset));
  put_u16(end, 0);  // comment length
  out.write(central.data(), static_cast<std::streamsize>(central.size()));
  out.write(end.data(), static_cast<std::streamsize>(end.size()));
  out.flush();
  if (!out) throw InputError(path.string() + ": write failed");
}

}  // namespace

void write_npz(const std::filesystem::path& path, const std::vector<NpyArray>& arrays) {
  std::vector<NpzEntry> entries;
  for (const NpyArray& a : arrays) {
    for (std::size_t i = 0; i < a.data.size(); ++i)
      if (!std::isfinite(a.data[i]))
        throw SolverError("npz: array '" + a.name + "', flat index " + std::to_string(i) + ": " +
                          (std::isnan(a.data[i]) ? "NaN" : "infinite value") + " refused");
    entries.push_back({a.name, a.shape, a.data.size(),
                       [&a](const std::function<void(std::span<const char>)>& sink) {
                         sink(as_bytes(a.data));
                       }});
  }
  write_entries(path, entries);
}

// ---------------------------------------------------------------------------------------
// JSON

struct Json::Impl {
  nlohmann::ordered_json j;
};

Json::Json() : impl_(std::make_unique<Impl>()) {}
Json::Json(bool b) : impl_(std::make_unique<Impl>(Impl{b})) {}
Json::Json(double x) : impl_(std::make_unique<Impl>(Impl{x})) {}
Json::Json(const char* s) : impl_(std::make_unique<Impl>(Impl{std::string(s)})) {}
Json::Json(std::string s) : impl_(std::make_unique<Impl>(Impl{std::move(s)})) {}
Json::Json(const Json& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
// Moves the value but keeps other valid (null), so a moved-from Json is still usable.
Json::Json(Json&& other) : impl_(std::make_unique<Impl>(std::move(*other.impl_))) {}
Json& Json::operator=(const Json& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Json& Json::operator=(Json&& other) {
  if (this != &other) impl_->j = std::move(other.impl_->j);
  return *this;
}
Json::~Json() = default;

Json Json::from_integer(std::int64_t n) {
  Json v;
  v.impl_->j = n;
  return v;
}

Json Json::object() {
  Json v;
  v.impl_->j = nlohmann::ordered_json::object();
  return v;
}

Json Json::array() {
  Json v;
  v.impl_->j = nlohmann::ordered_json::array();
  return v;
}

Json Json::array(std::span<const double> values) {
  Json v = array();
  for (double x : values) v.impl_->j.push_back(x);
  return v;
}

Json Json::array(const Eigen::Ref<const Eigen::VectorXd>& values) {
  return array(std::span<const double>(values.data(), static_cast<std::size_t>(values.size())));
}

Json& Json::set(const std::string& key, Json value) {
  auto& j = impl_->j;
  if (!j.is_null() && !j.is_object())
    throw std::logic_error("Json::set('" + key + "') on a " + std::string(j.type_name()));
  j[key] = std::move(value.impl_->j);
  return *this;
}

Json& Json::push_back(Json value) {
  auto& j = impl_->j;
  if (!j.is_null() && !j.is_array())
    throw std::logic_error("Json::push_back on a " + std::string(j.type_name()));
  j.push_back(std::move(value.impl_->j));
  return *this;
}

bool Json::is_null() const { return impl_->j.is_null(); }

std::string Json::dump(int indent) const {
  return impl_->j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void Json::write_file(const std::filesystem::path& path) const {
  const std::filesystem::path part = part_path(path);
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string() + ": cannot open for writing");
    out << dump() << '\n';
    out.flush();
    if (!out) throw InputError(path.string() + ": write failed");
  }
  publish(part, path);
}

// ---------------------------------------------------------------------------------------
// Files under their final names only when complete

std::filesystem::path part_path(const std::filesystem::path& path) {
  std::filesystem::path part = path;
  part += ".part";
  return part;
}

std::filesystem::path hidden_part_path(const std::filesystem::path& path) {
  std::string name(".");  // appended: GCC 12's -Wrestrict misfires on "." + string
  name.append(path.filename().string()).append(".part");
  return path.parent_path() / name;
}

void publish(const std::filesystem::path& part, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(part, path, ec);
  if (ec) throw InputError(path.string() + ": cannot rename from " + part.filename().string() +
                           ": " + ec.message());
}

FileRecorder::FileRecorder(std::filesystem::path out_dir, std::string stem, bool csv)
    : dir_(std::move(out_dir)), stem_(std::move(stem)), write_csv_(csv) {}

FileRecorder::~FileRecorder() = default;

std::filesystem::path FileRecorder::csv_path() const { return dir_ / (stem_ + ".csv"); }
std::filesystem::path FileRecorder::npz_path() const { return dir_ / (stem_ + ".npz"); }

void FileRecorder::begin(const sim::Layout& layout) {
  layout_ = layout;
  // A reused directory must not show an old trajectory beside the new one.
  std::error_code ec;
  std::filesystem::remove(csv_path(), ec);
  std::filesystem::remove(npz_path(), ec);
  if (write_csv_) csv_ = std::make_unique<CsvWriter>(part_path(csv_path()), layout.columns);
  open_ = true;
  rows_ = 0;
  const std::size_t arrays = layout_.arrays.size() + 1;
  array_paths_.clear();
  array_files_.clear();
  array_files_.resize(arrays);
  for (std::size_t k = 0; k < arrays; ++k) {
    array_paths_.push_back(dir_ / ("." + stem_ + ".array" + std::to_string(k) + ".part"));
    array_files_[k].open(array_paths_[k], std::ios::binary | std::ios::trunc);
    if (!array_files_[k]) throw InputError(array_paths_[k].string() + ": cannot open for writing");
  }
}

void FileRecorder::row(std::span<const double> values) {
  if (csv_) csv_->write_row(values);
  ++rows_;
  const auto append = [&](std::size_t k, std::span<const double> data) {
    const std::span<const char> bytes = as_bytes(data);
    array_files_[k].write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!array_files_[k]) throw InputError(array_paths_[k].string() + ": write failed");
  };
  append(0, values.first(1));  // t
  for (std::size_t a = 0; a < layout_.arrays.size(); ++a) {
    gathered_.clear();
    for (const int c : layout_.arrays[a].columns) gathered_.push_back(values[std::size_t(c)]);
    append(a + 1, gathered_);
  }
}

void FileRecorder::finish(bool) {
  if (!open_) return;
  open_ = false;
  const std::size_t rows = rows_;
  for (std::ofstream& f : array_files_) f.close();
  if (csv_) {
    csv_.reset();
    publish(part_path(csv_path()), csv_path());
  }

  // The .npz from the arrays' files, read back in chunks of 1 MiB (the rows are finite:
  // sim::simulate records no other).
  std::vector<NpzEntry> entries;
  for (std::size_t k = 0; k < array_paths_.size(); ++k) {
    NpzEntry e;
    e.name = k == 0 ? "t" : layout_.arrays[k - 1].name;
    e.shape = {rows};
    if (k > 0) e.shape.insert(e.shape.end(), layout_.arrays[k - 1].shape.begin(),
                              layout_.arrays[k - 1].shape.end());
    e.values = rows * (k == 0 ? 1 : layout_.arrays[k - 1].columns.size());
    e.stream = [path = array_paths_[k], bytes = 8 * e.values](
                   const std::function<void(std::span<const char>)>& sink) {
      std::ifstream in(path, std::ios::binary);
      std::vector<char> chunk(std::size_t{1} << 20);
      std::uint64_t left = bytes;
      while (left > 0) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
        in.read(chunk.data(), static_cast<std::streamsize>(n));
        if (!in) throw InputError(path.string() + ": cannot read back the recorded rows");
        sink({chunk.data(), n});
        left -= n;
      }
    };
    entries.push_back(std::move(e));
  }
  write_entries(part_path(npz_path()), entries);
  std::error_code ec;
  for (const std::filesystem::path& p : array_paths_) std::filesystem::remove(p, ec);
  publish(part_path(npz_path()), npz_path());
}

}  // namespace marsden::record
