//===- Convolution.cpp - convolutions on oneDNN's direct kernels ----------===//
//
// A convolution of NHWC images with an HWCF filter runs on oneDNN's direct
// convolution kernels (jit:avx2 / avx512 on x86). They read the NHWC
// activations as they are and want the filter in a blocked layout (input
// and output channels in blocks of 8 or 16): the filter is reordered on
// every call, which costs far less than the im2col copies the kernels
// avoid (docs/Compiler.md has the figures). A 1x1 window over contiguous
// pixels is a plain matrix product and calls sgemm.
//
// The primitive for each geometry is created once and kept: creating one
// JIT-compiles its kernel. Execution is thread-safe (replicas run on
// threads): each call brings its own scratchpad and reordered buffers.
//
// oneDNN's threads are OpenMP's: Debian builds it against libgomp, but
// libomp, which the compiled loops use, exports the same GOMP_* entry
// points and is loaded first, so both run on one pool (a test checks it).
//
//===----------------------------------------------------------------------===//

#include "cleave/Target/CPU/KernelLibrary.h"

#include "cleave/Support/BufferPool.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <tuple>

namespace {
using dnnl::memory;

/// Everything that selects a primitive: the geometry, the input's strides,
/// and whether the result accumulates onto the output.
using ConvKey =
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, bool>;

/// A primitive and the layouts around it: the caller's (plain) and the
/// kernel's (as the implementation oneDNN chose wants them), with the
/// reorders between them where they differ.
struct ConvPlan {
  memory::desc userSrc, userWeights, userDst;
  dnnl::convolution_forward conv;
  memory::desc src, weights, dst;
  memory::desc scratchpad;
  std::optional<dnnl::reorder> toSrc, toWeights, toDst, fromDst;
};
} // namespace

static dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

static std::optional<dnnl::reorder> reorderIfNeeded(const memory::desc &from,
                                                    const memory::desc &to) {
  if (from == to)
    return std::nullopt;
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpuEngine(), from,
                                                     cpuEngine(), to));
}

static std::unique_ptr<ConvPlan> makePlan(const ConvKey &key) {
  auto [n, c, inH, inW, strideN, strideH, strideW, kh, kw, f, oh, ow, sh, sw,
        dh, dw, accumulate] = key;
  auto plan = std::make_unique<ConvPlan>();
  using tag = memory::format_tag;
  using dt = memory::data_type;
  // Logical dimensions are NCHW / OIHW whatever the storage.
  plan->userSrc = memory::desc({n, c, inH, inW}, dt::f32,
                               memory::dims{strideN, 1, strideH, strideW});
  plan->userWeights = memory::desc({f, c, kh, kw}, dt::f32, tag::hwio);
  plan->userDst = memory::desc({n, f, oh, ow}, dt::f32, tag::nhwc);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    attr.set_post_ops(sum);
  }
  // The layouts to try, fastest first (measured: docs/Compiler.md): the
  // caller's NHWC activations with blocked weights, which saves reordering
  // the activations; all blocked; all plain (oneDNN's im2col + GEMM). A
  // kernel must not be oneDNN's reference loops, which are 100x slower.
  struct Layouts {
    tag src, weights, dst;
  };
  static const Layouts candidates[] = {{tag::nhwc, tag::any, tag::nhwc},
                                       {tag::any, tag::any, tag::any},
                                       {tag::nhwc, tag::hwio, tag::nhwc}};
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  for (const Layouts &layouts : candidates) {
    // oneDNN counts dilation from 0 (1 here is its 0).
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference,
        dnnl::algorithm::convolution_direct,
        memory::desc({n, c, inH, inW}, dt::f32, layouts.src),
        memory::desc({f, c, kh, kw}, dt::f32, layouts.weights),
        memory::desc({n, f, oh, ow}, dt::f32, layouts.dst), {sh, sw},
        {dh - 1, dw - 1}, {0, 0}, {0, 0});
    pd.emplace(desc, attr, cpuEngine());
    if (std::string(pd->impl_info_str()).rfind("ref", 0) != 0)
      break;
  }
  plan->conv = dnnl::convolution_forward(*pd);
  plan->src = pd->src_desc();
  plan->weights = pd->weights_desc();
  plan->dst = pd->dst_desc();
  plan->scratchpad = pd->scratchpad_desc();
  plan->toSrc = reorderIfNeeded(plan->userSrc, plan->src);
  plan->toWeights = reorderIfNeeded(plan->userWeights, plan->weights);
  plan->fromDst = reorderIfNeeded(plan->dst, plan->userDst);
  if (accumulate)
    plan->toDst = reorderIfNeeded(plan->userDst, plan->dst);
  return plan;
}

static const ConvPlan &getPlan(const ConvKey &key) {
  static std::mutex mutex;
  static std::map<ConvKey, std::unique_ptr<ConvPlan>> plans;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<ConvPlan> &plan = plans[key];
  if (!plan)
    plan = makePlan(key);
  return *plan;
}

namespace {
/// A pool buffer for the duration of a call.
class ScopedBuffer {
public:
  explicit ScopedBuffer(size_t bytes)
      : data(bytes ? cleave::allocateBuffer(bytes) : nullptr) {
    if (bytes && !data)
      throw std::bad_alloc();
  }
  ~ScopedBuffer() { cleave::releaseBuffer(data); }
  ScopedBuffer(const ScopedBuffer &) = delete;
  ScopedBuffer &operator=(const ScopedBuffer &) = delete;
  void *get() const { return data; }

private:
  void *data;
};

/// `user` itself where the kernel reads the caller's layout, else a pool
/// buffer in the kernel's layout, filled by `toKernel` when given.
struct KernelOperand {
  KernelOperand(const memory::desc &userDesc, void *userData,
                const memory::desc &kernelDesc,
                const std::optional<dnnl::reorder> &toKernel,
                bool needed, dnnl::stream &stream)
      : user(userDesc, cpuEngine(), userData),
        buffer(userDesc == kernelDesc ? 0 : kernelDesc.get_size()),
        kernel(userDesc == kernelDesc
                   ? user
                   : memory(kernelDesc, cpuEngine(), buffer.get())) {
    if (needed && toKernel)
      toKernel->execute(stream, user, kernel);
  }
  memory user;
  ScopedBuffer buffer;
  memory kernel;
};
} // namespace

/// Runs the convolution on oneDNN; false with `error` set if oneDNN fails
/// (out of memory: it has a reference kernel for every geometry).
static bool convolve(const float *in, int64_t n, int64_t inStrideN,
                     int64_t inStrideH, int64_t inStrideW, int64_t c,
                     const float *filter, int64_t kh, int64_t kw, int64_t f,
                     float *out, int64_t oh, int64_t ow, int64_t strideH,
                     int64_t strideW, int64_t dilationH, int64_t dilationW,
                     bool accumulate, std::string &error) try {
  // The rows and columns the windows reach: the input may extend further
  // (the compiled code passes only its strides).
  int64_t inH = (oh - 1) * strideH + (kh - 1) * dilationH + 1;
  int64_t inW = (ow - 1) * strideW + (kw - 1) * dilationW + 1;
  const ConvPlan &plan =
      getPlan({n, c, inH, inW, inStrideN, inStrideH, inStrideW, kh, kw, f, oh,
               ow, strideH, strideW, dilationH, dilationW, accumulate});
  dnnl::stream stream(cpuEngine());
  KernelOperand src(plan.userSrc, const_cast<float *>(in), plan.src,
                    plan.toSrc, true, stream);
  KernelOperand weights(plan.userWeights, const_cast<float *>(filter),
                        plan.weights, plan.toWeights, true, stream);
  KernelOperand dst(plan.userDst, out, plan.dst, plan.toDst, accumulate,
                    stream);
  ScopedBuffer scratchpad(plan.scratchpad.get_size());
  plan.conv.execute(
      stream, {{DNNL_ARG_SRC, src.kernel},
               {DNNL_ARG_WEIGHTS, weights.kernel},
               {DNNL_ARG_DST, dst.kernel},
               {DNNL_ARG_SCRATCHPAD,
                memory(plan.scratchpad, cpuEngine(), scratchpad.get())}});
  if (plan.fromDst)
    plan.fromDst->execute(stream, dst.kernel, dst.user);
  stream.wait();
  return true;
} catch (const dnnl::error &e) {
  error = e.what();
  return false;
} catch (const std::bad_alloc &) {
  error = "out of memory";
  return false;
}

extern "C" void cleave_cpu_conv2d_f32(
    const float *in, int64_t n, int64_t inStrideN, int64_t inStrideH,
    int64_t inStrideW, int64_t c, const float *filter, int64_t kh, int64_t kw,
    int64_t f, float *out, int64_t oh, int64_t ow, int64_t strideH,
    int64_t strideW, int64_t dilationH, int64_t dilationW, float beta) {
  if (n == 0 || oh == 0 || ow == 0 || f == 0)
    return;
  // A 1x1 window over contiguous pixels: the input is the matrix already.
  if (kh == 1 && kw == 1 && strideH == 1 && strideW == 1 &&
      inStrideW == c && inStrideH == ow * c && inStrideN == oh * ow * c) {
    cleave_cpu_sgemm(0, 0, n * oh * ow, f, c, in, c, filter, f, beta, out, f);
    return;
  }
  if (c == 0 || kh == 0 || kw == 0) {
    // An empty sum: the output is beta times itself.
    for (int64_t i = 0, e = n * oh * ow * f; i < e; ++i)
      out[i] = beta == 0 ? 0 : out[i] * beta;
    return;
  }
  // Scaling the output first makes every accumulation a plain sum.
  bool accumulate = beta != 0;
  if (accumulate && beta != 1)
    for (int64_t i = 0, e = n * oh * ow * f; i < e; ++i)
      out[i] *= beta;
  std::string error;
  if (!convolve(in, n, inStrideN, inStrideH, inStrideW, c, filter, kh, kw, f,
                out, oh, ow, strideH, strideW, dilationH, dilationW,
                accumulate, error)) {
    // Compiled code has no way to fail a step from a library call; oneDNN
    // fails only where memory is exhausted.
    std::fprintf(stderr, "cleave: convolution failed in oneDNN: %s\n",
                 error.c_str());
    std::abort();
  }
}
