// SHA-256 (FIPS 180-4), for the content hashes that name the compiled models of
// marsden.symbolic's cache (support/shared_object.cpp, python/marsden/symbolic/_codegen.py).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace marsden {

// The digest of `bytes` as 64 lowercase hexadecimal digits (hashlib.sha256().hexdigest()).
std::string sha256_hex(std::string_view bytes);
// The same of a file's content; InputError naming the file when it cannot be read.
std::string file_sha256_hex(const std::filesystem::path& path);

}  // namespace marsden
