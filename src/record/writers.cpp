#include "marsden/record/writers.hpp"

#include <bit>
#include <charconv>
#include <cmath>
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

CsvWriter::CsvWriter(const std::filesystem::path& path, std::vector<std::string> columns)
    : path_(path), columns_(std::move(columns)), out_(path, std::ios::binary | std::ios::trunc) {
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

void CsvWriter::write_row(std::span<const double> values) {
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

// The .npy bytes of one array: magic, version 1.0, header length, a Python dict literal
// padded with spaces to a multiple of 64 bytes, then the little-endian float64 data.
std::string npy_bytes(const NpyArray& a) {
  std::string shape = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(a.shape[i]);
  }
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t prefix = 10;  // magic (6) + version (2) + header length (2)
  const std::size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';

  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  put_u16(out, static_cast<std::uint32_t>(header.size()));
  out += header;
  out.reserve(out.size() + 8 * a.data.size());
  for (double x : a.data) {
    const auto bits = std::bit_cast<std::uint64_t>(x);
    for (int b = 0; b < 8; ++b) out += static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

// An array's entry in the archive: its name with the path separators '/' and '\\' made '_'
// (names come from coordinates and joints, which URDF files may spell "arm/joint1").
std::string entry_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == '/' || c == '\\') c = '_';
  return out;
}

void check_array(const NpyArray& a, std::set<std::string>& names) {
  if (a.name.empty()) throw InputError("npz: an array without a name");
  if (!names.insert(entry_name(a.name)).second)
    throw InputError("npz: two arrays named '" + entry_name(a.name) +
                     "' (after '/' and '\\' became '_')");
  std::size_t n = 1;
  for (std::size_t d : a.shape) n *= d;
  if (n != a.data.size())
    throw std::invalid_argument("npz: array '" + a.name + "' has " +
                                std::to_string(a.data.size()) + " values for its shape");
  for (std::size_t i = 0; i < a.data.size(); ++i)
    if (!std::isfinite(a.data[i]))
      throw SolverError("npz: array '" + a.name + "', flat index " + std::to_string(i) + ": " +
                        (std::isnan(a.data[i]) ? "NaN" : "infinite value") + " refused");
}

}  // namespace

void write_npz(const std::filesystem::path& path, const std::vector<NpyArray>& arrays) {
  std::set<std::string> names;
  for (const NpyArray& a : arrays) check_array(a, names);

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path.string() + ": cannot open for writing");

  constexpr std::uint32_t kDosDate = (0u << 9) | (1u << 5) | 1u;  // 1980-01-01, reproducible
  constexpr std::uint64_t kZipLimit = 0xffffffffu;
  std::string central;
  std::uint64_t offset = 0;
  for (const NpyArray& a : arrays) {
    const std::string entry = entry_name(a.name) + ".npy";
    const std::string bytes = npy_bytes(a);
    if (bytes.size() >= kZipLimit || offset >= kZipLimit)
      throw InputError(path.string() + ": archive exceeds 4 GiB (ZIP64 is not supported)");
    const auto size = static_cast<std::uint32_t>(bytes.size());
    const auto crc = static_cast<std::uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()),
              static_cast<uInt>(bytes.size())));

    std::string local;
    put_u32(local, 0x04034b50);  // local file header signature
    put_u16(local, 20);          // version needed: 2.0
    put_u16(local, 0);           // flags
    put_u16(local, 0);           // method: stored
    put_u16(local, 0);           // time
    put_u16(local, kDosDate);
    put_u32(local, crc);
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
    put_u32(central, crc);
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
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    offset += local.size() + bytes.size();
  }
  if (offset >= kZipLimit || arrays.size() >= 0xffff)
    throw InputError(path.string() + ": archive too large (ZIP64 is not supported)");

  std::string end;
  put_u32(end, 0x06054b50);  // end of central directory signature
  put_u16(end, 0);           // this disk
  put_u16(end, 0);           // disk with the central directory
  put_u16(end, static_cast<std::uint32_t>(arrays.size()));
  put_u16(end, static_cast<std::uint32_t>(arrays.size()));
  put_u32(end, static_cast<std::uint32_t>(central.size()));
  put_u32(end, static_cast<std::uint32_t>(offset));
  put_u16(end, 0);  // comment length
  out.write(central.data(), static_cast<std::streamsize>(central.size()));
  out.write(end.data(), static_cast<std::streamsize>(end.size()));
  out.flush();
  if (!out) throw InputError(path.string() + ": write failed");
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

void publish(const std::filesystem::path& part, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(part, path, ec);
  if (ec) throw InputError(path.string() + ": cannot rename from " + part.filename().string() +
                           ": " + ec.message());
}

FileRecorder::FileRecorder(std::filesystem::path out_dir, std::string stem)
    : dir_(std::move(out_dir)), stem_(std::move(stem)) {}

FileRecorder::~FileRecorder() = default;

std::filesystem::path FileRecorder::csv_path() const { return dir_ / (stem_ + ".csv"); }
std::filesystem::path FileRecorder::npz_path() const { return dir_ / (stem_ + ".npz"); }

void FileRecorder::begin(const sim::Layout& layout) {
  layout_ = layout;
  // A reused directory must not show an old trajectory beside the new one.
  std::error_code ec;
  std::filesystem::remove(csv_path(), ec);
  std::filesystem::remove(npz_path(), ec);
  csv_ = std::make_unique<CsvWriter>(part_path(csv_path()), layout.columns);
  rows_path_ = dir_ / ("." + stem_ + ".rows.part");
  rows_.open(rows_path_, std::ios::binary | std::ios::trunc);
  if (!rows_) throw InputError(rows_path_.string() + ": cannot open for writing");
}

void FileRecorder::row(std::span<const double> values) {
  csv_->write_row(values);
  rows_.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!rows_) throw InputError(rows_path_.string() + ": write failed");
}

void FileRecorder::finish(bool) {
  if (!csv_) return;
  const std::size_t rows = csv_->rows_written(), cols = layout_.columns.size();
  csv_.reset();
  rows_.close();
  publish(part_path(csv_path()), csv_path());

  // The .npz from the streamed rows: one array per layout group.
  std::vector<double> all(rows * cols);
  {
    std::ifstream in(rows_path_, std::ios::binary);
    in.read(reinterpret_cast<char*>(all.data()), static_cast<std::streamsize>(all.size() * sizeof(double)));
    if (!in) throw InputError(rows_path_.string() + ": cannot read back the rows");
  }
  std::error_code ec;
  std::filesystem::remove(rows_path_, ec);
  std::vector<NpyArray> arrays;
  arrays.push_back(NpyArray{"t", {rows}, {}});
  for (std::size_t r = 0; r < rows; ++r) arrays.back().data.push_back(all[r * cols]);
  for (const sim::ArrayLayout& a : layout_.arrays) {
    NpyArray arr{a.name, {rows}, {}};
    arr.shape.insert(arr.shape.end(), a.shape.begin(), a.shape.end());
    arr.data.reserve(rows * a.columns.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (const int c : a.columns) arr.data.push_back(all[r * cols + static_cast<std::size_t>(c)]);
    arrays.push_back(std::move(arr));
  }
  write_npz(part_path(npz_path()), arrays);
  publish(part_path(npz_path()), npz_path());
}

}  // namespace marsden::record
