/*
 * ecngym: NumPy arrays in and out of the nanobind modules (`_fabric`, `_ns3tcp`).
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef ECNGYM_NUMPY_CONVERSIONS_H
#define ECNGYM_NUMPY_CONVERSIONS_H

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace ns3
{
namespace ecngym
{
namespace numpy
{

/** A 1-D NumPy array handed to Python. */
template <typename T>
using Array1 = nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<1>>;

/** A 2-D row-major NumPy array handed to Python. */
template <typename T>
using Array2 = nanobind::ndarray<nanobind::numpy, T, nanobind::ndim<2>, nanobind::c_contig>;

/** A 1-D contiguous CPU array Python passes in (read only). */
template <typename T>
using ArrayIn = nanobind::ndarray<const T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;

/**
 * @brief A capsule that owns @p heap (deleted when the last array viewing it goes).
 * @param heap the vector the array views
 * @return the owner to give the array
 */
template <typename T>
nanobind::capsule
Owner(std::vector<T>* heap)
{
    return nanobind::capsule(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
}

/**
 * @brief Move a vector into a NumPy array that owns it (no copy).
 * @param v the values
 * @return the 1-D array
 */
template <typename T>
Array1<T>
ToNumpy(std::vector<T>&& v)
{
    auto* heap = new std::vector<T>(std::move(v));
    return Array1<T>(heap->data(), {heap->size()}, Owner(heap));
}

/**
 * @brief Move a row-major vector into a @p rows x @p cols NumPy array that owns it.
 * @param v the values, rows * cols of them
 * @param rows the first dimension
 * @param cols the second dimension
 * @return the 2-D array
 */
template <typename T>
Array2<T>
ToNumpy(std::vector<T>&& v, std::size_t rows, std::size_t cols)
{
    auto* heap = new std::vector<T>(std::move(v));
    return Array2<T>(heap->data(), {rows, cols}, Owner(heap));
}

/**
 * @brief Copy an array Python passed in into a vector.
 * @param a the array
 * @return its values
 */
template <typename T>
std::vector<T>
FromNumpy(const ArrayIn<T>& a)
{
    return std::vector<T>(a.data(), a.data() + a.shape(0));
}

} // namespace numpy
} // namespace ecngym
} // namespace ns3

#endif
