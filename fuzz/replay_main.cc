// SPDX-License-Identifier: GPL-2.0
// A fuzz target without libFuzzer (the gcc and sanitizer builds): runs it once
// on each file given and on each file in each directory given, in name order,
// so every build replays the seed corpora and the regression inputs. A failed
// check aborts, which fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p = argv[i];
    if (!std::filesystem::is_directory(p)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::filesystem::path> in_dir;
    for (const auto& e : std::filesystem::directory_iterator(p))
      if (e.is_regular_file())
        in_dir.push_back(e.path());
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", f.c_str());
      return 1;
    }
    const std::string data{std::istreambuf_iterator<char>(in), {}};
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", f.c_str(), data.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu inputs replayed\n", files.size());
  return files.empty() ? 1 : 0;
}
