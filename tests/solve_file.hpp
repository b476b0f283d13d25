// The arrays of a solve output file (docs/formats.md, "Solve output") for the tests of the solve on many ranks.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "util/hdf5.hpp"

namespace fluxjac::test {

/// The Jacobian, residual and /solve of a file written by `fluxjac solve -o`.
struct SolveFile {
  std::vector<double> adiag, residual, shift, delta;
  std::vector<float> aoff;
  std::int64_t iterations = 0;
  double relative_residual = 0.0;
};

inline SolveFile read_solve_file(const std::string& path) {
  const h5::File file = h5::File::open(path);
  SolveFile read;
  read.adiag = h5::read<double>(file, h5::describe_dataset(file, "/jacobian/adiag"));
  read.aoff = h5::read<float>(file, h5::describe_dataset(file, "/jacobian/aoff"));
  read.residual = h5::read<double>(file, h5::describe_dataset(file, "/residual"));
  read.shift = h5::read<double>(file, h5::describe_dataset(file, "/solve/shift"));
  read.delta = h5::read<double>(file, h5::describe_dataset(file, "/solve/delta"));
  read.iterations = h5::read_integer_attribute(file, "/solve", "iterations").value_or(-1);
  read.relative_residual = h5::read_number_attribute(file, "/solve", "relative_residual").value_or(-1.0);
  return read;
}

/// |a - b| / |b| over whole vectors.
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    difference += (a[k] - b[k]) * (a[k] - b[k]);
    norm += b[k] * b[k];
  }
  return std::sqrt(difference / norm);
}

}  // namespace fluxjac::test
