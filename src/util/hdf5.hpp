// fluxjac — a thin RAII layer over the HDF5 C API: owned identifiers, typed datasets and scalar attributes
// with type and shape checks, and failures turned into one-line fluxjac::Error messages of the form
// "FILE: /object: what is wrong". HDF5's own error printing is switched off so users see only that line.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fluxjac::h5 {

/// \brief Owns one HDF5 identifier and closes it with the matching H5*close function.
template <herr_t (*Close)(hid_t)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(hid_t id) : id_(id) {}
  ~Owned() { reset(); }
  Owned(Owned&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

  /// \brief Closes the identifier now; returns false when HDF5 reports a failure (matters for writes).
  bool reset() {
    if (id_ < 0) return true;
    const bool ok = Close(std::exchange(id_, H5I_INVALID_HID)) >= 0;
    return ok;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using Group = Owned<H5Gclose>;
using Dataset = Owned<H5Dclose>;
using Dataspace = Owned<H5Sclose>;
using Attribute = Owned<H5Aclose>;
using Datatype = Owned<H5Tclose>;
using PropertyList = Owned<H5Pclose>;
using Object = Owned<H5Oclose>;

/// \brief Switches off HDF5's automatic error-stack printing (idempotent; called by File::open/create).
void silence_library_errors();

/// \brief An open HDF5 file that remembers the name to show in error messages.
class File {
 public:
  enum class Mode { kReadOnly, kReadWrite };

  /// \brief Opens an existing file; Error(kInvalidInput) when it is missing or not HDF5. Messages name
  /// display_name (default: path), e.g. the output a temporary becomes.
  static File open(const std::string& path, Mode mode = Mode::kReadOnly, const std::string& display_name = {});
  /// \brief Creates (truncates) a file at path; messages name display_name (default: path).
  static File create(const std::string& path, const std::string& display_name = {});

  /// The name shown in messages (the path the user gave).
  const std::string& name() const { return name_; }
  hid_t id() const { return handle_.id(); }
  /// \brief Flushes and closes; Error(kRuntime) when HDF5 cannot (disk full, I/O error).
  void close();

 private:
  File(hid_t id, std::string name) : handle_(id), name_(std::move(name)) {}
  Owned<H5Fclose> handle_;
  std::string name_;
};

/// Element types fluxjac distinguishes when it checks a dataset or an attribute.
enum class TypeClass { kSignedInteger, kUnsignedInteger, kFloat, kString, kOther };

/// \brief The class and byte size of a stored element, e.g. {kFloat, 8} for float64.
struct ElementType {
  TypeClass type_class = TypeClass::kOther;
  std::size_t size = 0;

  /// \brief "int32", "uint8", "float64", "string", ...
  std::string name() const;
  bool operator==(const ElementType& other) const { return type_class == other.type_class && size == other.size; }
};

inline constexpr ElementType kInt32{TypeClass::kSignedInteger, 4};
inline constexpr ElementType kInt64{TypeClass::kSignedInteger, 8};
inline constexpr ElementType kFloat32{TypeClass::kFloat, 4};
inline constexpr ElementType kFloat64{TypeClass::kFloat, 8};

/// Placeholder for "any extent" in an expected shape.
inline constexpr std::int64_t kAnyExtent = -1;

/// \brief What a dataset holds, read from its metadata only.
struct DatasetInfo {
  std::string file;  ///< display name of the file
  std::string path;  ///< absolute path in the file, e.g. "/mesh/edges"
  ElementType type;
  std::vector<std::int64_t> shape;

  /// \brief Number of elements (product of the extents).
  std::int64_t element_count() const;
};

/// \brief "[10, 3]"; kAnyExtent prints as "*".
std::string shape_text(const std::vector<std::int64_t>& shape);

/// \brief True when an object (group or dataset) exists at the absolute path; intermediate groups may be missing.
/// Error(kInvalidInput) when a link on the way leads out of the file (an external or user-defined link): fluxjac
/// reads only what is stored in the file it was given.
bool exists(const File& file, const std::string& path);

/// \brief Type and shape of a dataset; Error(kInvalidInput) "FILE: PATH: dataset not found" when absent, and when
/// the dataset lies in another file or keeps its values outside the file (external storage, virtual dataset).
DatasetInfo describe_dataset(const File& file, const std::string& path);

/// \brief Error(kInvalidInput) unless the element type is one of accepted ("has type float32, expected float64").
void require_type(const DatasetInfo& info, std::initializer_list<ElementType> accepted);

/// \brief Error(kInvalidInput) unless the shape matches expected (kAnyExtent matches anything); meaning is
/// appended to the message in brackets, e.g. "[n_edges, 3] with n_edges = 10 from /mesh/edges".
void require_shape(const DatasetInfo& info, const std::vector<std::int64_t>& expected, std::string_view meaning = {});

/// Memory and file types of the C++ element types fluxjac stores.
template <class T>
struct TypeTraits;
template <>
struct TypeTraits<double> {
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
};
template <>
struct TypeTraits<float> {
  static hid_t memory() { return H5T_NATIVE_FLOAT; }
  static hid_t file() { return H5T_IEEE_F32LE; }
};
template <>
struct TypeTraits<std::int16_t> {
  static hid_t memory() { return H5T_NATIVE_INT16; }
  static hid_t file() { return H5T_STD_I16LE; }
};
template <>
struct TypeTraits<std::int32_t> {
  static hid_t memory() { return H5T_NATIVE_INT32; }
  static hid_t file() { return H5T_STD_I32LE; }
};
template <>
struct TypeTraits<std::int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
};
template <>
struct TypeTraits<std::uint32_t> {
  static hid_t memory() { return H5T_NATIVE_UINT32; }
  static hid_t file() { return H5T_STD_U32LE; }
};

/// \brief Error(kInvalidInput) unless every value the dataset declares is stored in the file itself: not in
/// external raw files, not mapped from other files (virtual dataset), no chunk left unwritten, no contiguous block
/// past the end of the file, no more than deflate can expand; then Error(kRuntime) when memory_bytes (what the
/// caller will allocate for it) exceeds the memory available. So a small file declaring a huge shape is refused
/// before anything is allocated.
void require_readable(const File& file, const DatasetInfo& info, double memory_bytes);

/// \brief Reads a whole dataset into buffer (info.element_count() elements), converting to memory_type; checks
/// the storage first (require_readable).
void read_raw(const File& file, const DatasetInfo& info, hid_t memory_type, void* buffer);

/// \brief Creates a contiguous dataset (and missing parent groups) and writes count elements to it;
/// Error(kRuntime) when count does not match the shape.
void write_raw(const File& file, const std::string& path, hid_t file_type, hid_t memory_type, const void* data,
               std::size_t count, const std::vector<std::int64_t>& shape);

/// Rows [begin, end) along a dataset's first dimension.
struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

/// \brief The ascending row ids as maximal runs of consecutive rows ({3, 4, 5, 9} -> [3, 6), [9, 10)).
std::vector<RowRange> row_ranges(const std::vector<std::int64_t>& ascending_rows);

/// \brief The dataset row of the k-th row read from rows (read_rows reads them in order): ([3, 6), [9, 10)) and
/// k = 3 give 9. Messages about a value read by rows name it where the file has it.
std::int64_t row_in_file(const std::vector<RowRange>& rows, std::int64_t k);

/// \brief Reads the given rows (ascending, disjoint, within the first extent) of a dataset, in order, into buffer,
/// converting to memory_type: each rank of a many-GPU run reads only its slices (HDF5 hyperslabs).
/// Error(kInvalidInput) naming the dataset when a range lies outside it or the read fails.
void read_rows_raw(const File& file, const DatasetInfo& info, const std::vector<RowRange>& rows, hid_t memory_type,
                   void* buffer);

/// \brief Creates a contiguous dataset (and missing parent groups) of the given shape whose values write_rows
/// fills later, possibly from several processes in turn.
void create_dataset(const File& file, const std::string& path, hid_t file_type, const std::vector<std::int64_t>& shape);

/// \brief Writes the given rows (ascending, disjoint) of an existing dataset from data (their values in order).
void write_rows_raw(const File& file, const std::string& path, const std::vector<RowRange>& rows, hid_t memory_type,
                    const void* data);

/// \brief Reads a whole dataset as T; check the type class first (HDF5 converts int32 to int64 and so on).
template <class T>
std::vector<T> read(const File& file, const DatasetInfo& info) {
  require_readable(file, info, static_cast<double>(info.element_count()) * sizeof(T));
  std::vector<T> values(static_cast<std::size_t>(info.element_count()));
  read_raw(file, info, TypeTraits<T>::memory(), values.data());
  return values;
}

/// \brief Reads the given rows of a dataset as T (row_width values per row: the product of the other extents).
template <class T>
std::vector<T> read_rows(const File& file, const DatasetInfo& info, const std::vector<RowRange>& rows) {
  std::int64_t row_width = 1, count = 0;
  for (std::size_t k = 1; k < info.shape.size(); ++k) row_width *= info.shape[k];
  for (const RowRange& range : rows) count += range.end - range.begin;
  require_readable(file, info, static_cast<double>(count * row_width) * sizeof(T));
  std::vector<T> values(static_cast<std::size_t>(count * row_width));
  read_rows_raw(file, info, rows, TypeTraits<T>::memory(), values.data());
  return values;
}

/// \brief Creates a dataset of T of the given shape, to be filled by write_rows.
template <class T>
void create_dataset(const File& file, const std::string& path, const std::vector<std::int64_t>& shape) {
  create_dataset(file, path, TypeTraits<T>::file(), shape);
}

/// \brief Writes values into the given rows of the dataset at path.
template <class T>
void write_rows(const File& file, const std::string& path, const std::vector<RowRange>& rows,
                const std::vector<T>& values) {
  write_rows_raw(file, path, rows, TypeTraits<T>::memory(), values.data());
}

/// \brief Writes values as a new dataset of the given shape (the product must equal values.size()).
template <class T>
void write(const File& file, const std::string& path, const std::vector<T>& values,
           const std::vector<std::int64_t>& shape) {
  write_raw(file, path, TypeTraits<T>::file(), TypeTraits<T>::memory(), values.data(), values.size(), shape);
}

/// \brief Like write, but first removes a dataset already at path (used to patch files, e.g. in tests).
template <class T>
void replace(const File& file, const std::string& path, const std::vector<T>& values,
             const std::vector<std::int64_t>& shape);

/// \brief Creates a group and any missing parents; no-op when it exists.
void create_group(const File& file, const std::string& path);

/// \brief Removes the link at path (a dataset or group), e.g. to replace a dataset.
void remove(const File& file, const std::string& path);

template <class T>
void replace(const File& file, const std::string& path, const std::vector<T>& values,
             const std::vector<std::int64_t>& shape) {
  if (exists(file, path)) remove(file, path);
  write(file, path, values, shape);
}

/// \brief True when the object at object_path (which must exist) carries attribute name.
bool has_attribute(const File& file, const std::string& object_path, const std::string& name);

/// \brief Writes a scalar variable-length UTF-8 string attribute (replacing an existing one).
void write_attribute(const File& file, const std::string& object_path, const std::string& name,
                     const std::string& value);
void write_attribute(const File& file, const std::string& object_path, const std::string& name, const char* value);

/// \brief Writes a scalar numeric attribute (replacing an existing one); the file type follows T.
void write_attribute_raw(const File& file, const std::string& object_path, const std::string& name, hid_t file_type,
                         hid_t memory_type, const void* value);
template <class T>
void write_attribute(const File& file, const std::string& object_path, const std::string& name, T value) {
  write_attribute_raw(file, object_path, name, TypeTraits<T>::file(), TypeTraits<T>::memory(), &value);
}

/// \brief Removes an attribute if present.
void remove_attribute(const File& file, const std::string& object_path, const std::string& name);

/// \brief A single-valued string attribute (variable or fixed length; fixed-length padding stripped);
/// nullopt when absent; Error(kInvalidInput) when it is not a string or holds several values.
std::optional<std::string> read_string_attribute(const File& file, const std::string& object_path,
                                                 const std::string& name);

/// \brief A single-valued integer attribute (any integer width); nullopt when absent; Error otherwise (an unsigned
/// value past int64 included, named as stored).
std::optional<std::int64_t> read_integer_attribute(const File& file, const std::string& object_path,
                                                   const std::string& name);

/// \brief A single-valued numeric attribute (float or integer) as double; nullopt when absent; Error otherwise.
std::optional<double> read_number_attribute(const File& file, const std::string& object_path, const std::string& name);

/// \brief Writes the root attributes every fluxjac file carries: format (string) and version (int32).
void write_format(const File& file, std::string_view format, std::int32_t version);

/// \brief The root attribute format, or nullopt when absent (Error when it is not a string).
std::optional<std::string> read_format(const File& file);

/// \brief Error(kInvalidInput) unless the root attributes are format == expected_format and
/// version == expected_version, with a message saying what the file is instead.
void require_format(const File& file, std::string_view expected_format, std::int64_t expected_version);
/// \brief As above for a format read in versions oldest_version to newest_version; returns the file's version.
std::int64_t require_format(const File& file, std::string_view expected_format, std::int64_t oldest_version,
                            std::int64_t newest_version);

}  // namespace fluxjac::h5
