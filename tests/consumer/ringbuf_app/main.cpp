// Uses ringbuf as its package declares it: C++17 and RINGBUF_CHECKED=1 from the target.
#include <cstdio>

#include "ringbuf/ringbuf.hpp"

int main() {
  ringbuf::Ring<int, 2> ring;
  ring.push(1);
  ring.push(2);
  const bool third = ring.push(3);
  const auto first = ring.pop();
  std::printf("full=%d first=%d size=%zu checked=%d\n", third ? 0 : 1, first.value_or(-1),
              ring.size(), ringbuf::Ring<int, 2>::checked ? 1 : 0);
  return 0;
}
