// SPDX-License-Identifier: GPL-2.0
#include "run/oplog.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Root writes the log: a planted ops.jsonl -> somewhere link must not make it
// truncate or append to the target.
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
