//===- Collectives.cpp - cross-replica sum and device-side transfers ------===//

#include "cleave/Runtime/Collectives.h"

#include "cleave/Runtime/Rendezvous.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

using namespace cleave;
using namespace cleave::runtime;

namespace {
/// A replica's place in a group assignment.
struct GroupPlace {
  int64_t group = 0, member = 0, size = 0;
};
} // namespace

/// Where `replica` is in `groups` (an [groups, size] matrix of replica
/// ids; empty: all replicas form one group), or the assignment's error.
static std::optional<GroupPlace> findGroup(const Tensor &groups,
                                           int64_t numReplicas,
                                           int64_t replica,
                                           std::string &error) {
  if (groups.numElements() == 0)
    return GroupPlace{0, replica, numReplicas};
  if (groups.rank() != 2) {
    error = "group_assignment must be a matrix, got shape " +
            shapeString(groups.shape());
    return std::nullopt;
  }
  int64_t numGroups = groups.shape()[0], size = groups.shape()[1];
  std::optional<GroupPlace> place;
  for (int64_t g = 0; g < numGroups; ++g)
    for (int64_t i = 0; i < size; ++i) {
      int64_t id = groups.getAsInt(g * size + i);
      if (id < 0 || id >= numReplicas) {
        error = "group_assignment names replica " + std::to_string(id) +
                ", but the computation has " + std::to_string(numReplicas) +
                " replicas";
        return std::nullopt;
      }
      if (id == replica)
        place = GroupPlace{g, i, size};
    }
  if (!place)
    error = "replica " + std::to_string(replica) +
            " is in no group of group_assignment";
  return place;
}

CrossProcessReduce::~CrossProcessReduce() = default;

/// The cross-process reduction a sum over `place`'s group also spans: the
/// rendezvous's, when the group is every replica (a sum over a subgroup
/// stays in the process).
static CrossProcessReduce *getCrossProcess(Rendezvous &rendezvous,
                                           const GroupPlace &place,
                                           int64_t numReplicas) {
  return place.size == numReplicas ? rendezvous.getCrossProcess() : nullptr;
}

/// After a group's sum in the process: the first member all-reduces the
/// `count` elements at `data` across the processes and, when that worked,
/// runs `shareResult`; a further round on `key` tells every member that it
/// is done or why it failed (then false with `error`). Outside the
/// rendezvous's lock, so the network does not hold up other channels.
static bool sumAcrossProcesses(Rendezvous &rendezvous,
                               CrossProcessReduce &crossProcess,
                               const void *key, const GroupPlace &place,
                               void *data, int64_t count, int32_t dtype,
                               llvm::function_ref<void()> shareResult,
                               std::string &error) {
  Tensor status(kString, {});
  if (place.member == 0) {
    std::string failure;
    if (crossProcess.allReduceSum(data, count, dtype, failure))
      shareResult();
    else
      status.strings()[0] =
          failure.empty() ? "cross-process sum failed" : failure;
  }
  auto first = [](std::vector<Tensor> &statuses) { return statuses[0]; };
  std::optional<Tensor> told = rendezvous.combine(
      key, place.group, place.member, place.size, status, first, error);
  if (!told)
    return false;
  error = told->strings()[0];
  return error.empty();
}

/// The sum over the replicas of the caller's group (all replicas when
/// group_assignment is empty), as XLA's cross-replica sum.
std::optional<Tensor>
cleave::runtime::crossReplicaSum(Rendezvous &rendezvous, const void *key,
                                 int64_t numReplicas, const Tensor &input,
                                 const Tensor &groups, std::string &error) {
  int64_t replica = getCurrentReplica();
  if (replica < 0) { // one replica: its own sum, and the other processes'
    CrossProcessReduce *crossProcess = rendezvous.getCrossProcess();
    if (!crossProcess)
      return input;
    Tensor sum = Tensor::uninitialized(input.dtype(), input.shape());
    std::memcpy(sum.raw(), input.raw(), input.byteSize());
    if (!crossProcess->allReduceSum(sum.raw(), sum.numElements(), sum.dtype(),
                                    error)) {
      rendezvous.cancel();
      return std::nullopt;
    }
    return sum;
  }
  // A replica that fails here stops the others' waits at once (compiled
  // code does not stop at a failed call).
  auto fail = [&](std::string message) -> std::optional<Tensor> {
    error = std::move(message);
    rendezvous.cancel();
    return std::nullopt;
  };
  std::string groupError;
  std::optional<GroupPlace> place =
      findGroup(groups, numReplicas, replica, groupError);
  if (!place)
    return fail(groupError);
  int64_t groupIndex = place->group, member = place->member,
          groupSize = place->size;
  // Inputs of unlike shapes sum to nothing (an invalid tensor): every
  // member fails.
  auto sum = [](std::vector<Tensor> &inputs) {
    for (const Tensor &in : inputs)
      if (in.shape() != inputs[0].shape() || in.dtype() != inputs[0].dtype())
        return Tensor();
    Tensor out(inputs[0].dtype(), inputs[0].shape());
    visitNumeric(out.dtype(), [&](auto zero) {
      using T = decltype(zero);
      T *o = out.data<T>();
      int64_t n = out.numElements();
      std::fill(o, o + n, T{});
      for (const Tensor &in : inputs)
        for (int64_t i = 0; i < n; ++i)
          o[i] += in.data<T>()[i];
    });
    return out;
  };
  std::optional<Tensor> result =
      rendezvous.combine(key, groupIndex, member, groupSize, input, sum, error);
  if (!result && !error.empty())
    return fail(error);
  if (result && !result->isValid())
    return fail("the replicas' inputs differ in shape or dtype");
  CrossProcessReduce *crossProcess =
      getCrossProcess(rendezvous, *place, numReplicas);
  if (!result || !crossProcess)
    return result;
  // Then over the other processes' replicas: the members share the sum's
  // buffer, which the first reduces in place.
  if (!sumAcrossProcesses(
          rendezvous, *crossProcess, static_cast<const char *>(key) + 1, *place,
          result->raw(), result->numElements(), result->dtype(), [] {}, error))
    return error.empty() ? std::nullopt : fail(error);
  return result;
}

bool cleave::runtime::crossReplicaSumInPlace(
    Rendezvous &rendezvous, const void *key, int64_t numReplicas,
    const void *input, void *output, int64_t count, int32_t dtype,
    const Tensor &groups, std::string &error) {
  int64_t replica = getCurrentReplica();
  size_t elementSize = dtypeSize(dtype);
  if (replica < 0) {
    std::memmove(output, input, count * elementSize);
    CrossProcessReduce *crossProcess = rendezvous.getCrossProcess();
    if (crossProcess &&
        !crossProcess->allReduceSum(output, count, dtype, error)) {
      rendezvous.cancel();
      return false;
    }
    return true;
  }
  auto fail = [&](std::string message) {
    error = std::move(message);
    rendezvous.cancel();
    return false;
  };
  std::string groupError;
  std::optional<GroupPlace> place =
      findGroup(groups, numReplicas, replica, groupError);
  if (!place)
    return fail(groupError);
  // The members' buffers and counts, each member's a row of the table.
  Tensor mine(kInt64, {1, 3});
  mine.data<int64_t>()[0] = reinterpret_cast<intptr_t>(input);
  mine.data<int64_t>()[1] = reinterpret_cast<intptr_t>(output);
  mine.data<int64_t>()[2] = count;
  auto rows = [](std::vector<Tensor> &members) {
    Tensor table(kInt64, {int64_t(members.size()), 3});
    for (size_t m = 0; m < members.size(); ++m)
      std::memcpy(table.data<int64_t>() + 3 * m, members[m].raw(),
                  3 * sizeof(int64_t));
    return table;
  };
  std::optional<Tensor> table = rendezvous.combine(
      key, place->group, place->member, place->size, mine, rows, error);
  if (!table)
    return error.empty() ? false : fail(error);
  const int64_t *buffers = table->data<int64_t>();
  for (int64_t m = 0; m < place->size; ++m)
    if (buffers[3 * m + 2] != count)
      return fail("the replicas' inputs differ in shape or dtype");
  // Each member sums its share of the elements over every member's input,
  // in member order as the interpreter does, into every member's output.
  int64_t begin = count * place->member / place->size,
          end = count * (place->member + 1) / place->size;
  bool known = visitNumeric(dtype, [&](auto zero) {
    using T = decltype(zero);
    std::vector<const T *> ins;
    std::vector<T *> outs;
    for (int64_t m = 0; m < place->size; ++m) {
      ins.push_back(reinterpret_cast<const T *>(buffers[3 * m]));
      outs.push_back(reinterpret_cast<T *>(buffers[3 * m + 1]));
    }
    for (int64_t i = begin; i < end; ++i) {
      T sum{};
      for (const T *in : ins)
        sum += in[i];
      for (T *out : outs)
        out[i] = sum;
    }
  });
  if (!known)
    return fail("cross-replica sum of " + dtypeName(dtype) +
                " is not supported");
  // Until every member has written its share (and reads no input any
  // more): a second round on a key of its own.
  auto nothing = [](std::vector<Tensor> &) { return Tensor(kInt64, {}); };
  std::optional<Tensor> done = rendezvous.combine(
      static_cast<const char *>(key) + 1, place->group, place->member,
      place->size, Tensor(kInt64, {}), nothing, error);
  if (!done)
    return error.empty() ? false : fail(error);
  CrossProcessReduce *crossProcess =
      getCrossProcess(rendezvous, *place, numReplicas);
  if (!crossProcess)
    return true;
  // Then over the other processes' replicas: the first member reduces its
  // output and copies the result into the others', so every replica of
  // every process holds the same sum.
  auto copyToOthers = [&] {
    for (int64_t m = 1; m < place->size; ++m)
      std::memcpy(reinterpret_cast<void *>(buffers[3 * m + 1]), output,
                  count * elementSize);
  };
  if (!sumAcrossProcesses(rendezvous, *crossProcess,
                          static_cast<const char *>(key) + 2, *place, output,
                          count, dtype, copyToOthers, error))
    return error.empty() ? false : fail(error);
  return true;
}

std::optional<std::vector<Tensor>> cleave::runtime::sendAndReceiveOnDevice(
    Rendezvous &rendezvous, llvm::StringRef sendKey, std::vector<Tensor> values,
    llvm::StringRef recvKey, std::string &error, bool persistent) {
  int64_t replica = std::max<int64_t>(getCurrentReplica(), 0);
  if (!sendKey.empty())
    rendezvous.send(sendKey, replica, std::move(values), persistent);
  if (recvKey.empty())
    return std::vector<Tensor>();
  return rendezvous.recv(recvKey, replica, error, persistent);
}
