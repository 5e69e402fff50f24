//===- TestUtils.h - Helpers of the session unit tests ----------*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_UNITTESTS_SESSION_TESTUTILS_H
#define MSAMP_UNITTESTS_SESSION_TESTUTILS_H

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ftw.h>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace msamp_session_test {

/// A fresh directory under $TMPDIR, removed with its contents at the end.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/msamp-session-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      path_ = buffer.data();
    EXPECT_FALSE(path_.empty());
  }
  ~TempDir() {
    if (!path_.empty())
      nftw(
          path_.c_str(),
          [](const char *p, const struct stat *, int, struct FTW *) {
            return ::remove(p);
          },
          16, FTW_DEPTH | FTW_PHYS);
  }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

inline std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in),
                              std::istreambuf_iterator<char>());
}

inline void writeBytes(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data),
            static_cast<std::streamsize>(size));
}

inline void writeText(const std::string &path, const std::string &text) {
  writeBytes(path, text.data(), text.size());
}

inline bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

} // namespace msamp_session_test

#endif // MSAMP_UNITTESTS_SESSION_TESTUTILS_H
