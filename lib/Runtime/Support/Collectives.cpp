//===- Collectives.cpp - cross-replica sum and device-side transfers ------===//

#include "cleave/Runtime/Collectives.h"

#include "cleave/Runtime/Rendezvous.h"

#include <algorithm>

using namespace cleave;
using namespace cleave::runtime;

/// The sum over the replicas of the caller's group (all replicas when
/// group_assignment is empty), as XLA's cross-replica sum.
std::optional<Tensor>
cleave::runtime::crossReplicaSum(Rendezvous &rendezvous, const void *key,
                                 int64_t numReplicas, const Tensor &input,
                                 const Tensor &groups, std::string &error) {
  int64_t replica = getCurrentReplica();
  if (replica < 0) // one replica: its own sum
    return input;
  // A replica that fails here stops the others' waits at once (compiled
  // code does not stop at a failed call).
  auto fail = [&](std::string message) -> std::optional<Tensor> {
    error = std::move(message);
    rendezvous.cancel();
    return std::nullopt;
  };
  // Without a group assignment, all replicas form one group.
  int64_t groupIndex = 0, member = replica, groupSize = numReplicas;
  if (groups.numElements() != 0) {
    if (groups.rank() != 2)
      return fail("group_assignment must be a matrix, got shape " +
                  shapeString(groups.shape()));
    int64_t numGroups = groups.shape()[0], size = groups.shape()[1];
    member = -1;
    for (int64_t g = 0; g < numGroups; ++g)
      for (int64_t i = 0; i < size; ++i) {
        int64_t id = groups.getAsInt(g * size + i);
        if (id < 0 || id >= numReplicas)
          return fail("group_assignment names replica " + std::to_string(id) +
                      ", but the computation has " +
                      std::to_string(numReplicas) + " replicas");
        if (id == replica) {
          groupIndex = g;
          member = i;
        }
      }
    if (member < 0)
      return fail("replica " + std::to_string(replica) +
                  " is in no group of group_assignment");
    groupSize = size;
  }
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
  return result;
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
