// SPDX-License-Identifier: GPL-2.0
// For tests: a temporary directory standing in for tracefs (instances/ and,
// on request, the cpuhp events), and a sysfs cpu directory beside it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace cpuhp {

class FakeTracefs : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cpuhp-tracefs.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    sysfs_ = root_ + "/cpu";
    std::filesystem::create_directories(root_ + "/instances");
    std::filesystem::create_directories(sysfs_ + "/hotplug");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  // A state table and the three cpuhp event directories: what Start checks
  // before it makes an instance.
  void MakeStatesAndEvents() {
    std::ofstream(sysfs_ + "/hotplug/states") << "144: cpu:teardown\n";
    for (const char* e : {"cpuhp_enter", "cpuhp_multi_enter", "cpuhp_exit"})
      std::filesystem::create_directories(root_ + "/events/cpuhp/" + e);
  }
  std::string root_;
  std::string sysfs_;
};

}  // namespace cpuhp
