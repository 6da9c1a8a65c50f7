// SPDX-License-Identifier: GPL-2.0
#include "machine/state_tidy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace cpuhp {
namespace {

// The pid of "<name>.tmp.<pid>", or 0 when the name is not one.
long TempPid(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at == 0)
    return 0;
  const std::string digits = name.substr(at + 5);
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return 0;
  return std::strtol(digits.c_str(), nullptr, 10);
}

bool Alive(long pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

std::vector<std::string> TidyStateDir(const std::string& dir, size_t keep_rejected) {
  std::vector<std::string> removed;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr)
    return removed;
  std::vector<std::string> doomed;
  std::map<std::string, std::vector<std::string>> rejected;  // by the name set aside
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    struct stat st {};
    if (fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    const long pid = TempPid(name);
    const size_t r = name.find(".rejected-");
    if (pid > 0 && !Alive(pid))
      doomed.push_back(name);
    else if (r != std::string::npos && r > 0)
      rejected[name.substr(0, r)].push_back(name);
  }
  for (auto& [base, names] : rejected) {
    std::sort(names.rbegin(), names.rend());  // newest first
    for (size_t i = keep_rejected; i < names.size(); ++i)
      doomed.push_back(names[i]);
  }
  for (const std::string& name : doomed)
    if (unlinkat(dirfd(d), name.c_str(), 0) == 0)
      removed.push_back(name);
  closedir(d);
  std::sort(removed.begin(), removed.end());
  return removed;
}

}  // namespace cpuhp
