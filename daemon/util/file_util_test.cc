// SPDX-License-Identifier: GPL-2.0
#include "util/file_util.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "util/rng.h"

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

TEST(FormatUtcTest, MillisecondsTruncatedInUtc) {
  EXPECT_EQ(FormatUtc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtc(1'796'015'265'123'456'789), "2026-11-30T05:07:45.123Z");
  EXPECT_EQ(FormatUtc(951'782'400'999'999'999), "2000-02-29T00:00:00.999Z");
  EXPECT_EQ(FormatUtc(-1), "1969-12-31T23:59:59.999Z");
}

// Past a 32-bit time_t's end (2038-01-19T03:14:07Z) and an unsigned one's
// (2106), on every target: bookworm armhf's gmtime() would wrap (issue 36).
TEST(FormatUtcTest, RightPast2038On32BitTargetsToo) {
  constexpr int64_t kS = 1000000000;
  EXPECT_EQ(FormatUtc(2147483647 * kS), "2038-01-19T03:14:07.000Z");
  EXPECT_EQ(FormatUtc(2147483648 * kS + 5000000), "2038-01-19T03:14:08.005Z");
  EXPECT_EQ(FormatUtc(4294967296 * kS), "2106-02-07T06:28:16.000Z");
  EXPECT_EQ(FormatUtc(4102444800 * kS), "2100-01-01T00:00:00.000Z");  // not a leap year
  EXPECT_EQ(FormatUtc(951868800 * kS), "2000-03-01T00:00:00.000Z");   // after a 400-year leap day
  EXPECT_EQ(FormatUtc(INT64_MAX), "2262-04-11T23:47:16.854Z");        // the last int64 nanosecond
  EXPECT_EQ(FormatUtc(-2208988800 * kS), "1900-01-01T00:00:00.000Z");
}

// The same strings as gmtime() wherever time_t is 64 bits, from 1900 to 2262.
TEST(FormatUtcTest, SameAsGmtimeWithA64BitTimeT) {
  if (sizeof(time_t) < 8)
    GTEST_SKIP() << "time_t is 32 bits here: the fixed dates above are the test";
  Rng rng(2038);
  const int64_t lo = -2208988800, span = 11432360835;  // 1900-01-01 .. 2262-04-11
  for (int i = 0; i < 20000; ++i) {
    const int64_t sec = lo + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(span)));
    const int64_t ms = static_cast<int64_t>(rng.Below(1000));
    const time_t t = static_cast<time_t>(sec);
    struct tm tm;
    ASSERT_NE(gmtime_r(&t, &tm), nullptr);
    char want[64];
    std::snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    ASSERT_EQ(FormatUtc(sec * 1000000000 + ms * 1000000 + 999), want) << sec;
  }
}

// The realtime clock as the kernel keeps it (clock_gettime64 on 32-bit
// targets): within a second of time(), and never before this code existed.
TEST(RealtimeNsTest, TheKernelsRealtimeInNanoseconds) {
  const int64_t before = static_cast<int64_t>(time(nullptr));
  const int64_t ns = RealtimeNs();
  const int64_t after = static_cast<int64_t>(time(nullptr));
  EXPECT_GE(ns / 1000000000, before);
  EXPECT_LE(ns / 1000000000, after + 1);
  EXPECT_GT(ns, 1764547200LL * 1000000000);  // 2025-12-01
}

}  // namespace
}  // namespace cpuhp
