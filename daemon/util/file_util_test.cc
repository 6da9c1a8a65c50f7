// SPDX-License-Identifier: GPL-2.0
#include "util/file_util.h"

#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace cpuhp
