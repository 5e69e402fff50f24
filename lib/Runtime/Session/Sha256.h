//===- Sha256.h - SHA-256 for graph hashes and cache keys -------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// FIPS 180-4 SHA-256, small and dependency-free (the runtime links no crypto
// library). Used for the graph hash stored in checkpoints (the identity of a
// compiled step) and by msamp-run for its compilation cache key; neither is
// a security boundary, but a cryptographic hash makes accidental collisions
// a non-issue.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_SHA256_H
#define MSAMP_LIB_RUNTIME_SESSION_SHA256_H

#include "Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace msamp::session {

class Sha256 {
public:
  Sha256();
  void update(const void *data, size_t size);
  /// 64 lower-case hex digits. The object must not be updated afterwards.
  std::string hexDigest();

private:
  void compress(const uint8_t *block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
};

/// SHA-256 of a whole file as hex.
Error sha256File(const std::string &path, std::string &hex);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_SHA256_H
