//===- AllReducedStep.cpp - the plain step, synchronous across processes -===//

#include "AllReducedStep.h"

#include "ParameterServer.h"
#include "Support.h"

#include "cleave/Runtime/ProcessGroup.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>
#include <map>

using namespace cleave;
using namespace cleave::estimator;

llvm::Expected<std::unique_ptr<AllReducedStep>>
AllReducedStep::create(runtime::Session &session, llvm::StringRef globalStep,
                       llvm::StringRef trainOp, runtime::ProcessGroup &trainers,
                       bool mean) {
  // The optimizer's updates and their gradients, as the ps tasks find them.
  auto layout = ParameterLayout::build(session, globalStep, 1);
  if (!layout)
    return layout.takeError();
  return std::unique_ptr<AllReducedStep>(new AllReducedStep(
      std::move(layout->gradients), trainOp.str(), trainers, mean));
}

llvm::Error AllReducedStep::exchange(llvm::ArrayRef<Tensor> values,
                                     runtime::Session &session) {
  // One flat buffer per dtype, so that a step is one collective per dtype
  // (XLA's all-reduce combiner).
  std::map<int32_t, llvm::SmallVector<size_t>> byDType;
  for (auto [k, value] : llvm::enumerate(values))
    byDType[value.dtype()].push_back(k);
  runtime::NamedTensors feeds(values.size());
  for (auto &[dtype, members] : byDType) {
    int64_t count = 0;
    for (size_t k : members)
      count += values[k].numElements();
    Tensor flat = Tensor::uninitialized(dtype, {count});
    size_t offset = 0;
    for (size_t k : members) {
      std::memcpy(flat.raw() + offset, values[k].raw(), values[k].byteSize());
      offset += values[k].byteSize();
    }
    if (llvm::Error failure = trainers.allReduceSum(flat.raw(), count, dtype))
      return failure;
    if (mean) {
      double scale = 1.0 / trainers.getSize();
      bool scaled = false;
      if (dtype == kFloat) {
        for (float &x : llvm::MutableArrayRef(flat.data<float>(), count))
          x = float(x * scale);
        scaled = true;
      } else if (dtype == kDouble) {
        for (double &x : llvm::MutableArrayRef(flat.data<double>(), count))
          x *= scale;
        scaled = true;
      }
      if (!scaled)
        return makeError("training across processes: the mean of " +
                         dtypeName(dtype) +
                         " gradients (set model.optimizer.reduction: SUM)");
    }
    offset = 0;
    for (size_t k : members) {
      Tensor sum = Tensor::uninitialized(dtype, values[k].shape());
      std::memcpy(sum.raw(), flat.raw() + offset, sum.byteSize());
      offset += sum.byteSize();
      feeds[k] = {gradients[k], std::move(sum)};
    }
  }
  auto ran = session.run(feeds, {}, {trainOp});
  if (!ran)
    return ran.takeError();
  return llvm::Error::success();
}
