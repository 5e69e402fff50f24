//===- CheckpointTest.cpp - Atomic writes of checkpoints ------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is written to FILE.tmp, fsynced and renamed: a reader sees the
// old file or the new one, never a part. Every failure leaves FILE as it was
// and no FILE.tmp behind (unless FILE.tmp is something that is not ours).
//
//===----------------------------------------------------------------------===//

#include "SafeTensors.h"
#include "Sha256.h"
#include "TestUtils.h"

#include "gtest/gtest.h"

#include <sys/stat.h>

using namespace msamp::session;
using namespace msamp_session_test;

namespace {

TEST(CheckpointTest, AtomicWriteCreatesAndReplaces) {
  TempDir dir;
  const std::string path = dir.file("ck.safetensors");
  ASSERT_FALSE(writeFileAtomically(path, "first", 5));
  EXPECT_EQ(readBytes(path), std::vector<uint8_t>({'f', 'i', 'r', 's', 't'}));
  EXPECT_FALSE(exists(path + ".tmp"));
  ASSERT_FALSE(writeFileAtomically(path, "2nd", 3));
  EXPECT_EQ(readBytes(path), std::vector<uint8_t>({'2', 'n', 'd'}));
  EXPECT_FALSE(exists(path + ".tmp"));
  // A stale temporary file from a crashed run is simply replaced.
  writeText(path + ".tmp", "stale partial checkpoint");
  ASSERT_FALSE(writeFileAtomically(path, "3rd", 3));
  EXPECT_EQ(readBytes(path), std::vector<uint8_t>({'3', 'r', 'd'}));
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(CheckpointTest, FailedWriteLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("no-such-dir/ck.safetensors");
  Error e = writeFileAtomically(path, "data", 4);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.code(), MSAMP_ERROR_IO);
  EXPECT_NE(e.message().find("ck.safetensors"), std::string::npos);
  EXPECT_FALSE(exists(path));
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(CheckpointTest, FailedWriteKeepsTheOldCheckpoint) {
  TempDir dir;
  const std::string path = dir.file("ck.safetensors");
  ASSERT_FALSE(writeFileAtomically(path, "old", 3));
  // The temporary name is taken by a directory: creating it fails.
  ASSERT_EQ(mkdir((path + ".tmp").c_str(), 0700), 0);
  Error e = writeFileAtomically(path, "new", 3);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("cannot create"), std::string::npos)
      << e.message();
  EXPECT_EQ(readBytes(path), std::vector<uint8_t>({'o', 'l', 'd'}));
  rmdir((path + ".tmp").c_str());
}

TEST(CheckpointTest, FailedRenameRemovesTheTemporary) {
  TempDir dir;
  // The target is a non-empty directory: the rename fails after the data
  // was written, and the temporary file must not stay behind.
  const std::string path = dir.file("target");
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  writeText(path + "/keep", "x");
  Error e = writeFileAtomically(path, "new", 3);
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find("renaming"), std::string::npos) << e.message();
  EXPECT_FALSE(exists(path + ".tmp"));
  EXPECT_TRUE(exists(path + "/keep"));
}

TEST(CheckpointTest, SafeTensorsWriteIsAtomicToo) {
  TempDir dir;
  const std::string path = dir.file("ck.safetensors");
  const float x[3] = {1, 2, 3};
  ASSERT_FALSE(writeSafeTensors(
      path, {{"x", ElementType::F32, {3}, x, sizeof(x)}}, {{"step", "1"}}));
  std::vector<uint8_t> before = readBytes(path);
  // A bad tensor is refused before any file is touched.
  Error e = writeSafeTensors(path, {{"x", ElementType::F32, {4}, x, sizeof(x)}},
                             {{"step", "2"}});
  ASSERT_TRUE(e);
  EXPECT_NE(e.message().find(path), std::string::npos) << e.message();
  EXPECT_EQ(readBytes(path), before);
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(CheckpointTest, Sha256KnownAnswers) {
  // FIPS 180-4 examples.
  Sha256 empty;
  EXPECT_EQ(empty.hexDigest(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 abc;
  abc.update("abc", 3);
  EXPECT_EQ(abc.hexDigest(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks, fed in uneven pieces.
  const std::string two =
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 split;
  split.update(two.data(), 5);
  split.update(two.data() + 5, two.size() - 5);
  EXPECT_EQ(split.hexDigest(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  TempDir dir;
  writeText(dir.file("abc"), "abc");
  std::string hex;
  ASSERT_FALSE(sha256File(dir.file("abc"), hex));
  EXPECT_EQ(hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

} // namespace
