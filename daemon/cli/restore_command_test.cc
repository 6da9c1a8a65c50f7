// SPDX-License-Identifier: GPL-2.0
// `restore` of a state file a dead run left: applied when it can be trusted,
// refused or reported otherwise.
#include "cli/restore_command.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/run_command.h"
#include "machine/restore.h"
#include "testing/fake_sysfs.h"
#include "testing/fifo_guard.h"
#include "testing/run_command_fixture.h"

namespace cpuhp {
namespace {

TEST_F(CommandsTest, StaleStateFromADeadRunIsRestoredFirst) {
  // A run died with cpu1 and cpu2 offline; its start mask was 0-3.
  fs_.Write("cpu1/online", "0\n");
  fs_.Write("cpu2/online", "0\n");
  {
    StateDir d(cfg_.state_dir);
    std::string err;
    ASSERT_TRUE(d.Lock(&err)) << err;
    ASSERT_TRUE(d.Write({999999, ReadBootId(), "", fs_.root(), {0, 1, 2, 3}, {1, 2, 3}}, &err))
        << err;
  }
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitOk);
  EXPECT_EQ(fs_.Online(1), '1');
  EXPECT_EQ(fs_.Online(2), '1');
  EXPECT_NE(Output().find("restored online mask 0-3"), std::string::npos) << Output();
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitOk);
  EXPECT_NE(Output().find("nothing to restore"), std::string::npos);
}

// A state file is data anyone with write access to the state directory may
// have planted or a crash may have mangled: restore trusts none of it.
class StaleStateTest : public CommandsTest {
 protected:
  void Plant(const std::string& text) {
    std::filesystem::create_directories(cfg_.state_dir);
    std::ofstream(cfg_.state_dir + "/state.json") << text;
  }
  std::string State(const std::string& root, const std::string& boot_id, const std::string& online,
                    const std::string& controlled) {
    return nlohmann::json({{"pid", 999999},
                           {"boot_id", boot_id},
                           {"started_at", "2026-12-01T00:00:00.000Z"},
                           {"sysfs_root", root},
                           {"online_at_start", online},
                           {"controlled", controlled}})
        .dump();
  }
};

TEST_F(StaleStateTest, AnotherSysfsRootInTheFileIsNotFollowed) {
  FakeSysfs victim(4);
  victim.Write("cpu1/online", "0\n");
  Plant(State(victim.root(), ReadBootId(), "0-3", "1-3"));
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitFailed);
  EXPECT_EQ(victim.Online(1), '0');  // not written
  EXPECT_TRUE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  // A run refuses to start over it rather than record a mask it cannot trust.
  cfg_.iterations = 2;
  EXPECT_EQ(RunCommand(cfg_, &g_no_stop, out_), kExitFailed);
  EXPECT_FALSE(ReportExists());
}

TEST_F(StaleStateTest, AMaskFromAnotherBootIsReportedNotApplied) {
  fs_.Write("cpu2/online", "0\n");
  Plant(State(fs_.root(), "00000000-0000-4000-8000-000000000000", "0-1", "1-3"));
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitOk);
  EXPECT_NE(Output().find("online mask 0-1 not applied"), std::string::npos) << Output();
  EXPECT_EQ(fs_.Online(2), '0');
  EXPECT_EQ(fs_.Online(3), '1');
  EXPECT_FALSE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
}

TEST_F(StaleStateTest, AMaskThatLeavesNoCpuOnlineIsRefused) {
  FakeSysfs all_hotpluggable(4, /*cpu0_hotpluggable=*/true);
  Plant(State(all_hotpluggable.root(), ReadBootId(), "7", "0-3"));
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, all_hotpluggable.root(), {}, out_), kExitFailed);
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(all_hotpluggable.Online(c), '1');
}

// Issue 29 item 9: a CPU list naming CPUs that are not present is refused in
// one line naming state.json and the field, before any write: "1-65535" would
// fail every restore, "9" would take the present CPUs offline.
TEST_F(StaleStateTest, CpusThatAreNotPresentAreRefused) {
  fs_.Write("cpu2/online", "0\n");
  const std::string path = cfg_.state_dir + "/state.json";
  for (const auto& [online, controlled, field, cpu] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"0-3", "1-65535", "controlled", "cpu4"}, {"9", "1-3", "online_at_start", "cpu9"}}) {
    Plant(State(fs_.root(), ReadBootId(), online, controlled));
    StateDir dir(cfg_.state_dir);
    std::string err;
    ASSERT_TRUE(dir.Lock(&err)) << err;
    auto ctl = NewSysfsCpuControl(fs_.root());
    EXPECT_FALSE(RestoreStale(&dir, fs_.root(), ctl.get(), ReadBootId(), out_, &err));
    EXPECT_NE(err.find(path + ": \"" + field + "\" names " + cpu + ", which is not present under " +
                       fs_.root() + " (present: 0-3): not restored"),
              std::string::npos)
        << err;
    EXPECT_EQ(fs_.Online(1), '1');
    EXPECT_EQ(fs_.Online(2), '0');  // nothing written either way
    EXPECT_EQ(fs_.Online(3), '1');
    EXPECT_TRUE(std::filesystem::exists(path));
  }
}

// Issue 29 item 7: restore truncated a symlink at cpu3/hotplug/fail (the
// file it named) to "-1" although the run had injected no fault. Only a run
// that did has hotplug/fail written back; one whose fail is a FIFO is
// refused at once (it held both locks 26 minutes in fifo_open).
TEST_F(StaleStateTest, HotplugFailIsWrittenOnlyAfterAFaultRunAndNeverThroughALink) {
  fs_.Write("victim", "precious\n");
  std::filesystem::create_directories(fs_.root() + "/cpu3/hotplug");
  fs_.Symlink("cpu3/hotplug/fail", fs_.root() + "/victim");
  fs_.Write("cpu2/online", "0\n");
  nlohmann::json j = nlohmann::json::parse(State(fs_.root(), ReadBootId(), "0-3", "1-3"));
  j["fail_may_be_armed"] = false;
  Plant(j.dump());
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitOk) << Output();
  EXPECT_EQ(fs_.Online(2), '1');
  EXPECT_EQ(fs_.Read("victim"), "precious\n");
  EXPECT_EQ(Output().find("hotplug/fail"), std::string::npos) << Output();

  // A fault run's: fail is cleared, but not through the link.
  fs_.Write("cpu2/online", "0\n");
  j["fail_may_be_armed"] = true;
  Plant(j.dump());
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitFailed);
  EXPECT_EQ(fs_.Read("victim"), "precious\n");
  EXPECT_EQ(fs_.Online(2), '0');  // fail first: nothing written before it is clear
  EXPECT_TRUE(std::filesystem::exists(cfg_.state_dir + "/state.json"));

  const std::string fifo = fs_.Fifo("cpu3/hotplug/fail");
  int rc = kExitOk;
  EXPECT_TRUE(
      ReturnsWithin(fifo, [&] { rc = RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_); }));
  EXPECT_EQ(rc, kExitFailed);
  EXPECT_TRUE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
}

TEST_F(StaleStateTest, WrongTypesAreRefusedNotThrown) {
  const std::string good = State(fs_.root(), ReadBootId(), "0-3", "1-3");
  for (const auto& [key, value] :
       std::vector<std::pair<const char*, nlohmann::json>>{{"pid", "12"},
                                                           {"pid", -1},
                                                           {"pid", 1e30},
                                                           {"boot_id", 5},
                                                           {"boot_id", "not-a-boot-id"},
                                                           {"started_at", "\x1b[2J"},
                                                           {"fail_may_be_armed", "yes"}}) {
    nlohmann::json j = nlohmann::json::parse(good);
    j[key] = value;
    Plant(j.dump());
    EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitFailed) << j.dump();
    EXPECT_TRUE(std::filesystem::exists(cfg_.state_dir + "/state.json"));
  }
  Plant(std::string(100 * 1024, ' ') + good);  // past the bounded reader's limit
  EXPECT_EQ(RestoreCommand(cfg_.state_dir, fs_.root(), {}, out_), kExitFailed);
}

}  // namespace
}  // namespace cpuhp
