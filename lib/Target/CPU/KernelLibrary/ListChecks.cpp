//===- ListChecks.cpp - run-time checks of compiled TensorLists -----------===//
//
// A compiled TensorList is a buffer and a length; whether an index is in
// range is known only at run time, and the interpreter's messages name the
// index and the length. The check records that message for the call that
// fails (CPUClusterRunner reports it after the node's name).
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include <string>

static thread_local std::string errorDetail;

/// Keeps the first failure's message: compiled code reports the first
/// error, and goes on to the end of the call after it.
static int64_t fail(std::string message) {
  if (errorDetail.empty())
    errorDetail = std::move(message);
  return 1;
}

extern "C" int64_t cleave_cpu_list_check(int64_t check, int64_t index,
                                         int64_t size) {
  switch (check) {
  case cleave::cpu::kListRead:
    if (index >= 0 && index < size)
      return 0;
    return fail("Trying to access element " + std::to_string(index) +
                " in a list with " + std::to_string(size) + " elements.");
  case cleave::cpu::kListWrite:
    if (index >= 0 && index < size)
      return 0;
    return fail("Trying to modify element " + std::to_string(index) +
                " in a list with " + std::to_string(size) + " elements.");
  case cleave::cpu::kListPush:
    // `index` is the length, `size` the list's bound.
    if (index < size)
      return 0;
    return fail("Tried to push item into a full list list size: " +
                std::to_string(index) +
                " max_num_elements: " + std::to_string(size));
  case cleave::cpu::kListPop:
    if (size > 0)
      return 0;
    return fail("Trying to pop from an empty list.");
  case cleave::cpu::kListStack:
    // `index` is the length the op expects.
    if (index == size)
      return 0;
    return fail("Operation expected a list with " + std::to_string(index) +
                " elements but got a list with " + std::to_string(size) +
                " elements.");
  }
  return 0;
}

std::string cleave::cpu::takeErrorDetail() {
  std::string detail;
  detail.swap(errorDetail);
  return detail;
}
