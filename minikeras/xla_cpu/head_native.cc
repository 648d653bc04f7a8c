// A classifier's head on the CPU, as XLA FFI handlers, row by row over the last axis
// (minikeras/xla_cpu/head_native.py builds this file; ops.nn_losses calls it inside compiled
// programs):
//
//   softmax:           y = exp(x - max(x)) * (1 / sum(exp(x - max(x))))
//   its gradient:      dx = y * (g - sum(g * y))
//   sparse categorical cross-entropy of probabilities p and a label l (Keras' formula):
//                      q = p * (1 / sum(p)),  c = clip(q, 1e-7, 1 - 1e-7),  loss = -log(c[l])
//   its gradient:      t = where(1e-7 <= q and max(q, 1e-7) <= 1 - 1e-7, onehot(l) * -g / c, 0) / sum(p)
//                      dp = t + sum(-t * q)
//
// Why: XLA:CPU compiles each loop fusion of these into code for many vector widths and tails; for
// the MNIST CNN's 128 x 10 probabilities that was ten kernels and a noticeable share of the step's
// first call, for a few microseconds of work. A custom call compiles nothing.
//
// Each computes what XLA computes for the jax formulas: exp (a Cephes-style range reduction and
// polynomial, with the multiply-adds XLA:CPU contracts into fused multiply-adds written out as
// fmas; the file is built with -ffp-contract=off so that the compiler adds no others), row sums
// in order, divisions by a row's sum as multiplications by its reciprocal, as XLA rewrites them.
// tests/test_head_native.py compares the bits. The one exception is the cross-entropy's log (the
// C library's, not XLA's polynomial): the loss may differ from XLA's in the last bit; no gradient
// depends on it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::madd;
using minikeras::xla_exp;

namespace {

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

constexpr float kClipLow = 1e-7f;
constexpr float kClipHigh = 1.0f - 1e-7f;  // 0.99999988f, as float32 rounds Keras' 1 - 1e-7

// 1 / sum(p), the row's sum taken in order
inline float inverse_sum(const float* p, int64_t n) {
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) sum += p[j];
  return 1.0f / sum;
}

inline float clip(float q) { return std::min(std::max(q, kClipLow), kClipHigh); }  // NaN stays NaN

void crossentropy_rows(const float* p, const int32_t* labels, float* loss, int64_t rows, int64_t n) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* pr = p + row * n;
    const int32_t label = labels[row];
    const float r = inverse_sum(pr, n);
    // -sum(onehot * log(c)): the label's term alone (the other terms are zeros); no term for a
    // label out of range, as for XLA's one-hot
    loss[row] = (label >= 0 && label < n) ? -std::log(clip(pr[label] * r)) : -0.0f;
  }
}

void crossentropy_gradient_rows(const float* p, const int32_t* labels, const float* g, float* dp, int64_t rows,
                                int64_t n) {
  for (int64_t row = 0; row < rows; ++row) {
    const float* pr = p + row * n;
    float* dr = dp + row * n;
    const int32_t label = labels[row];
    const float r = inverse_sum(pr, n);
    const float minus_g = -g[row];
    // dr first holds the masked dq; XLA contracts t = dq * r into both of its uses (an fma each)
    float total = 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      const float q = pr[j] * r;
      const float dq = ((j == label) ? minus_g : 0.0f * minus_g) / clip(q);
      const bool inside = q >= kClipLow && std::max(q, kClipLow) <= kClipHigh;
      dr[j] = inside ? dq : 0.0f;
      total = madd(-(dr[j] * r), q, total);
    }
    for (int64_t j = 0; j < n; ++j) dr[j] = madd(dr[j], r, total);
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

ffi::Error CrossentropyImpl(ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::S32> labels, ffi::ResultBuffer<ffi::F32> loss) {
  const int64_t rows = labels.element_count();
  if (rows <= 0 || p.element_count() % rows != 0 || loss->element_count() != rows)
    return ffi::Error::InvalidArgument("sparse categorical crossentropy: expected one label and one loss per row of "
                                       "probabilities, received " + std::to_string(p.element_count()) +
                                       " probabilities and " + std::to_string(rows) + " labels");
  crossentropy_rows(p.typed_data(), labels.typed_data(), loss->typed_data(), rows, p.element_count() / rows);
  return ffi::Error::Success();
}

ffi::Error CrossentropyGradientImpl(ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::S32> labels, ffi::Buffer<ffi::F32> g,
                                    ffi::ResultBuffer<ffi::F32> dp) {
  const int64_t rows = labels.element_count();
  if (rows <= 0 || p.element_count() % rows != 0 || g.element_count() != rows ||
      dp->element_count() != p.element_count())
    return ffi::Error::InvalidArgument("sparse categorical crossentropy gradient: expected one label and one "
                                       "cotangent per row of probabilities, received " +
                                       std::to_string(p.element_count()) + " probabilities, " +
                                       std::to_string(rows) + " labels and " + std::to_string(g.element_count()) +
                                       " cotangents");
  crossentropy_gradient_rows(p.typed_data(), labels.typed_data(), g.typed_data(), dp->typed_data(), rows,
                             p.element_count() / rows);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasSparseCrossentropy, CrossentropyImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()   // p, rows of probabilities
                                  .Arg<ffi::Buffer<ffi::S32>>()   // one label per row
                                  .Ret<ffi::Buffer<ffi::F32>>());  // one loss per row

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasSparseCrossentropyGradient, CrossentropyGradientImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()   // p
                                  .Arg<ffi::Buffer<ffi::S32>>()   // labels
                                  .Arg<ffi::Buffer<ffi::F32>>()   // g, one cotangent per row
                                  .Ret<ffi::Buffer<ffi::F32>>());  // dp

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
