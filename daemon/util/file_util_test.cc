// SPDX-License-Identifier: GPL-2.0
#include "util/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

namespace fs = std::filesystem;

std::string TempDir() {
  char tmpl[] = "/tmp/cpuhp-file-util-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir != nullptr ? dir : "";
}

// Issue 29 item 9: a report name that fits NAME_MAX only without the
// ".tmp.<pid>" WriteFileAtomic adds is refused before the run, in one line
// naming the path, with nothing left in the directory; one that fits with it
// is accepted and written.
TEST(CheckOutputPathTest, NameTooLongWithTheTemporarySuffixIsRefused) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  ASSERT_GT(name_max, 20);
  const size_t suffix = AtomicTempPath("").size();
  const std::string too_long = dir + "/" + std::string(static_cast<size_t>(name_max) - 5, 'r');
  std::string err;
  EXPECT_FALSE(CheckOutputPath(too_long, &err));
  EXPECT_EQ(err.find(too_long + ": file name too long: " + std::to_string(name_max - 5) +
                     " characters, at most " + std::to_string(name_max - suffix)),
            0u)
      << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir));

  const std::string fits = dir + "/" + std::string(static_cast<size_t>(name_max) - suffix, 'r');
  EXPECT_TRUE(CheckOutputPath(fits, &err)) << err;
  EXPECT_TRUE(WriteFileAtomic(fits, "{}\n", &err)) << err;
  EXPECT_TRUE(fs::exists(fits));
  fs::remove_all(dir);
}

// Issue 29 item 7: `--oplog` at a FIFO blocked before the start (nobody
// reads it). Any output path that is there and not a regular file is
// refused before the run, in one line naming it.
TEST(CheckOutputPathTest, AFifoOrADeviceIsRefused) {
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string fifo = dir + "/ops.jsonl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string err;
  EXPECT_FALSE(CheckOutputPath(fifo, &err));
  EXPECT_EQ(err,
            fifo + ": a FIFO, not a regular file: refused (output goes to regular files only)");
  EXPECT_FALSE(CheckOutputPath("/dev/null", &err));
  EXPECT_EQ(err,
            "/dev/null: a character device, not a regular file: refused (output goes to "
            "regular files only)");
  // A link to a FIFO is what it names.
  fs::create_symlink(fifo, dir + "/link");
  EXPECT_FALSE(CheckOutputPath(dir + "/link", &err));
  // A regular file there is replaced at the end as before.
  fs::remove(fifo);
  { std::ofstream(fifo) << "old\n"; }
  EXPECT_TRUE(CheckOutputPath(fifo, &err)) << err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cpuhp
