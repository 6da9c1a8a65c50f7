// SPDX-License-Identifier: GPL-2.0
#include "run/oplog.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/fifo_guard.h"

namespace cpuhp {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Root writes the log: a planted ops.jsonl -> somewhere link must not make it
// truncate or append to the target.
// Issue 29 item 7: a FIFO at the log's path blocked the open (nobody reads
// it) before the first operation; behind the start-up check (a FIFO put
// there after it) the open is refused at once, naming it.
TEST(OpLogTest, AFifoIsRefusedNotOpened) {
  char tmpl[] = "/tmp/cpuhp-oplog.XXXXXX";
  const std::string d = mkdtemp(tmpl);
  const std::string fifo = d + "/ops.jsonl";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string err, warning;
  bool opened = true;
  EXPECT_TRUE(ReturnsWithin(fifo, [&] {
    OpLog log;
    opened = log.Open(fifo, &err);
  }));
  EXPECT_FALSE(opened);
  EXPECT_EQ(err, fifo + ": cannot open operation log: a FIFO, not a regular file: refused");
  EXPECT_TRUE(ReturnsWithin(fifo, [&] {
    OpLog log;
    opened = log.OpenAt(fifo, OpLog::Position{1, 2, 3}, &err, &warning);
  }));
  EXPECT_FALSE(opened);
  EXPECT_EQ(err, fifo +
                     ": cannot reopen the checkpoint's operation log: a FIFO, not a regular file: "
                     "refused");
  std::filesystem::remove_all(d);
}

TEST(OpLogTest, ASymlinkIsNotFollowed) {
  char tmpl[] = "/tmp/cpuhp-oplog.XXXXXX";
  const std::string d = mkdtemp(tmpl);
  std::ofstream(d + "/t3") << "precious\n";
  std::filesystem::create_symlink(d + "/t3", d + "/ops.jsonl");
  std::string err;
  {
    OpLog log;
    EXPECT_FALSE(log.Open(d + "/ops.jsonl", &err));
    EXPECT_EQ(err.rfind(d + "/ops.jsonl: cannot open operation log: ", 0), 0u) << err;
  }
  {
    OpLog log;
    std::string warning;
    EXPECT_FALSE(log.OpenAt(d + "/ops.jsonl", OpLog::Position{}, &err, &warning));
  }
  EXPECT_EQ(Slurp(d + "/t3"), "precious\n");
  // A regular file is still written as before.
  std::filesystem::remove(d + "/ops.jsonl");
  {
    OpLog log;
    ASSERT_TRUE(log.Open(d + "/ops.jsonl", &err)) << err;
    OpRecord rec;
    rec.cpu = 1;
    ASSERT_TRUE(log.Append(rec, &err)) << err;
    ASSERT_TRUE(log.Close(&err)) << err;
  }
  EXPECT_NE(Slurp(d + "/ops.jsonl").find("\"cpu\":1"), std::string::npos);
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace cpuhp
