#include "util/hdf5.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>

#include "util/error.hpp"
#include "util/input_identity.hpp"
#include "util/input_path.hpp"
#include "util/memory.hpp"
#include "util/text.hpp"

namespace fluxjac::h5 {
namespace {

// At exit HDF5 closes the files still open. A file whose close failed (disk full) stays registered half torn down,
// and that teardown then crashes on it (HDF5 1.10: a segfault in H5F__close_cb, exit 139 instead of fluxjac's 4).
// fluxjac closes every file itself (RAII, on error paths too), so the teardown has nothing to do: switch it off
// before the library's first use.
[[maybe_unused]] const bool kNoTeardownAtExit = [] {
  H5dont_atexit();
  return true;
}();

/// Deflate cannot expand data more than 1032:1 (RFC 1951: at best 258 bytes per 2-bit code); a chunked dataset
/// compressed only by deflate (with shuffle or checksums) that claims more is damaged or forged.
constexpr double kMaxDeflateRatio = 1032.0;

/// The system's reason for a failed HDF5 write where the failing call left one in errno, else a hint.
std::string write_failure_reason(int error_number) {
  switch (error_number) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EIO:
    case EROFS:
      return std::strerror(error_number);
    default:
      return "disk full or I/O error?";
  }
}

/// HDF5's number of the file an object lies in (an object reached through an external link has another).
unsigned long file_number(hid_t object) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info{};
  if (H5Oget_info3(object, &info, H5O_INFO_BASIC) < 0) return 0;
#else
  H5O_info_t info{};
  if (H5Oget_info2(object, &info, H5O_INFO_BASIC) < 0) return 0;
#endif
  return info.fileno;
}

/// Links fluxjac follows: hard links and soft links within the file. Anything else leads elsewhere.
void require_internal_link(const File& file, const std::string& path) {
  H5L_info_t link{};
  if (H5Lget_info(file.id(), path.c_str(), &link, H5P_DEFAULT) < 0)
    fail(ExitCode::kInvalidInput, "{}: {}: cannot read the link (damaged file?)", file.name(), path);
  if (link.type == H5L_TYPE_HARD || link.type == H5L_TYPE_SOFT) return;
  if (link.type == H5L_TYPE_EXTERNAL) {
    std::vector<char> value(link.u.val_size);
    const char* target_file = nullptr;
    const char* target_object = nullptr;
    unsigned flags = 0;
    if (!value.empty() && H5Lget_val(file.id(), path.c_str(), value.data(), value.size(), H5P_DEFAULT) >= 0 &&
        H5Lunpack_elink_val(value.data(), value.size(), &flags, &target_file, &target_object) >= 0 && target_file &&
        target_object)
      fail(ExitCode::kInvalidInput,
           "{}: {}: is an external link to {}:{}; fluxjac reads only data stored in the file itself (copy it in, e.g. "
           "with h5copy)",
           file.name(), path, target_file, target_object);
    fail(ExitCode::kInvalidInput,
         "{}: {}: is an external link; fluxjac reads only data stored in the file itself (copy it in, e.g. with "
         "h5copy)",
         file.name(), path);
  }
  fail(ExitCode::kInvalidInput, "{}: {}: is a user-defined link (type {}); fluxjac follows only hard and soft links",
       file.name(), path, static_cast<int>(link.type));
}

/// An object reached through a soft link that ends in another file.
void require_in_file(const File& file, hid_t object, const std::string& path) {
  if (file_number(object) != file_number(file.id()))
    fail(ExitCode::kInvalidInput,
         "{}: {}: lies in another file (reached through a link); fluxjac reads only data stored in the file itself",
         file.name(), path);
}

/// Values kept outside the file: external raw files (H5Pset_external) or a virtual dataset's source files.
void require_internal_storage(const File& file, hid_t dataset, const std::string& path) {
  const PropertyList creation(H5Dget_create_plist(dataset));
  if (!creation.valid())
    fail(ExitCode::kInvalidInput, "{}: {}: cannot read how the dataset is stored (damaged file?)", file.name(), path);
  if (H5Pget_layout(creation.id()) == H5D_VIRTUAL)
    fail(ExitCode::kInvalidInput,
         "{}: {}: is a virtual dataset (its values come from other files); fluxjac reads only data stored in the file "
         "itself",
         file.name(), path);
  if (H5Pget_external_count(creation.id()) > 0) {
    char name[1024] = {};
    off_t offset = 0;
    hsize_t size = 0;
    H5Pget_external(creation.id(), 0, sizeof name - 1, name, &offset, &size);
    fail(ExitCode::kInvalidInput,
         "{}: {}: keeps its values in the external file '{}'; fluxjac reads only data stored in the file itself",
         file.name(), path, name);
  }
}

/// "mesh.h5: root attribute "format"" or "mesh.h5: /mesh: attribute "n_nodes"".
std::string attribute_where(const File& file, const std::string& object_path, const std::string& name) {
  if (object_path == "/") return fmt::format("{}: root attribute \"{}\"", file.name(), name);
  return fmt::format("{}: {}: attribute \"{}\"", file.name(), object_path, name);
}

ElementType element_type_of(hid_t type) {
  ElementType element;
  element.size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      element.type_class = H5Tget_sign(type) == H5T_SGN_NONE ? TypeClass::kUnsignedInteger : TypeClass::kSignedInteger;
      break;
    case H5T_FLOAT:
      element.type_class = TypeClass::kFloat;
      break;
    case H5T_STRING:
      element.type_class = TypeClass::kString;
      break;
    default:
      element.type_class = TypeClass::kOther;
      break;
  }
  return element;
}

/// An open single-valued attribute with its stored type.
struct OpenAttribute {
  Attribute attribute;
  Datatype type;
  ElementType element;
};

std::optional<OpenAttribute> open_attribute(const File& file, const std::string& object_path, const std::string& name) {
  if (!exists(file, object_path))
    fail(ExitCode::kInvalidInput, "{}: {}: group not found (looking for its attribute \"{}\")", file.name(),
         object_path, name);
  {
    const Object object(H5Oopen(file.id(), object_path.c_str(), H5P_DEFAULT));
    if (object.valid()) require_in_file(file, object.id(), object_path);
  }
  if (!has_attribute(file, object_path, name)) return std::nullopt;
  OpenAttribute open;
  open.attribute = Attribute(H5Aopen_by_name(file.id(), object_path.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  if (!open.attribute.valid())
    fail(ExitCode::kInvalidInput, "{} cannot be opened", attribute_where(file, object_path, name));
  open.type = Datatype(H5Aget_type(open.attribute.id()));
  const Dataspace space(H5Aget_space(open.attribute.id()));
  if (!open.type.valid() || !space.valid())
    fail(ExitCode::kInvalidInput, "{} cannot be read", attribute_where(file, object_path, name));
  const hssize_t count = H5Sget_simple_extent_npoints(space.id());
  if (count != 1)
    fail(ExitCode::kInvalidInput, "{} holds {} values, expected a single value",
         attribute_where(file, object_path, name), count);
  open.element = element_type_of(open.type.id());
  return open;
}

[[noreturn]] void fail_attribute_read(const File& file, const std::string& object_path, const std::string& name) {
  fail(ExitCode::kInvalidInput, "{} cannot be read (damaged file?)", attribute_where(file, object_path, name));
}

/// File access properties: keep HDF5's file locking, but carry on where the file system has no locks
/// (Lustre and NFS mounts of GPU clusters) instead of failing to open every file there.
PropertyList file_access_properties() {
  PropertyList properties(H5Pcreate(H5P_FILE_ACCESS));
#if H5_VERSION_GE(1, 10, 7)
  H5Pset_file_locking(properties.id(), true, true);
#endif
  return properties;
}

}  // namespace

void silence_library_errors() {
  // Called on every open: in thread-safe HDF5 builds the setting is per thread.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

File File::open(const std::string& path, Mode mode, const std::string& display_name) {
  silence_library_errors();
  const std::string& name = display_name.empty() ? path : display_name;
  const InputPathKind kind = input_path_kind(path);
  if (kind == InputPathKind::kMissing) fail(ExitCode::kInvalidInput, "{}: file not found", name);
  if (kind == InputPathKind::kDirectory)
    fail(ExitCode::kInvalidInput, "{}: is a directory, expected an HDF5 file", name);
  // Before any open: opening a FIFO for reading waits for a writer, for ever.
  if (kind == InputPathKind::kOther)
    fail(ExitCode::kInvalidInput, "{}: is not a regular file (a FIFO, device or socket), expected an HDF5 file", name);
  if (!std::ifstream(path, std::ios::binary))
    fail(ExitCode::kInvalidInput, "{}: cannot read the file (permission denied?)", name);
  if (H5Fis_hdf5(path.c_str()) <= 0) fail(ExitCode::kInvalidInput, "{}: not an HDF5 file", name);
  const PropertyList access = file_access_properties();
  // HDF5's default driver, named: its handle is the descriptor that every read of this file goes through.
  H5Pset_fapl_sec2(access.id());
  const hid_t id = H5Fopen(path.c_str(), mode == Mode::kReadOnly ? H5F_ACC_RDONLY : H5F_ACC_RDWR, access.id());
  if (id < 0)
    fail(ExitCode::kInvalidInput, "{}: HDF5 cannot open the file (damaged, or locked by another program?)", name);
  File file(id, name);
  // An input the ranks agreed on must be the very file they agreed on (util/input_identity.hpp). Compared through
  // the descriptor HDF5 reads, not by the path again, so a replacement after this point changes nothing read here.
  // Reads only: an open for writing may itself mark the file (superblock flags), and no input is opened so.
  if (mode == Mode::kReadOnly) {
    void* handle = nullptr;
    const bool has_descriptor = H5Fget_vfd_handle(id, access.id(), &handle) >= 0 && handle != nullptr;
    require_pinned_input(path, has_descriptor ? *static_cast<const int*>(handle) : -1, name);
  }
  return file;
}

File File::create(const std::string& path, const std::string& display_name) {
  silence_library_errors();
  const std::string name = display_name.empty() ? path : display_name;
  const PropertyList access = file_access_properties();
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.id());
  if (id < 0) fail(ExitCode::kRuntime, "{}: cannot create the file {}", name, path);
  return File(id, name);
}

void File::close() {
  if (!handle_.valid()) return;
  errno = 0;
  const bool flushed = H5Fflush(handle_.id(), H5F_SCOPE_LOCAL) >= 0;
  const int flush_error = errno;
  const bool closed = handle_.reset();
  if (!flushed || !closed)
    fail(ExitCode::kRuntime, "{}: writing the file failed: {}", name_,
         write_failure_reason(flushed ? errno : flush_error));
}

std::string ElementType::name() const {
  switch (type_class) {
    case TypeClass::kSignedInteger:
      return fmt::format("int{}", 8 * size);
    case TypeClass::kUnsignedInteger:
      return fmt::format("uint{}", 8 * size);
    case TypeClass::kFloat:
      return fmt::format("float{}", 8 * size);
    case TypeClass::kString:
      return "string";
    case TypeClass::kOther:
      break;
  }
  return "a non-numeric type";
}

std::int64_t DatasetInfo::element_count() const {
  std::int64_t count = 1;
  for (const std::int64_t extent : shape) count *= extent;
  return count;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += shape[i] == kAnyExtent ? std::string("*") : std::to_string(shape[i]);
  }
  return text + "]";
}

bool exists(const File& file, const std::string& path) {
  if (path.empty() || path == "/") return true;
  // H5Lexists fails (instead of returning false) when a parent is missing, so walk the path.
  // Each link is checked before the next step follows it, so no external file is ever opened.
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (H5Lexists(file.id(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    require_internal_link(file, prefix);
    if (slash == std::string::npos) break;
  }
  return H5Oexists_by_name(file.id(), path.c_str(), H5P_DEFAULT) > 0;
}

DatasetInfo describe_dataset(const File& file, const std::string& path) {
  if (!exists(file, path)) fail(ExitCode::kInvalidInput, "{}: {}: dataset not found", file.name(), path);
  {
    const Object object(H5Oopen(file.id(), path.c_str(), H5P_DEFAULT));
    if (!object.valid() || H5Iget_type(object.id()) != H5I_DATASET)
      fail(ExitCode::kInvalidInput, "{}: {}: is not a dataset", file.name(), path);
    require_in_file(file, object.id(), path);
  }
  const Dataset dataset(H5Dopen2(file.id(), path.c_str(), H5P_DEFAULT));
  if (dataset.valid()) require_internal_storage(file, dataset.id(), path);
  const Datatype type(H5Dget_type(dataset.id()));
  const Dataspace space(H5Dget_space(dataset.id()));
  if (!dataset.valid() || !type.valid() || !space.valid())
    fail(ExitCode::kInvalidInput, "{}: {}: cannot read the dataset's type and shape", file.name(), path);
  DatasetInfo info;
  info.file = file.name();
  info.path = path;
  info.type = element_type_of(type.id());
  if (H5Sget_simple_extent_type(space.id()) == H5S_NULL)
    fail(ExitCode::kInvalidInput, "{}: {}: has no dataspace (null dataset)", file.name(), path);
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (rank < 0) fail(ExitCode::kInvalidInput, "{}: {}: cannot read the dataset's shape", file.name(), path);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  info.shape.assign(dims.begin(), dims.end());
  return info;
}

void require_type(const DatasetInfo& info, std::initializer_list<ElementType> accepted) {
  std::string expected;
  for (const ElementType& type : accepted) {
    if (type == info.type) return;
    if (!expected.empty()) expected += " or ";
    expected += type.name();
  }
  fail(ExitCode::kInvalidInput, "{}: {}: has type {}, expected {}", info.file, info.path, info.type.name(), expected);
}

void require_shape(const DatasetInfo& info, const std::vector<std::int64_t>& expected, std::string_view meaning) {
  bool matches = info.shape.size() == expected.size();
  for (std::size_t i = 0; matches && i < expected.size(); ++i)
    matches = expected[i] == kAnyExtent || expected[i] == info.shape[i];
  if (!matches)
    fail(ExitCode::kInvalidInput, "{}: {}: shape {}, expected {}{}{}{}", info.file, info.path, shape_text(info.shape),
         shape_text(expected), meaning.empty() ? "" : " (", meaning, meaning.empty() ? "" : ")");
}

void require_readable(const File& file, const DatasetInfo& info, double memory_bytes) {
  const std::int64_t count = info.element_count();
  if (count == 0) return;
  const Dataset dataset(H5Dopen2(file.id(), info.path.c_str(), H5P_DEFAULT));
  const PropertyList creation(dataset.valid() ? H5Dget_create_plist(dataset.id()) : H5I_INVALID_HID);
  if (!dataset.valid() || !creation.valid())
    fail(ExitCode::kInvalidInput, "{}: {}: cannot open the dataset (damaged file?)", info.file, info.path);
  require_internal_storage(file, dataset.id(), info.path);
  const double declared = static_cast<double>(count) * static_cast<double>(info.type.size);
  const double stored = static_cast<double>(H5Dget_storage_size(dataset.id()));
  const std::string declares = fmt::format("{}: {}: declares {} values of {} ({})", info.file, info.path,
                                           shape_text(info.shape), info.type.name(), format_bytes(declared));
  const H5D_layout_t layout = H5Pget_layout(creation.id());
  if (layout == H5D_CONTIGUOUS) {
    if (stored < declared)
      fail(ExitCode::kInvalidInput, "{}, but the file stores {} of them (never written, or the file is damaged)",
           declares, format_bytes(stored));
    hsize_t file_size = 0;
    const haddr_t offset = H5Dget_offset(dataset.id());
    if (H5Fget_filesize(file.id(), &file_size) >= 0 && offset != HADDR_UNDEF &&
        static_cast<double>(offset) + declared > static_cast<double>(file_size))
      fail(ExitCode::kInvalidInput, "{}, stored past the end of the {} file (truncated?)", declares,
           format_bytes(static_cast<double>(file_size)));
  } else if (layout == H5D_CHUNKED) {
    const int rank = static_cast<int>(info.shape.size());
    std::vector<hsize_t> chunk(static_cast<std::size_t>(rank));
    if (H5Pget_chunk(creation.id(), rank, chunk.data()) != rank)
      fail(ExitCode::kInvalidInput, "{}: {}: cannot read the chunk shape (damaged file?)", info.file, info.path);
    double chunks = 1.0;
    for (int i = 0; i < rank; ++i)
      chunks *= std::ceil(static_cast<double>(info.shape[i]) / static_cast<double>(std::max<hsize_t>(chunk[i], 1)));
    hsize_t written = 0;
    const Dataspace space(H5Dget_space(dataset.id()));
    // With no chunk written yet there is no chunk index, and HDF5 cannot count: none is stored.
    if (stored > 0 && (!space.valid() || H5Dget_num_chunks(dataset.id(), space.id(), &written) < 0))
      fail(ExitCode::kInvalidInput, "{}: {}: cannot count the stored chunks (damaged file?)", info.file, info.path);
    if (static_cast<double>(written) < chunks)
      fail(ExitCode::kInvalidInput, "{}, but only {} of its {:.0f} chunks are stored (the rest was never written)",
           declares, written, chunks);
    bool deflate_only = H5Pget_nfilters(creation.id()) > 0;
    for (int i = 0; i < H5Pget_nfilters(creation.id()); ++i) {
      unsigned flags = 0;
      std::size_t n_values = 0;
      const H5Z_filter_t filter =
          H5Pget_filter2(creation.id(), static_cast<unsigned>(i), &flags, &n_values, nullptr, 0, nullptr, nullptr);
      deflate_only = deflate_only &&
                     (filter == H5Z_FILTER_DEFLATE || filter == H5Z_FILTER_SHUFFLE || filter == H5Z_FILTER_FLETCHER32);
    }
    if (deflate_only && declared > kMaxDeflateRatio * stored)
      fail(ExitCode::kInvalidInput,
           "{} in {} of deflate-compressed chunks: more than deflate can expand (damaged file?)", declares,
           format_bytes(stored));
  }
  require_memory(memory_bytes, fmt::format("{}: {}: reading {} values", info.file, info.path, shape_text(info.shape)));
}

void read_raw(const File& file, const DatasetInfo& info, hid_t memory_type, void* buffer) {
  if (info.element_count() == 0) return;
  require_readable(file, info, 0.0);
  const Dataset dataset(H5Dopen2(file.id(), info.path.c_str(), H5P_DEFAULT));
  if (!dataset.valid() || H5Dread(dataset.id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer) < 0)
    fail(ExitCode::kInvalidInput, "{}: {}: cannot read the dataset (damaged file?)", info.file, info.path);
}

std::vector<RowRange> row_ranges(const std::vector<std::int64_t>& ascending_rows) {
  std::vector<RowRange> ranges;
  for (const std::int64_t row : ascending_rows) {
    if (!ranges.empty() && ranges.back().end == row)
      ++ranges.back().end;
    else
      ranges.push_back({row, row + 1});
  }
  return ranges;
}

std::int64_t row_in_file(const std::vector<RowRange>& rows, std::int64_t k) {
  for (const RowRange& range : rows) {
    if (k < range.end - range.begin) return range.begin + k;
    k -= range.end - range.begin;
  }
  return -1;
}

namespace {

/// Ranges per HDF5 call: a union of hyperslabs grows with each range added, so long lists go in batches.
constexpr std::size_t kRangesPerSelection = 4096;

/// Runs transfer(file_space, memory_space, first_element) over rows in batches of hyperslab unions.
template <class Transfer>
bool transfer_rows(hid_t dataset, const std::vector<RowRange>& rows, std::int64_t row_width, Transfer&& transfer) {
  const Dataspace file_space(H5Dget_space(dataset));
  if (!file_space.valid()) return false;
  const int rank = H5Sget_simple_extent_ndims(file_space.id());
  if (rank < 1) return false;
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(file_space.id(), dims.data(), nullptr);
  std::int64_t done = 0;
  for (std::size_t first = 0; first < rows.size(); first += kRangesPerSelection) {
    const std::size_t last = std::min(rows.size(), first + kRangesPerSelection);
    H5Sselect_none(file_space.id());
    std::int64_t batch_rows = 0;
    for (std::size_t k = first; k < last; ++k) {
      if (rows[k].end == rows[k].begin) continue;
      std::vector<hsize_t> start(dims.size(), 0), count(dims);
      start[0] = static_cast<hsize_t>(rows[k].begin);
      count[0] = static_cast<hsize_t>(rows[k].end - rows[k].begin);
      if (H5Sselect_hyperslab(file_space.id(), H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr) < 0)
        return false;
      batch_rows += rows[k].end - rows[k].begin;
    }
    if (batch_rows == 0) continue;
    const hsize_t elements = static_cast<hsize_t>(batch_rows * row_width);
    const Dataspace memory_space(H5Screate_simple(1, &elements, nullptr));
    if (!memory_space.valid() || !transfer(file_space.id(), memory_space.id(), done * row_width)) return false;
    done += batch_rows;
  }
  return true;
}

}  // namespace

void read_rows_raw(const File& file, const DatasetInfo& info, const std::vector<RowRange>& rows, hid_t memory_type,
                   void* buffer) {
  if (info.shape.empty()) fail(ExitCode::kInvalidInput, "{}: {}: a scalar has no rows", info.file, info.path);
  std::int64_t row_width = 1;
  for (std::size_t k = 1; k < info.shape.size(); ++k) row_width *= info.shape[k];
  std::int64_t previous_end = 0;
  for (const RowRange& range : rows)
    if (range.begin < previous_end || range.end < range.begin || range.end > info.shape[0])
      fail(ExitCode::kInvalidInput, "{}: {}: rows [{}, {}) lie outside the dataset's {} rows (or out of order)",
           info.file, info.path, range.begin, range.end, info.shape[0]);
    else
      previous_end = range.end;
  require_readable(file, info, 0.0);
  const Dataset dataset(H5Dopen2(file.id(), info.path.c_str(), H5P_DEFAULT));
  const std::size_t element_bytes = H5Tget_size(memory_type);
  const bool read =
      dataset.valid() &&
      transfer_rows(dataset.id(), rows, row_width, [&](hid_t file_space, hid_t memory_space, std::int64_t first) {
        return H5Dread(dataset.id(), memory_type, memory_space, file_space, H5P_DEFAULT,
                       static_cast<char*>(buffer) + first * element_bytes) >= 0;
      });
  if (!read)
    fail(ExitCode::kInvalidInput, "{}: {}: cannot read the selected rows (damaged file?)", info.file, info.path);
}

void create_dataset(const File& file, const std::string& path, hid_t file_type,
                    const std::vector<std::int64_t>& shape) {
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  const Dataspace space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  PropertyList link_properties(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(link_properties.id(), 1);
  // Allocated at creation, so that every process writing rows later finds the whole extent in the file.
  PropertyList create_properties(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_alloc_time(create_properties.id(), H5D_ALLOC_TIME_EARLY);
  const Dataset dataset(H5Dcreate2(file.id(), path.c_str(), file_type, space.id(), link_properties.id(),
                                   create_properties.id(), H5P_DEFAULT));
  if (!space.valid() || !dataset.valid())
    fail(ExitCode::kRuntime, "{}: {}: cannot create the dataset {}", file.name(), path, shape_text(shape));
}

void write_rows_raw(const File& file, const std::string& path, const std::vector<RowRange>& rows, hid_t memory_type,
                    const void* data) {
  Dataset dataset(H5Dopen2(file.id(), path.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) fail(ExitCode::kRuntime, "{}: {}: cannot open the dataset to write rows", file.name(), path);
  const Dataspace space(H5Dget_space(dataset.id()));
  const int rank = H5Sget_simple_extent_ndims(space.id());
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 1)), 0);
  H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  std::int64_t row_width = 1;
  for (std::size_t k = 1; k < dims.size(); ++k) row_width *= static_cast<std::int64_t>(dims[k]);
  const std::size_t element_bytes = H5Tget_size(memory_type);
  errno = 0;
  const bool written =
      transfer_rows(dataset.id(), rows, row_width, [&](hid_t file_space, hid_t memory_space, std::int64_t first) {
        return H5Dwrite(dataset.id(), memory_type, memory_space, file_space, H5P_DEFAULT,
                        static_cast<const char*>(data) + first * element_bytes) >= 0;
      });
  const int write_error = errno;
  if (!dataset.reset() || !written)
    fail(ExitCode::kRuntime, "{}: {}: writing rows failed: {}", file.name(), path,
         write_failure_reason(written ? errno : write_error));
}

void write_raw(const File& file, const std::string& path, hid_t file_type, hid_t memory_type, const void* data,
               std::size_t count, const std::vector<std::int64_t>& shape) {
  std::int64_t shape_count = 1;
  for (const std::int64_t extent : shape) shape_count *= extent;
  if (shape_count < 0 || static_cast<std::size_t>(shape_count) != count)
    fail(ExitCode::kRuntime, "{}: {}: {} values do not fill the shape {}", file.name(), path, count, shape_text(shape));
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  const Dataspace space(shape.empty() ? H5Screate(H5S_SCALAR)
                                      : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  PropertyList link_properties(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(link_properties.id(), 1);
  Dataset dataset(
      H5Dcreate2(file.id(), path.c_str(), file_type, space.id(), link_properties.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!space.valid() || !dataset.valid())
    fail(ExitCode::kRuntime, "{}: {}: cannot create the dataset {}", file.name(), path, shape_text(shape));
  // HDF5 may hold the values in its sieve buffer until the dataset closes: a full disk shows there.
  errno = 0;
  const bool written = count == 0 || H5Dwrite(dataset.id(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0;
  const int write_error = errno;
  if (!dataset.reset() || !written)
    fail(ExitCode::kRuntime, "{}: {}: writing the dataset failed: {}", file.name(), path,
         write_failure_reason(written ? errno : write_error));
}

void create_group(const File& file, const std::string& path) {
  if (exists(file, path)) return;
  PropertyList link_properties(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(link_properties.id(), 1);
  const Group group(H5Gcreate2(file.id(), path.c_str(), link_properties.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!group.valid()) fail(ExitCode::kRuntime, "{}: {}: cannot create the group", file.name(), path);
}

void remove(const File& file, const std::string& path) {
  if (H5Ldelete(file.id(), path.c_str(), H5P_DEFAULT) < 0)
    fail(ExitCode::kRuntime, "{}: {}: cannot remove the object", file.name(), path);
}

bool has_attribute(const File& file, const std::string& object_path, const std::string& name) {
  return H5Aexists_by_name(file.id(), object_path.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

void remove_attribute(const File& file, const std::string& object_path, const std::string& name) {
  if (has_attribute(file, object_path, name) &&
      H5Adelete_by_name(file.id(), object_path.c_str(), name.c_str(), H5P_DEFAULT) < 0)
    fail(ExitCode::kRuntime, "{} cannot be removed", attribute_where(file, object_path, name));
}

void write_attribute(const File& file, const std::string& object_path, const std::string& name,
                     const std::string& value) {
  remove_attribute(file, object_path, name);
  // Variable-length UTF-8, what h5py writes for a Python str (and reads back as str).
  const Datatype type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.id(), H5T_VARIABLE);
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  const Dataspace space(H5Screate(H5S_SCALAR));
  const Attribute attribute(H5Acreate_by_name(file.id(), object_path.c_str(), name.c_str(), type.id(), space.id(),
                                              H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const char* text = value.c_str();
  if (!attribute.valid() || H5Awrite(attribute.id(), type.id(), &text) < 0)
    fail(ExitCode::kRuntime, "{} cannot be written", attribute_where(file, object_path, name));
}

void write_attribute(const File& file, const std::string& object_path, const std::string& name, const char* value) {
  write_attribute(file, object_path, name, std::string(value));
}

void write_attribute_raw(const File& file, const std::string& object_path, const std::string& name, hid_t file_type,
                         hid_t memory_type, const void* value) {
  remove_attribute(file, object_path, name);
  const Dataspace space(H5Screate(H5S_SCALAR));
  const Attribute attribute(H5Acreate_by_name(file.id(), object_path.c_str(), name.c_str(), file_type, space.id(),
                                              H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute.valid() || H5Awrite(attribute.id(), memory_type, value) < 0)
    fail(ExitCode::kRuntime, "{} cannot be written", attribute_where(file, object_path, name));
}

std::optional<std::string> read_string_attribute(const File& file, const std::string& object_path,
                                                 const std::string& name) {
  std::optional<OpenAttribute> open = open_attribute(file, object_path, name);
  if (!open) return std::nullopt;
  if (open->element.type_class != TypeClass::kString)
    fail(ExitCode::kInvalidInput, "{} has type {}, expected a string", attribute_where(file, object_path, name),
         open->element.name());
  std::string value;
  if (H5Tis_variable_str(open->type.id()) > 0) {
    const Datatype memory_type(H5Tcopy(H5T_C_S1));
    H5Tset_size(memory_type.id(), H5T_VARIABLE);
    H5Tset_cset(memory_type.id(), H5Tget_cset(open->type.id()));
    char* text = nullptr;
    if (H5Aread(open->attribute.id(), memory_type.id(), &text) < 0) fail_attribute_read(file, object_path, name);
    if (text) value = text;
    H5free_memory(text);
  } else {
    // Fixed length: read with the stored type, then drop the null or space padding.
    std::string buffer(open->element.size, '\0');
    if (H5Aread(open->attribute.id(), open->type.id(), buffer.data()) < 0) fail_attribute_read(file, object_path, name);
    value = buffer.substr(0, buffer.find('\0'));
    value.erase(value.find_last_not_of(' ') + 1);
  }
  return value;
}

std::optional<std::int64_t> read_integer_attribute(const File& file, const std::string& object_path,
                                                   const std::string& name) {
  std::optional<OpenAttribute> open = open_attribute(file, object_path, name);
  if (!open) return std::nullopt;
  const TypeClass type_class = open->element.type_class;
  if (type_class != TypeClass::kSignedInteger && type_class != TypeClass::kUnsignedInteger)
    fail(ExitCode::kInvalidInput, "{} has type {}, expected an integer", attribute_where(file, object_path, name),
         open->element.name());
  if (type_class == TypeClass::kUnsignedInteger) {  // read as stored: HDF5 would clip one past int64 to its largest
    std::uint64_t stored = 0;
    if (H5Aread(open->attribute.id(), H5T_NATIVE_UINT64, &stored) < 0) fail_attribute_read(file, object_path, name);
    if (stored > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(ExitCode::kInvalidInput, "{} is {}, too large (at most {})", attribute_where(file, object_path, name),
           stored, std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(stored);
  }
  std::int64_t value = 0;
  if (H5Aread(open->attribute.id(), H5T_NATIVE_INT64, &value) < 0) fail_attribute_read(file, object_path, name);
  return value;
}

std::optional<double> read_number_attribute(const File& file, const std::string& object_path, const std::string& name) {
  std::optional<OpenAttribute> open = open_attribute(file, object_path, name);
  if (!open) return std::nullopt;
  const TypeClass type_class = open->element.type_class;
  if (type_class != TypeClass::kFloat && type_class != TypeClass::kSignedInteger &&
      type_class != TypeClass::kUnsignedInteger)
    fail(ExitCode::kInvalidInput, "{} has type {}, expected a number", attribute_where(file, object_path, name),
         open->element.name());
  double value = 0.0;
  if (H5Aread(open->attribute.id(), H5T_NATIVE_DOUBLE, &value) < 0) fail_attribute_read(file, object_path, name);
  return value;
}

void write_format(const File& file, std::string_view format, std::int32_t version) {
  write_attribute(file, "/", "format", std::string(format));
  write_attribute(file, "/", "version", version);
}

std::optional<std::string> read_format(const File& file) { return read_string_attribute(file, "/", "format"); }

void require_format(const File& file, std::string_view expected_format, std::int64_t expected_version) {
  require_format(file, expected_format, expected_version, expected_version);
}

std::int64_t require_format(const File& file, std::string_view expected_format, std::int64_t oldest_version,
                            std::int64_t newest_version) {
  const std::optional<std::string> format = read_format(file);
  if (!format)
    fail(ExitCode::kInvalidInput, "{}: root attribute \"format\" is missing: not a fluxjac file (expected \"{}\")",
         file.name(), expected_format);
  if (*format != expected_format)
    fail(ExitCode::kInvalidInput, "{}: root attribute \"format\" is \"{}\", expected \"{}\"", file.name(),
         quoted_file_text(*format), expected_format);
  const std::optional<std::int64_t> version = read_integer_attribute(file, "/", "version");
  if (!version)
    fail(ExitCode::kInvalidInput, "{}: root attribute \"version\" is missing (expected {})", file.name(),
         newest_version);
  if (*version < oldest_version || *version > newest_version) {
    if (oldest_version == newest_version)
      fail(ExitCode::kInvalidInput, "{}: root attribute \"version\" is {}: this fluxjac reads {} version {} only",
           file.name(), *version, expected_format, newest_version);
    fail(ExitCode::kInvalidInput, "{}: root attribute \"version\" is {}: this fluxjac reads {} versions {} to {}",
         file.name(), *version, expected_format, oldest_version, newest_version);
  }
  return *version;
}

}  // namespace fluxjac::h5
