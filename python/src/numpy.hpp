// numpy arrays that own what C++ computed, shared by the binding files.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

namespace marsden::python {

using Array = nanobind::ndarray<nanobind::numpy, double>;

// A numpy array of the given shape (row-major) that owns a moved-in vector.
inline Array to_numpy(std::vector<double>&& values, std::vector<std::size_t> shape) {
  auto* data = new std::vector<double>(std::move(values));
  nanobind::capsule owner(
      data, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return Array(data->data(), shape.size(), shape.data(), owner);
}

}  // namespace marsden::python
