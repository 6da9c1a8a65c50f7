// SPDX-License-Identifier: GPL-2.0
#include "sources/kmsg_health.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <sstream>
#include <variant>

#include <gtest/gtest.h>

namespace cpuhp {
namespace {

const std::string kFixture = std::string(CPUHP_SOURCE_DIR) + "/tests/fixtures/kmsg-records.txt";

// Records as /dev/kmsg hands them out: a line, plus the " KEY=value" lines
// that continue it.
std::vector<std::string> FixtureRecords() {
  std::ifstream f(kFixture);
  EXPECT_TRUE(f) << kFixture;
  std::vector<std::string> out;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line[0] == ' ' && !out.empty())
      out.back() += line + "\n";
    else
      out.push_back(line + "\n");
  }
  return out;
}

// Hands out queued records or errors, then EAGAIN.
class FakeKmsg : public KmsgReader {
 public:
  bool Open(std::string* why) override {
    *why = open_error;
    return open_error.empty();
  }
  long Read(char* buf, size_t len, int* err_no) override {
    if (queue.empty()) {
      *err_no = EAGAIN;
      return -1;
    }
    auto item = queue.front();
    queue.pop_front();
    if (auto* e = std::get_if<int>(&item)) {
      *err_no = *e;
      return -1;
    }
    const std::string& s = std::get<std::string>(item);
    if (s.size() > len) {
      *err_no = EINVAL;
      return -1;
    }
    memcpy(buf, s.data(), s.size());
    return static_cast<long>(s.size());
  }
  std::deque<std::variant<std::string, int>> queue;
  std::string open_error;
};

class TaintFile {
 public:
  TaintFile() {
    char tmpl[] = "/tmp/cpuhp-taint.XXXXXX";
    int fd = mkstemp(tmpl);
    close(fd);
    path = tmpl;
    Set(0);
  }
  ~TaintFile() { unlink(path.c_str()); }
  void Set(uint64_t mask) { std::ofstream(path) << mask << "\n"; }
  std::string path;
};

TEST(KmsgRecord, ParsesTheKernelFormat) {
  KmsgRecord r;
  std::string err;
  ASSERT_TRUE(ParseKmsgRecord("6,30094,3777974814,-;smpboot: CPU 1 is now offline\n", &r, &err))
      << err;
  EXPECT_EQ(r.level, 6);
  EXPECT_EQ(r.facility, 0);
  EXPECT_EQ(r.seq, 30094u);
  EXPECT_EQ(r.ts_us, 3777974814u);
  EXPECT_EQ(r.message, "smpboot: CPU 1 is now offline");
  EXPECT_TRUE(r.dict.empty());
  // What `echo "<4>..." > /dev/kmsg` gives: facility user (1), level 4.
  ASSERT_TRUE(ParseKmsgRecord("12,5,99,-;WARNING: x\n", &r, &err));
  EXPECT_EQ(r.level, 4);
  EXPECT_EQ(r.facility, 1);
  // Extra fields after the flags are allowed (the format reserves them).
  ASSERT_TRUE(ParseKmsgRecord("6,1,2,-,caller=T1;m", &r, &err)) << err;
  EXPECT_EQ(r.message, "m");
}

TEST(KmsgRecord, KeepsContinuationLines) {
  KmsgRecord r;
  std::string err;
  ASSERT_TRUE(
      ParseKmsgRecord("7,160,424069,-;pci_root PNP0A03:00: host bridge window\n SUBSYSTEM=acpi\n "
                      "DEVICE=+acpi:PNP0A03:00\n",
                      &r, &err))
      << err;
  EXPECT_EQ(r.message, "pci_root PNP0A03:00: host bridge window");
  EXPECT_EQ(r.dict, (std::vector<std::string>{"SUBSYSTEM=acpi", "DEVICE=+acpi:PNP0A03:00"}));
  EXPECT_FALSE(ParseKmsgRecord("6,1,2,-;m\nno leading space\n", &r, &err));
  EXPECT_EQ(err, "continuation line without its leading space");
}

TEST(KmsgRecord, RejectsMalformedRecords) {
  KmsgRecord r;
  std::string err;
  for (const char* bad : {"", "no semicolon here", "6,1,2;too few fields", "x,1,2,-;prefix",
                          "6,1,-5,-;negative timestamp", "6,1,2,-\n;newline in the header",
                          "6,,2,-;empty sequence"}) {
    EXPECT_FALSE(ParseKmsgRecord(bad, &r, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

TEST(KmsgClassify, EveryKindAndItsLookalikes) {
  struct Case {
    const char* message;
    int kind;
  } cases[] = {
      {"WARNING: CPU: 1 PID: 18 at kernel/cpu.c:1234 cpuhp_invoke_callback+0x1a2/0x5f0",
       kKmsgWarning},
      {"WARNING: possible circular locking dependency detected", kKmsgWarning},
      {"watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [cpuhp/1:18]", kKmsgSoftLockup},
      {"Watchdog detected hard LOCKUP on cpu 1", kKmsgHardLockup},
      {"rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:", kKmsgRcuStall},
      {"rcu: INFO: rcu_sched self-detected stall on CPU", kKmsgRcuStall},
      {"INFO: rcu_sched detected stall on CPU 1", kKmsgRcuStall},
      {"INFO: task kworker/u4:2:77 blocked for more than 120 seconds.", kKmsgHungTask},
      {"CPU1: failed to come online", kKmsgFailedOnline},
      {"CPU1 failed to report alive state", kKmsgFailedOnline},
      {"CPU 1 didn't die...", kKmsgDidntDie},
      {"CPU1 failed to report dead state", kKmsgDidntDie},
      {"Oops: general protection fault, probably for non-canonical address", kKmsgOops},
      {"Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP", kKmsgOops},
      {"kernel BUG at kernel/cpu.c:1234!", kKmsgBug},
      {"BUG: sleeping function called from invalid context", kKmsgBug},
      {"smpboot: CPU 1 is now offline", -1},
      {"this mentions a BUG: in the middle and is not one", -1},
      {"ACPI: no WARNING: here either, it is in the middle", -1},
      {"", -1},
  };
  for (const Case& c : cases)
    EXPECT_EQ(ClassifyKmsgMessage(c.message), c.kind) << c.message;
  for (int k = 0; k < kKmsgKinds; ++k)
    EXPECT_EQ(KmsgKindFromName(KmsgKindName(k)), k);
  EXPECT_EQ(KmsgKindFromName("warn"), -1);
}

TEST(KmsgTaint, DecodesFlagLetters) {
  EXPECT_EQ(TaintLetters(0), "");
  EXPECT_EQ(TaintLetters(1u << 9), "W");
  EXPECT_EQ(TaintLetters((1u << 9) | (1u << 14) | (1u << 7)), "DWL");
  EXPECT_EQ(TaintLetters(1u << 12 | 1u << 13), "OE");
  EXPECT_EQ(TaintLetters(1ull << 40), "?");
}

TEST(KmsgHealthTest, CountsTheFixtureByKindAndKeepsFirstLines) {
  auto fake = std::make_unique<FakeKmsg>();
  FakeKmsg* kmsg = fake.get();
  TaintFile taint;
  KmsgHealthOptions opts;
  opts.tainted_path = taint.path;
  opts.keep_per_kind = 1;
  KmsgHealth h(std::move(fake), opts);
  std::string why;
  ASSERT_TRUE(h.Start(&why)) << why;
  std::vector<std::string> records = FixtureRecords();
  ASSERT_EQ(records.size(), 26u);
  for (const std::string& r : records)
    kmsg->queue.push_back(r);
  h.OpBegin({1, Direction::kOffline}, 0);
  EXPECT_TRUE(kmsg->queue.empty());
  h.OpEnd({});
  taint.Set(1u << 9);
  h.Stop();
  EXPECT_EQ(h.count(kKmsgWarning), 2u);
  EXPECT_EQ(h.count(kKmsgSoftLockup), 1u);
  EXPECT_EQ(h.count(kKmsgHardLockup), 1u);
  EXPECT_EQ(h.count(kKmsgRcuStall), 2u);
  EXPECT_EQ(h.count(kKmsgHungTask), 1u);
  EXPECT_EQ(h.count(kKmsgFailedOnline), 1u);
  EXPECT_EQ(h.count(kKmsgDidntDie), 2u);
  EXPECT_EQ(h.count(kKmsgOops), 2u);
  EXPECT_EQ(h.count(kKmsgBug), 2u);
  nlohmann::json j = h.ReportJson();
  EXPECT_EQ(j["records_read"], 26);
  EXPECT_EQ(j["records_malformed"], 4);  // no ';', bad prefix, 3 fields, stray line
  EXPECT_EQ(j["records_lost"], 0);
  EXPECT_EQ(j["events"], 14);
  ASSERT_EQ(j["first_lines"]["warning"].size(), 1u);  // keep_per_kind
  const nlohmann::json& w = j["first_lines"]["warning"][0];
  EXPECT_EQ(w["message"],
            "WARNING: CPU: 1 PID: 18 at kernel/cpu.c:1234 cpuhp_invoke_callback+0x1a2/0x5f0");
  EXPECT_EQ(w["timestamp_us"], 3778000150u);
  EXPECT_EQ(w["seq"], 30101);
  EXPECT_EQ(w["level"], 4);
  // Logged before operation 0 began: drained at OpBegin(0).
  EXPECT_EQ(w["op_index"], nullptr);
  EXPECT_EQ(w["when"], "before_first_op");
  EXPECT_EQ(j["first_event"]["kind"], "warning");
  EXPECT_EQ(j["taint"]["start"], 0);
  EXPECT_EQ(j["taint"]["end"], 512);
  EXPECT_EQ(j["taint"]["added_flags"], "W");
  EXPECT_EQ(j["stopped_run"], false);
}

TEST(KmsgHealthTest, NotesTheOperationTheFirstLineAppearedIn) {
  auto fake = std::make_unique<FakeKmsg>();
  FakeKmsg* kmsg = fake.get();
  KmsgHealth h(std::move(fake), {});
  std::string why;
  ASSERT_TRUE(h.Start(&why));
  for (uint64_t i = 0; i < 10; ++i) {
    h.OpBegin({1, i % 2 ? Direction::kOnline : Direction::kOffline}, i);
    kmsg->queue.push_back("6,1,100,-;smpboot: CPU 1 is now offline\n");
    if (i == 6)  // logged while operation 6 runs
      kmsg->queue.push_back("4,2,200,-;WARNING: CPU: 1 PID: 18 at kernel/cpu.c:1\n");
    OpRecord rec;
    rec.index = i;
    h.OpEnd(rec);
    if (i == 8)  // logged after operation 8 ended, read when 9 begins
      kmsg->queue.push_back("3,3,300,-;BUG: scheduling while atomic\n");
    std::string stop_why;
    EXPECT_FALSE(h.WantsStop(&stop_why));  // "continue" is the default
  }
  h.Stop();
  nlohmann::json j = h.ReportJson();
  EXPECT_EQ(j["first_event"]["kind"], "warning");
  EXPECT_EQ(j["first_event"]["op_index"], 6);
  EXPECT_EQ(j["first_event"]["when"], "during_op");
  EXPECT_EQ(j["first_lines"]["bug"][0]["op_index"], 8);
  EXPECT_EQ(j["first_lines"]["bug"][0]["when"], "after_op");
  EXPECT_EQ(j["records_read"], 12);
  EXPECT_EQ(j["events"], 2);
}

TEST(KmsgHealthTest, StopModeNamesTheLineAndOnlyForTheKindsAsked) {
  auto fake = std::make_unique<FakeKmsg>();
  FakeKmsg* kmsg = fake.get();
  KmsgHealthOptions opts;
  opts.stop[kKmsgRcuStall] = true;
  KmsgHealth h(std::move(fake), opts);
  std::string why;
  ASSERT_TRUE(h.Start(&why));
  h.OpBegin({1, Direction::kOffline}, 0);
  kmsg->queue.push_back("4,2,200,-;WARNING: CPU: 1 PID: 18 at kernel/cpu.c:1\n");
  h.OpEnd({});
  EXPECT_FALSE(h.WantsStop(&why));  // a warning, but only stalls stop
  h.OpBegin({1, Direction::kOnline}, 1);
  kmsg->queue.push_back("6,3,300,-;rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n");
  OpRecord rec;
  rec.index = 1;
  h.OpEnd(rec);
  ASSERT_TRUE(h.WantsStop(&why));
  EXPECT_EQ(why,
            "rcu_stall in kernel log at operation 1: rcu: INFO: rcu_preempt detected stalls on "
            "CPUs/tasks:");
  h.Stop();
  EXPECT_EQ(h.ReportJson()["stopped_run"], true);
  EXPECT_EQ(h.ReportJson()["stop_on"], nlohmann::json({"rcu_stall"}));
}

TEST(KmsgHealthTest, CountsOverwrittenRecordsAndGoesOn) {
  auto fake = std::make_unique<FakeKmsg>();
  FakeKmsg* kmsg = fake.get();
  KmsgHealth h(std::move(fake), {});
  std::string why;
  ASSERT_TRUE(h.Start(&why));
  kmsg->queue.push_back(EPIPE);
  kmsg->queue.push_back("4,900,200,-;WARNING: after the gap\n");
  kmsg->queue.push_back(EPIPE);
  h.Drain();
  EXPECT_EQ(h.count(kKmsgWarning), 1u);
  nlohmann::json j = h.ReportJson();
  EXPECT_EQ(j["records_lost"], 2);
  EXPECT_FALSE(j.contains("read_error"));
  // Any other error stops reading for good and is reported.
  kmsg->queue.push_back(EIO);
  kmsg->queue.push_back("4,901,200,-;WARNING: never read\n");
  h.Drain();
  h.Drain();
  EXPECT_EQ(h.count(kKmsgWarning), 1u);
  EXPECT_EQ(h.ReportJson()["read_error"], std::string("read: ") + strerror(EIO));
}

TEST(KmsgHealthTest, UnavailableSaysWhy) {
  KmsgHealth h(NewDevKmsgReader("/nonexistent/kmsg"), {});
  std::string why;
  EXPECT_FALSE(h.Start(&why));
  EXPECT_EQ(why, "/nonexistent/kmsg: cannot open: No such file or directory");
  auto fake = std::make_unique<FakeKmsg>();
  fake->open_error = "/dev/kmsg: cannot open: Permission denied";
  KmsgHealth h2(std::move(fake), {});
  EXPECT_FALSE(h2.Start(&why));
  EXPECT_EQ(why, "/dev/kmsg: cannot open: Permission denied");
}

TEST(KmsgHealthTest, ATaintFileThatCannotBeReadIsReportedNotZero) {
  KmsgHealthOptions opts;
  opts.tainted_path = "/nonexistent/tainted";
  KmsgHealth h(std::make_unique<FakeKmsg>(), opts);
  std::string why;
  ASSERT_TRUE(h.Start(&why));
  h.Stop();
  nlohmann::json t = h.ReportJson()["taint"];
  EXPECT_EQ(t["start"], nullptr);
  EXPECT_EQ(t["end"], nullptr);
  EXPECT_FALSE(t.contains("added_flags"));
  EXPECT_EQ(t["error"], "/nonexistent/tainted: cannot read a taint mask");
}

TEST(KmsgHealthTest, ReadsTheRealDevKmsgFromTheEnd) {
  if (access("/dev/kmsg", R_OK | W_OK) != 0)
    GTEST_SKIP() << "/dev/kmsg not readable and writable here (not root)";
  // The newest record logged so far, read the plain way.
  uint64_t newest = 0;
  {
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    char buf[16384];
    std::string err;
    for (;;) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n < 0 && errno == EPIPE)
        continue;
      if (n <= 0)
        break;
      KmsgRecord r;
      if (ParseKmsgRecord(std::string_view(buf, static_cast<size_t>(n)), &r, &err))
        newest = std::max(newest, r.seq);
    }
    close(fd);
  }
  KmsgHealth h(NewDevKmsgReader("/dev/kmsg"), {});
  std::string why;
  ASSERT_TRUE(h.Start(&why)) << why;
  {
    std::ofstream k("/dev/kmsg");
    k << "<6>cpuhp-stress: kmsg_health unit test marker\n";
  }
  h.Drain();
  h.Stop();
  nlohmann::json j = h.ReportJson();
  // The marker was read, and nothing logged before Start (other hotplug
  // tests may log lines meanwhile; they come after `newest` too).
  EXPECT_GE(j["records_read"], 1) << j.dump();
  ASSERT_TRUE(j["first_seq"].is_number()) << j.dump();
  EXPECT_GT(j["first_seq"].get<uint64_t>(), newest);
  EXPECT_TRUE(j["taint"]["start"].is_number());
}

}  // namespace
}  // namespace cpuhp
