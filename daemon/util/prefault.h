// SPDX-License-Identifier: GPL-2.0
// Capacity made ahead of a hot loop, its pages touched.
#pragma once

#include <cstddef>
#include <vector>

namespace cpuhp {

// Room for n elements in *v, each page written once now: a vector that first
// grows inside a timed loop pays its page faults there. Issue 31 measured
// ~10 us per page first touched in a drain on the VMs it ran on (the host
// had taken the page back), ~8 us of CPU per write over a 2000-write run's
// first drains. The elements must be default-constructible.
template <typename T>
void Prefault(std::vector<T>* v, size_t n) {
  if (v->capacity() >= n)
    return;
  const size_t had = v->size();
  v->resize(n);
  v->resize(had);
}

}  // namespace cpuhp
