// Softmax over the last axis and its gradient, as XLA FFI handlers for the CPU
// (minikeras/xla_cpu/softmax_native.py builds this file; ops.nn_losses' softmax calls it inside
// compiled programs):
//
//   forward:   y = exp(x - max(x)) * (1 / sum(exp(x - max(x))))      per row
//   backward:  dx = y * (g - sum(g * y))                              per row
//
// Why: XLA:CPU compiles each of the five loop fusions of a softmax and its gradient into code
// for many vector widths and tails; for the MNIST CNN's 128 x 10 probabilities that was ~0.2 s of
// the step's first call on a Zen 3, for a few microseconds of work. A custom call compiles nothing.
//
// The forward pass computes what XLA computes for jax.nn.softmax: its exp (a Cephes-style range
// reduction and polynomial, with the multiply-adds XLA:CPU contracts into fused multiply-adds
// written out as fmas; the file is built with -ffp-contract=off so that the compiler adds no
// others), the row sum in order, and the division as a multiplication by the reciprocal, as XLA
// rewrites it. tests/test_softmax_native.py compares the bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

inline float madd(float a, float b, float c) {
#if defined(__FMA__) || defined(__aarch64__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// XLA:CPU's float32 exp: clamp to [-87.8, 88.8] (NaN passes), n = floor(x log2(e) + 1/2) clamped
// to [-127, 127], r = x - n ln(2) in two parts, a degree-5 polynomial, times 2^n.
inline float xla_exp(float x) {
  x = x < -87.8f ? -87.8f : x;
  x = x > 88.8f ? 88.8f : x;
  float n = std::floor(madd(x, 1.44269504088896341f, 0.5f));
  n = n < -127.0f ? -127.0f : n;
  n = n > 127.0f ? 127.0f : n;
  float r = madd(-n, 0.693359375f, x);
  r = madd(-n, -2.12194440e-4f, r);
  float p = madd(r, 1.9875691500e-4f, 1.3981999507e-3f);
  p = madd(p, r, 8.3334519073e-3f);
  p = madd(p, r, 4.1665795894e-2f);
  p = madd(p, r, 1.6666665459e-1f);
  p = madd(p, r, 5.0000001201e-1f);
  const float y = madd(p, r * r, r) + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return y * scale;
}

void forward_rows(const float* x, float* y, int64_t begin, int64_t end, int64_t n) {
  for (int64_t row = begin; row < end; ++row) {
    const float* xr = x + row * n;
    float* yr = y + row * n;
    float top = -INFINITY;
    for (int64_t j = 0; j < n; ++j) top = std::max(top, xr[j]);  // NaN rows give NaN below either way
    float sum = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      yr[j] = xla_exp(xr[j] - top);
      sum += yr[j];
    }
    const float inverse = 1.0f / sum;
    for (int64_t j = 0; j < n; ++j) yr[j] *= inverse;
  }
}

void backward_rows(const float* y, const float* g, float* dx, int64_t begin, int64_t end, int64_t n) {
  for (int64_t row = begin; row < end; ++row) {
    const float* yr = y + row * n;
    const float* gr = g + row * n;
    float dot = 0.0f;
    for (int64_t j = 0; j < n; ++j) dot = madd(gr[j], yr[j], dot);
    for (int64_t j = 0; j < n; ++j) dx[row * n + j] = yr[j] * (gr[j] - dot);
  }
}

ffi::Error ForwardImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, int64_t n) {
  const int64_t size = x.element_count();
  if (n <= 0 || size % n != 0 || y->element_count() != size)
    return ffi::Error::InvalidArgument("softmax: expected rows of " + std::to_string(n) + " and an output of " +
                                       std::to_string(size) + " elements");
  forward_rows(x.typed_data(), y->typed_data(), 0, size / n, n);
  return ffi::Error::Success();
}

ffi::Error BackwardImpl(ffi::Buffer<ffi::F32> y, ffi::Buffer<ffi::F32> g, ffi::ResultBuffer<ffi::F32> dx,
                        int64_t n) {
  const int64_t size = y.element_count();
  if (n <= 0 || size % n != 0 || g.element_count() != size || dx->element_count() != size)
    return ffi::Error::InvalidArgument("softmax gradient: expected y, g and dx of " + std::to_string(size) +
                                       " elements in rows of " + std::to_string(n));
  backward_rows(y.typed_data(), g.typed_data(), dx->typed_data(), 0, size / n, n);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasSoftmaxForward, ForwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y
                                  .Attr<int64_t>("n"));          // the row length (the last axis)

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasSoftmaxBackward, BackwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // y, the forward's output
                                  .Arg<ffi::Buffer<ffi::F32>>()  // g, its cotangent
                                  .Ret<ffi::Buffer<ffi::F32>>()  // dx
                                  .Attr<int64_t>("n"));
