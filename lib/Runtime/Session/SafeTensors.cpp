//===- SafeTensors.cpp - Reader and writer of the safetensors format ------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "SafeTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace msamp::session {

using json = nlohmann::json;

namespace {

/// The reference implementation's limit (safetensors/src/tensor.rs,
/// MAX_HEADER_SIZE): a larger header is refused rather than parsed.
constexpr uint64_t kMaxHeaderSize = 100'000'000;

uint64_t readLE64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

void writeLE64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

/// A JSON value that is a non-negative integer fitting in int64.
bool asCount(const json &v, uint64_t &out) {
  if (!v.is_number_unsigned())
    return false;
  out = v.get<uint64_t>();
  return out <= static_cast<uint64_t>(INT64_MAX);
}

} // namespace

SafeTensorsReader::~SafeTensorsReader() {
  if (mapping_)
    munmap(mapping_, mappingSize_);
}

const SafeTensor *SafeTensorsReader::find(const std::string &name) const {
  for (const SafeTensor &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

Error SafeTensorsReader::open(const std::string &path,
                              std::unique_ptr<SafeTensorsReader> &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error(MSAMP_ERROR_IO,
                 "cannot open '" + path + "': " + systemError(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error(MSAMP_ERROR_IO,
                 "cannot read '" + path + "': " + systemError(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error(
        MSAMP_ERROR_IO,
        "cannot read '" + path + "': " +
            (S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file"));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    return Error(MSAMP_ERROR_FORMAT,
                 path + ": not a safetensors file: " + std::to_string(size) +
                     " bytes, fewer than the 8-byte header length");
  }
  void *mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (mapping == MAP_FAILED)
    return Error(MSAMP_ERROR_IO,
                 "cannot map '" + path + "': " + systemError(err));
  std::unique_ptr<SafeTensorsReader> reader(new SafeTensorsReader());
  reader->path_ = path;
  reader->mapping_ = mapping;
  reader->mappingSize_ = size;
  if (Error e = reader->validate(static_cast<const uint8_t *>(mapping), size))
    return e;
  out = std::move(reader);
  return Error::success();
}

Error SafeTensorsReader::parse(const void *bytes, size_t size,
                               const std::string &source,
                               std::unique_ptr<SafeTensorsReader> &out) {
  std::unique_ptr<SafeTensorsReader> reader(new SafeTensorsReader());
  reader->path_ = source;
  const auto *begin = static_cast<const uint8_t *>(bytes);
  reader->owned_.assign(begin, begin + size);
  if (size < 8)
    return Error(MSAMP_ERROR_FORMAT,
                 source + ": not a safetensors file: " + std::to_string(size) +
                     " bytes, fewer than the 8-byte header length");
  if (Error e = reader->validate(reader->owned_.data(), size))
    return e;
  out = std::move(reader);
  return Error::success();
}

Error SafeTensorsReader::validate(const uint8_t *bytes, size_t size) {
  auto fail = [&](const std::string &what) {
    return Error(MSAMP_ERROR_FORMAT, path_ + ": " + what);
  };
  const uint64_t headerSize = readLE64(bytes);
  if (headerSize > kMaxHeaderSize)
    return fail("header length " + std::to_string(headerSize) +
                " exceeds the format's limit of " +
                std::to_string(kMaxHeaderSize) + " bytes");
  if (headerSize > size - 8)
    return fail("header length " + std::to_string(headerSize) +
                " runs past the end of the file (" + std::to_string(size) +
                " bytes)");
  const char *headerBegin = reinterpret_cast<const char *>(bytes + 8);
  if (headerSize == 0 || headerBegin[0] != '{')
    return fail("the header is not a JSON object");
  json header;
  try {
    header = json::parse(headerBegin, headerBegin + headerSize);
  } catch (const json::exception &e) {
    return fail(std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object())
    return fail("the header is not a JSON object");

  const uint8_t *dataBegin = bytes + 8 + headerSize;
  const uint64_t dataSize = size - 8 - headerSize;
  struct Span {
    uint64_t begin, end;
    size_t tensor;
  };
  std::vector<Span> spans;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string &name = it.key();
    const json &entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("__metadata__ is not a JSON object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string())
          return fail("__metadata__ value '" + m.key() + "' is not a string");
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    auto tensorFail = [&](const std::string &what) {
      return fail("tensor '" + name + "': " + what);
    };
    if (!entry.is_object())
      return tensorFail("entry is not a JSON object");
    auto dtypeIt = entry.find("dtype");
    if (dtypeIt == entry.end() || !dtypeIt->is_string())
      return tensorFail("missing string \"dtype\"");
    std::string dtypeName = dtypeIt->get<std::string>();
    std::optional<ElementType> dtype = parseSafetensorsType(dtypeName);
    if (!dtype)
      return tensorFail("unknown dtype '" + dtypeName + "'");
    auto shapeIt = entry.find("shape");
    if (shapeIt == entry.end() || !shapeIt->is_array())
      return tensorFail("missing array \"shape\"");
    SafeTensor tensor;
    tensor.name = name;
    tensor.dtype = *dtype;
    uint64_t numel = 1;
    for (const json &dim : *shapeIt) {
      uint64_t d;
      if (!asCount(dim, d))
        return tensorFail("shape " + shapeIt->dump() +
                          " has an entry that is not a non-negative integer");
      if (d != 0 && numel > static_cast<uint64_t>(INT64_MAX) / d)
        return tensorFail("shape " + shapeIt->dump() + " is too large");
      numel *= d;
      tensor.shape.push_back(static_cast<int64_t>(d));
    }
    auto offsetsIt = entry.find("data_offsets");
    uint64_t begin, end;
    if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
        offsetsIt->size() != 2 || !asCount((*offsetsIt)[0], begin) ||
        !asCount((*offsetsIt)[1], end))
      return tensorFail("\"data_offsets\" must be [BEGIN, END] with "
                        "non-negative integers");
    if (begin > end)
      return tensorFail("data_offsets " + offsetsIt->dump() +
                        " end before they begin");
    const uint64_t elemSize = static_cast<uint64_t>(elementSize(*dtype));
    if (numel > static_cast<uint64_t>(INT64_MAX) / elemSize)
      return tensorFail("shape " + shapeIt->dump() + " is too large");
    if (end - begin != numel * elemSize)
      return tensorFail("data_offsets " + offsetsIt->dump() + " hold " +
                        std::to_string(end - begin) + " bytes, but shape " +
                        shapeToString(tensor.shape) + " of " + dtypeName +
                        " needs " + std::to_string(numel * elemSize));
    if (end > dataSize)
      return tensorFail("data_offsets " + offsetsIt->dump() +
                        " run past the end of the data (" +
                        std::to_string(dataSize) + " bytes)");
    tensor.numElements = static_cast<int64_t>(numel);
    tensor.data = dataBegin + begin;
    tensor.numBytes = static_cast<size_t>(end - begin);
    spans.push_back({begin, end, tensors_.size()});
    tensors_.push_back(std::move(tensor));
  }

  // The tensors must tile the buffer: a hole or an overlap means a corrupt
  // (or crafted) file, as in the reference implementation.
  // std::sort with a total order (std::stable_sort trips a deprecation
  // warning in libstdc++ 12 under clang 22).
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    if (a.begin != b.begin)
      return a.begin < b.begin;
    return a.end != b.end ? a.end < b.end : a.tensor < b.tensor;
  });
  uint64_t covered = 0;
  for (const Span &span : spans) {
    if (span.begin < covered)
      return fail("tensor '" + tensors_[span.tensor].name +
                  "' overlaps the tensor before it in the data");
    if (span.begin > covered)
      return fail("bytes " + std::to_string(covered) + ".." +
                  std::to_string(span.begin) +
                  " of the data belong to no tensor");
    covered = span.end;
  }
  if (covered != dataSize)
    return fail("bytes " + std::to_string(covered) + ".." +
                std::to_string(dataSize) + " of the data belong to no tensor");

  std::vector<SafeTensor> ordered;
  ordered.reserve(spans.size());
  for (const Span &span : spans)
    ordered.push_back(std::move(tensors_[span.tensor]));
  tensors_ = std::move(ordered);
  return Error::success();
}

Error serializeSafeTensors(const std::vector<TensorToWrite> &tensors,
                           const std::map<std::string, std::string> &metadata,
                           std::vector<uint8_t> &image) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    int64_t sa = elementSize(tensors[a].dtype),
            sb = elementSize(tensors[b].dtype);
    if (sa != sb)
      return sa > sb;
    return tensors[a].name != tensors[b].name
               ? tensors[a].name < tensors[b].name
               : a < b;
  });

  json header = json::object();
  uint64_t offset = 0;
  for (size_t i : order) {
    const TensorToWrite &t = tensors[i];
    if (t.name == "__metadata__" || t.name.empty())
      return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                   "'" + t.name + "' cannot name a tensor");
    if (header.contains(t.name))
      return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                   "tensor '" + t.name + "' appears twice");
    uint64_t numel = 1;
    for (int64_t d : t.shape) {
      if (d < 0)
        return Error(MSAMP_ERROR_INVALID_ARGUMENT, "tensor '" + t.name +
                                                       "' has shape " +
                                                       shapeToString(t.shape));
      numel *= static_cast<uint64_t>(d);
    }
    if (numel * elementSize(t.dtype) != t.numBytes)
      return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                   "tensor '" + t.name + "': " + std::to_string(t.numBytes) +
                       " bytes for shape " + shapeToString(t.shape) + " of " +
                       safetensorsName(t.dtype));
    header[t.name] = {{"dtype", safetensorsName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.numBytes}}};
    offset += t.numBytes;
  }
  if (!metadata.empty())
    header["__metadata__"] = metadata;

  std::string text = header.dump();
  // Pad with spaces so that the data starts at a multiple of 8.
  text.append((8 - text.size() % 8) % 8, ' ');
  image.assign(8 + text.size() + offset, 0);
  writeLE64(image.data(), text.size());
  std::memcpy(image.data() + 8, text.data(), text.size());
  uint8_t *data = image.data() + 8 + text.size();
  uint64_t at = 0;
  for (size_t i : order) {
    if (tensors[i].numBytes)
      std::memcpy(data + at, tensors[i].data, tensors[i].numBytes);
    at += tensors[i].numBytes;
  }
  return Error::success();
}

Error writeSafeTensors(const std::string &path,
                       const std::vector<TensorToWrite> &tensors,
                       const std::map<std::string, std::string> &metadata) {
  std::vector<uint8_t> image;
  if (Error e = serializeSafeTensors(tensors, metadata, image))
    return e.withContext(path);
  return writeFileAtomically(path, image.data(), image.size());
}

Error writeFileAtomically(const std::string &path, const void *bytes,
                          size_t size) {
  const std::string tmp = path + ".tmp";
  auto fail = [&](const std::string &what, int err) {
    ::unlink(tmp.c_str());
    return Error(MSAMP_ERROR_IO, "cannot write '" + path + "': " + what +
                                     (err ? ": " + systemError(err) : ""));
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    // Do not unlink: whatever is at `tmp` is not ours.
    return Error(MSAMP_ERROR_IO, "cannot write '" + path +
                                     "': cannot create '" + tmp +
                                     "': " + systemError(err));
  }
  const auto *p = static_cast<const uint8_t *>(bytes);
  size_t left = size;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return fail("writing '" + tmp + "'", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return fail("fsync of '" + tmp + "'", err);
  }
  if (::close(fd) != 0)
    return fail("closing '" + tmp + "'", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail("renaming '" + tmp + "'", errno);
  // Make the rename itself durable. Some file systems refuse fsync on a
  // directory (EINVAL); the data is written either way.
  std::string dir = ".";
  if (size_t slash = path.find_last_of('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Error::success();
}

} // namespace msamp::session
