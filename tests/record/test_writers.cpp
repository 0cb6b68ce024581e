#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/temp_dir.hpp"
#include "marsden/error.hpp"
#include "marsden/record/writers.hpp"

namespace marsden::record {
namespace {

using test::read_file;
using test::TempDir;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ----------------------------------------------------------------------------- CSV

TEST(CsvWriter, WritesHeaderAndRowsThatReadBackExactly) {
  TempDir dir;
  const auto path = dir / "t.csv";
  CsvWriter csv(path, {"t", "x", "energy"});
  csv.write_row({0.0, 0.1, 1.0 / 3.0});
  csv.write_row({0.5, -2.5e-300, 6.02214076e23});
  EXPECT_EQ(csv.rows_written(), 2u);
  // Flushed per row: readable before the writer is closed.
  const std::string text = read_file(path);
  EXPECT_EQ(text, "t,x,energy\n0,0.1,0.3333333333333333\n0.5,-2.5e-300,6.02214076e+23\n");
  EXPECT_EQ(std::stod("0.3333333333333333"), 1.0 / 3.0);
}

TEST(CsvWriter, RefusesNaNAndInfinityNamingRowAndColumn) {
  TempDir dir;
  const auto path = dir / "t.csv";
  CsvWriter csv(path, {"t", "x", "qw"});
  csv.write_row({0.0, 1.0, 1.0});
  try {
    csv.write_row({0.1, 2.0, kNaN});
    FAIL() << "expected SolverError";
  } catch (const SolverError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("row 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column 'qw'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NaN"), std::string::npos) << msg;
  }
  try {
    csv.write_row({0.1, -kInf, 1.0});
    FAIL() << "expected SolverError";
  } catch (const SolverError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'x'"), std::string::npos) << e.what();
  }
  // Nothing of the refused rows was written; the writer still works.
  EXPECT_EQ(read_file(path), "t,x,qw\n0,1,1\n");
  csv.write_row({0.2, 3.0, 1.0});
  EXPECT_EQ(read_file(path), "t,x,qw\n0,1,1\n0.2,3,1\n");
  EXPECT_EQ(csv.rows_written(), 2u);
}

TEST(CsvWriter, RejectsWrongRowLengthAndUnwritablePath) {
  TempDir dir;
  CsvWriter csv(dir / "t.csv", {"a", "b"});
  EXPECT_THROW(csv.write_row({1.0}), std::invalid_argument);
  EXPECT_THROW(CsvWriter(dir / "no-such-dir" / "t.csv", {"a"}), InputError);
}

TEST(CsvWriter, QuotesColumnNamesThatNeedIt) {
  TempDir dir;
  CsvWriter csv(dir / "t.csv", {"plain", "with,comma", "with\"quote"});
  EXPECT_EQ(read_file(dir / "t.csv"), "plain,\"with,comma\",\"with\"\"quote\"\n");
}

// ----------------------------------------------------------------------------- NPZ

std::uint32_t u16(const std::string& s, std::size_t at) {
  return std::uint32_t(std::uint8_t(s[at])) | std::uint32_t(std::uint8_t(s[at + 1])) << 8;
}
std::uint32_t u32(const std::string& s, std::size_t at) { return u16(s, at) | u16(s, at + 2) << 16; }

// Bitwise CRC-32 (IEEE 802.3, as in zip), independent of the zlib used by the writer.
std::uint32_t crc32_ref(const char* data, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= std::uint8_t(data[i]);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

struct NpyEntry {
  std::string header;
  std::vector<double> data;
};

// Reads a stored (uncompressed) zip through its central directory, checking every
// structure the way a zip reader would, and decodes the .npy entries.
std::map<std::string, NpyEntry> read_npz(const std::string& zip) {
  std::map<std::string, NpyEntry> out;
  const std::size_t eocd = zip.size() - 22;
  EXPECT_EQ(u32(zip, eocd), 0x06054b50u);
  const std::size_t count = u16(zip, eocd + 10);
  std::size_t cd = u32(zip, eocd + 16);
  EXPECT_EQ(cd + u32(zip, eocd + 12), eocd);
  for (std::size_t e = 0; e < count; ++e) {
    EXPECT_EQ(u32(zip, cd), 0x02014b50u);
    EXPECT_EQ(u16(zip, cd + 10), 0u);  // stored
    const std::uint32_t crc = u32(zip, cd + 16), size = u32(zip, cd + 20);
    EXPECT_EQ(u32(zip, cd + 24), size);
    const std::size_t name_len = u16(zip, cd + 28);
    const std::string name = zip.substr(cd + 46, name_len);
    const std::size_t local = u32(zip, cd + 42);
    cd += 46 + name_len + u16(zip, cd + 30) + u16(zip, cd + 32);

    EXPECT_EQ(u32(zip, local), 0x04034b50u);
    EXPECT_EQ(zip.substr(local + 30, u16(zip, local + 26)), name);
    const std::size_t data_at = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
    const std::string npy = zip.substr(data_at, size);
    EXPECT_EQ(crc32_ref(npy.data(), npy.size()), crc) << name;

    EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header_len = u16(npy, 8);
    EXPECT_EQ((10 + header_len) % 64, 0u) << "data must be 64-byte aligned";
    NpyEntry entry;
    entry.header = npy.substr(10, header_len);
    EXPECT_EQ(entry.header.back(), '\n');
    const std::size_t n = (npy.size() - 10 - header_len) / 8;
    entry.data.resize(n);
    if (n > 0) std::memcpy(entry.data.data(), npy.data() + 10 + header_len, 8 * n);
    EXPECT_TRUE(name.size() > 4 && name.substr(name.size() - 4) == ".npy") << name;
    out[name.substr(0, name.size() - 4)] = entry;
  }
  return out;
}

TEST(Npz, WritesNumpyCompatibleStoredZip) {
  TempDir dir;
  Eigen::MatrixXd m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  write_npz(dir / "a.npz", {npy_vector("t", std::vector<double>{0.0, 0.5, 1.0}),
                            npy_matrix("m", m), NpyArray{"empty", {4, 0}, {}}});
  const auto entries = read_npz(read_file(dir / "a.npz"));
  ASSERT_EQ(entries.size(), 3u);

  const NpyEntry& t = entries.at("t");
  EXPECT_NE(t.header.find("'descr': '<f8'"), std::string::npos) << t.header;
  EXPECT_NE(t.header.find("'fortran_order': False"), std::string::npos);
  EXPECT_NE(t.header.find("'shape': (3,)"), std::string::npos) << t.header;
  EXPECT_EQ(t.data, (std::vector<double>{0.0, 0.5, 1.0}));

  const NpyEntry& mm = entries.at("m");
  EXPECT_NE(mm.header.find("'shape': (2, 3)"), std::string::npos) << mm.header;
  EXPECT_EQ(mm.data, (std::vector<double>{1, 2, 3, 4, 5, 6})) << "C (row-major) order";

  const NpyEntry& e = entries.at("empty");
  EXPECT_NE(e.header.find("'shape': (4, 0)"), std::string::npos) << e.header;
  EXPECT_TRUE(e.data.empty());
}

// A URDF joint may be called "arm/joint1": the archive's entry, a path, becomes arm_joint1.
TEST(Npz, PathSeparatorsInNamesBecomeUnderscores) {
  TempDir dir;
  write_npz(dir / "a.npz", {NpyArray{"arm/joint1", {1}, {1.0}}, NpyArray{"b\\c", {1}, {2.0}}});
  const auto entries = read_npz(read_file(dir / "a.npz"));
  EXPECT_EQ(entries.at("arm_joint1").data, std::vector<double>{1.0});
  EXPECT_EQ(entries.at("b_c").data, std::vector<double>{2.0});
}

TEST(Npz, RefusesNonFiniteValuesBadNamesAndSizes) {
  TempDir dir;
  try {
    write_npz(dir / "a.npz", {npy_vector("energy", std::vector<double>{1.0, kInf})});
    FAIL() << "expected SolverError";
  } catch (const SolverError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'energy'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 1"), std::string::npos) << msg;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "a.npz")) << "nothing written on refusal";
  EXPECT_THROW(write_npz(dir / "a.npz", {npy_vector("x", std::vector<double>{1.0}),
                                         npy_vector("x", std::vector<double>{2.0})}),
               InputError);
  EXPECT_THROW(write_npz(dir / "a.npz", {NpyArray{"a/b", {1}, {1.0}}, NpyArray{"a_b", {1}, {2.0}}}),
               InputError);
  EXPECT_THROW(write_npz(dir / "a.npz", {NpyArray{"x", {2, 2}, {1.0}}}), std::invalid_argument);
  EXPECT_THROW(write_npz(dir / "missing" / "a.npz", {}), InputError);
}

// ----------------------------------------------------------------------------- JSON

TEST(Json, BuildsDocumentsInInsertionOrder) {
  Json doc = Json::object();
  doc.set("status", "ok")
      .set("steps", 10)
      .set("big", std::size_t{1} << 40)
      .set("dt", 0.01)
      .set("done", true)
      .set("nothing", nullptr)
      .set("drift", kNaN)
      .set("values", Json::array(std::vector<double>{1.0, 2.5}))
      .set("nested", Json::object().set("a", Json::array().push_back(1).push_back("x")));
  EXPECT_EQ(doc.dump(-1),
            R"({"status":"ok","steps":10,"big":1099511627776,"dt":0.01,"done":true,)"
            R"("nothing":null,"drift":null,"values":[1.0,2.5],"nested":{"a":[1,"x"]}})");
  doc.set("steps", 11);
  EXPECT_NE(doc.dump(-1).find("\"steps\":11"), std::string::npos);
  EXPECT_THROW(Json(1.0).set("a", 1), std::logic_error);
  EXPECT_THROW(Json::object().push_back(1), std::logic_error);
}

TEST(Json, CopiesAreIndependentAndMovedFromValuesStayUsable) {
  Json a = Json::object().set("k", 1);
  Json b = a;
  b.set("k", 2);
  EXPECT_EQ(a.dump(-1), R"({"k":1})");
  Json c = std::move(a);
  EXPECT_EQ(c.dump(-1), R"({"k":1})");
  EXPECT_TRUE(a.is_null());  // NOLINT(bugprone-use-after-move): documented behaviour
  a.set("again", true);
  EXPECT_EQ(a.dump(-1), R"({"again":true})");
}

TEST(Json, WritesFiles) {
  TempDir dir;
  Json::object().set("x", 1).write_file(dir / "r.json");
  EXPECT_EQ(read_file(dir / "r.json"), "{\n  \"x\": 1\n}\n");
  EXPECT_THROW(Json().write_file(dir / "no" / "r.json"), InputError);
}

TEST(CsvWriter, StagedFilesAppearOnlyWhenClosed) {
  TempDir dir;
  const auto listing = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      names.push_back(e.path().filename().string());
    return names;
  };
  {
    CsvWriter csv(dir / "kept.csv", {"t", "x"}, CsvWriter::Staging::Hidden);
    csv.write_row({0.0, 1.0});
    EXPECT_FALSE(std::filesystem::exists(dir / "kept.csv")) << "not before close()";
    csv.write_row({1.0, 2.0});
    csv.close();
    EXPECT_THROW(csv.write_row({2.0, 3.0}), std::logic_error);
  }
  EXPECT_EQ(read_file(dir / "kept.csv"), "t,x\n0,1\n1,2\n");
  {
    // Abandoned (an exception or an interrupt ends the scope): nothing is left behind.
    CsvWriter csv(dir / "dropped.csv", {"t"}, CsvWriter::Staging::Hidden);
    csv.write_row({0.0});
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"kept.csv"});
}

}  // namespace
}  // namespace marsden::record
