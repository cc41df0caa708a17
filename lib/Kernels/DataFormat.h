//===- DataFormat.h - NCHW nodes on NHWC kernels ---------------*- C++ -*-===//
//
// The convolution and pooling kernels compute in NHWC (NDHWC); a node in
// NCHW (NCDHW) runs them with its images and image shapes reordered to
// channels last and its image result reordered back. The attrs are
// reordered where the kernels read them.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_KERNELS_DATAFORMAT_H
#define CLEAVE_LIB_KERNELS_DATAFORMAT_H

#include "KernelContext.h"

#include <numeric>

namespace cleave::interp {

/// What an input or the result of a windowed op is, for data_format.
enum class LayoutRole { Image, ImageShape, Other };

/// Runs `channelsLast` on a node whose data_format is channels-first (NCHW
/// for `rank` 4, NCDHW for 5), its inputs of the given roles (in order)
/// reordered, its result reordered back when it is an image; other nodes
/// run it as they are.
template <Kernel channelsLast, int rank, LayoutRole result,
          LayoutRole... inputs>
mlir::LogicalResult inDataFormat(KernelContext &ctx) {
  const char *channelsFirst = rank == 4 ? "NCHW" : "NCDHW";
  if (ctx.getString("data_format").value_or("") != channelsFirst)
    return channelsLast(ctx);
  // {0, 2, ..., rank-1, 1} and its inverse {0, rank-1, 1, ..., rank-2}.
  std::vector<int64_t> toLast(rank), toFirst(rank);
  std::iota(toLast.begin() + 1, toLast.end() - 1, 2);
  toLast.back() = 1;
  std::iota(toFirst.begin() + 2, toFirst.end(), 1);
  toFirst[1] = rank - 1;
  const LayoutRole roles[] = {inputs...};
  for (size_t i = 0; i < ctx.inputs.size() && i < sizeof...(inputs); ++i) {
    Tensor &t = ctx.inputs[i];
    if (roles[i] == LayoutRole::Image) {
      if (t.rank() != rank)
        return ctx.error() << "input " << i << " must be " << rank
                           << "-D, got shape " << shapeString(t.shape());
      t = transposed(t, toLast);
    } else if (roles[i] == LayoutRole::ImageShape) {
      std::vector<int64_t> shape = toInts(t);
      if (int64_t(shape.size()) != rank)
        return ctx.error() << "input " << i << " must hold " << rank
                           << " dimensions";
      Tensor reordered(t.dtype(), {rank});
      for (int d = 0; d < rank; ++d)
        reordered.setFromDouble(d, double(shape[toLast[d]]));
      t = reordered;
    }
  }
  if (failed(channelsLast(ctx)))
    return mlir::failure();
  if (result == LayoutRole::Image)
    ctx.outputs[0] = transposed(ctx.outputs[0], toFirst);
  return mlir::success();
}

} // namespace cleave::interp

#endif // CLEAVE_LIB_KERNELS_DATAFORMAT_H
