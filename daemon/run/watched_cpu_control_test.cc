// SPDX-License-Identifier: GPL-2.0
// Issue 29 item 6: every call a run or `restore` makes under the CPU tree is
// published while it runs, so the watchdog sees a blocked readback, list read
// or hotplug/fail write, not only the timed write.
#include "run/watched_cpu_control.h"

#include <gtest/gtest.h>

#include "stats/op_record.h"

namespace cpuhp {
namespace {

// Records what InFlight said while each call was inside the backend.
class Spy : public CpuControl {
 public:
  explicit Spy(InFlight* f) : f_(f) {}
  struct Seen {
    bool in_flight;
    SysfsCall call;
    int cpu;
    int dir;
    std::string list;
  };
  std::vector<Seen> seen;

  std::string Describe() const override { return "spy"; }
  bool ReadList(const std::string&, std::vector<int>* cpus, std::string*, int*) override {
    Look();
    *cpus = {0, 1};
    return true;
  }
  bool HasOnlineFile(int) override { return Look(), true; }
  int ReadOnline(int, std::string*) override { return Look(), 1; }
  int WriteOnline(int, bool) override { return Look(), 0; }
  int WriteFail(int, int) override { return Look(), 0; }
  int ReadFail(int, int*) override { return Look(), 0; }
  int ReadHotplugState(int, int*) override { return Look(), 0; }
  int ReadHotplugStates(std::string*) override { return Look(), 0; }
  int ReadSmtFile(const std::string&, std::string*, std::string*) override { return Look(), 0; }
  int ReadThreadSiblings(int, std::vector<int>*, std::string*) override { return Look(), 0; }
  int WriteSmtControl(const std::string&) override { return Look(), 0; }

 private:
  void Look() {
    const char* l = f_->list.load();
    seen.push_back({f_->start_wall_ns.load() != 0, static_cast<SysfsCall>(f_->call.load()),
                    f_->cpu.load(), f_->dir.load(), l ? l : ""});
  }
  InFlight* f_;
};

TEST(WatchedCpuControl, PublishesEveryCallWhileItRuns) {
  InFlight f;
  auto spy = std::make_unique<Spy>(&f);
  Spy* s = spy.get();
  WatchedCpuControl w(std::move(spy), &f);
  std::vector<int> cpus;
  std::string err;
  int state = 0;
  std::string text;
  EXPECT_TRUE(w.ReadList("online", &cpus, &err, nullptr));
  EXPECT_TRUE(w.HasOnlineFile(3));
  EXPECT_EQ(w.ReadOnline(3, &err), 1);
  EXPECT_EQ(w.WriteOnline(2, false), 0);
  EXPECT_EQ(w.WriteOnline(2, true), 0);
  EXPECT_EQ(w.WriteFail(1, 100), 0);
  EXPECT_EQ(w.ReadFail(1, &state), 0);
  EXPECT_EQ(w.ReadHotplugState(1, &state), 0);
  EXPECT_EQ(w.ReadHotplugStates(&text), 0);
  EXPECT_EQ(w.ReadSmtFile("control", &text, &err), 0);
  EXPECT_EQ(w.ReadThreadSiblings(5, &cpus, &err), 0);
  EXPECT_EQ(w.WriteSmtControl("off"), 0);
  EXPECT_EQ(f.start_wall_ns.load(), 0u);  // nothing in flight after the calls
  const std::vector<SysfsCall> calls = {
      SysfsCall::kListRead,    SysfsCall::kHasOnline,    SysfsCall::kOnlineRead,
      SysfsCall::kOnlineWrite, SysfsCall::kOnlineWrite,  SysfsCall::kFailWrite,
      SysfsCall::kFailRead,    SysfsCall::kStateRead,    SysfsCall::kStatesRead,
      SysfsCall::kSmtRead,     SysfsCall::kSiblingsRead, SysfsCall::kSmtWrite};
  ASSERT_EQ(s->seen.size(), calls.size());
  for (size_t i = 0; i < calls.size(); i++) {
    EXPECT_TRUE(s->seen[i].in_flight) << i;
    EXPECT_EQ(s->seen[i].call, calls[i]) << i;
  }
  EXPECT_EQ(s->seen[0].list, "online");
  EXPECT_EQ(s->seen[2].cpu, 3);
  EXPECT_EQ(s->seen[3].dir, static_cast<int>(Direction::kOffline));
  EXPECT_EQ(s->seen[4].dir, static_cast<int>(Direction::kOnline));
  EXPECT_EQ(s->seen[8].cpu, -1);
  EXPECT_EQ(s->seen[10].cpu, 5);
}

TEST(WatchedCpuControl, DescribesEachCall) {
  EXPECT_EQ(DescribeCall(SysfsCall::kOnlineWrite, 3, false, nullptr), "cpu3 offline");
  EXPECT_EQ(DescribeCall(SysfsCall::kOnlineRead, 3, false, nullptr), "cpu3/online read");
  EXPECT_EQ(DescribeCall(SysfsCall::kListRead, -1, false, "present"), "the present list read");
  EXPECT_EQ(DescribeCall(SysfsCall::kFailWrite, 1, false, nullptr), "cpu1/hotplug/fail write");
  EXPECT_STREQ(SysfsCallName(SysfsCall::kOnlineRead), "online_read");
  EXPECT_EQ(DescribeCall(SysfsCall::kSmtWrite, -1, false, nullptr), "smt/control write");
  EXPECT_EQ(DescribeCall(SysfsCall::kSiblingsRead, 5, false, nullptr),
            "cpu5/topology/thread_siblings_list read");
}

}  // namespace
}  // namespace cpuhp
