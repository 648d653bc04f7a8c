// Sparse categorical cross-entropy of logits over wide rows (a language model's vocabulary), and
// its gradient, as XLA FFI handlers for the CPU. minikeras/xla_cpu/logits_crossentropy_native.py
// builds this file; ops.nn_losses calls it inside compiled programs.
//
//   forward:   m = max(x), L = log(sum(exp(x - m))), loss = -((x[l] - m) - L)   (0 for l outside [0, n))
//              out[row] = (loss, m, L)
//   gradient:  dx = s * exp((x - m) - L), then dx[l] += -g_loss,
//              with g_loss = g[row][0] (0 for l outside [0, n)) and s = g_loss + g[row][2]
//
// Why: over a 20,000-word vocabulary (keras.io's miniature GPT: 2,560 rows) each pass over the
// logits is 205 MB. XLA:CPU fuses the row maximum into the product that makes the logits and
// writes them shifted by it, then reads them again for the sums of exponentials: two passes more
// than this forward, which reads each row once from memory (its second pass, the exponentials,
// finds the row in cache). The gradient is one pass, as XLA's.
//
// The gradient has the bits of XLA's code for the same formula, given the same (m, L): XLA's exp
// (native_kernels.h), the subtractions and the product in the same order (built with
// -ffp-contract=off). The forward sums the exponentials in doubles (16 running lane sums, added in
// order at the end) and takes the C library's log: L may differ from XLA's in the last bits (it
// is nearer the exact value), which tests/test_xla_cpu_logits_crossentropy_native.py bounds.
// Rows are shared among the threads, each row's result the same whatever thread computes it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace ffi = xla::ffi;
using minikeras::xla_exp;
#if defined(__AVX512F__)
using minikeras::xla_exp16;
#endif

namespace {

constexpr int kLanes = 16;
constexpr int64_t kRowsPerTask = 4;  // a unit of work shared among the threads

// max(a, b) with a NaN in either giving NaN, as XLA's maximum
inline float nan_max(float a, float b) { return (b > a || b != b) ? b : a; }


float row_max(const float* x, int64_t n) {
  int64_t j = 0;
  float top = -INFINITY;
#if defined(__AVX512F__)
  __m512 lanes = _mm512_set1_ps(-INFINITY);
  __mmask16 nan = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const __m512 v = _mm512_loadu_ps(x + j);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    lanes = _mm512_max_ps(lanes, v);
  }
  if (nan) return NAN;
  top = _mm512_reduce_max_ps(lanes);
#endif
  for (; j < n; ++j) top = nan_max(top, x[j]);
  return top;
}

// sum(exp(x - top)) in kLanes running sums of doubles, added in lane order at the end and rounded
// to float once: over 20,000 classes float32 running sums lost up to 5e-6 of the sum, more than
// XLA's sum does; the doubles' error is far below float32's rounding
float row_exp_sum(const float* x, int64_t n, float top) {
  double lanes[kLanes] = {};
  int64_t j = 0;
#if defined(__AVX512F__)
  __m512d low = _mm512_setzero_pd(), high = _mm512_setzero_pd();
  const __m512 shift = _mm512_set1_ps(top);
  for (; j + kLanes <= n; j += kLanes) {
    const __m512 e = xla_exp16(_mm512_sub_ps(_mm512_loadu_ps(x + j), shift));
    low = _mm512_add_pd(low, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    high = _mm512_add_pd(high, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  _mm512_storeu_pd(lanes, low);
  _mm512_storeu_pd(lanes + 8, high);
#endif
  for (; j < n; ++j) lanes[j % kLanes] += xla_exp(x[j] - top);  // the tail, or every term without AVX-512
  double sum = 0.0;
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return static_cast<float>(sum);
}

// dr[j] = scale * exp((x[j] - top) - log_sum) for j < n
void scaled_exps(const float* x, float* dr, int64_t n, float top, float log_sum, float scale) {
  int64_t j = 0;
#if defined(__AVX512F__)
  const __m512 t = _mm512_set1_ps(top), l = _mm512_set1_ps(log_sum), s = _mm512_set1_ps(scale);
  for (; j + kLanes <= n; j += kLanes)
    _mm512_storeu_ps(dr + j, _mm512_mul_ps(s, xla_exp16(_mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + j), t), l))));
#endif
  for (; j < n; ++j) dr[j] = scale * xla_exp((x[j] - top) - log_sum);
}

void forward_rows(const float* x, const int32_t* labels, float* out, int64_t begin, int64_t end, int64_t n) {
  for (int64_t row = begin; row < end; ++row) {
    const float* xr = x + row * n;
    const float top = row_max(xr, n);
    const float log_sum = std::log(row_exp_sum(xr, n, top));
    const int32_t label = labels[row];
    const bool valid = label >= 0 && label < n;
    out[3 * row] = valid ? -((xr[label] - top) - log_sum) : 0.0f;
    out[3 * row + 1] = top;
    out[3 * row + 2] = log_sum;
  }
}

void gradient_rows(const float* x, const int32_t* labels, const float* out, const float* g, float* dx,
                   int64_t begin, int64_t end, int64_t n) {
  for (int64_t row = begin; row < end; ++row) {
    const float* xr = x + row * n;
    float* dr = dx + row * n;
    const int32_t label = labels[row];
    const bool valid = label >= 0 && label < n;
    const float g_loss = valid ? g[3 * row] : 0.0f;
    const float scale = g_loss + g[3 * row + 2];
    const float top = out[3 * row + 1], log_sum = out[3 * row + 2];
    scaled_exps(xr, dr, n, top, log_sum, scale);
    if (valid) dr[label] += -g_loss;
  }
}

// Runs rows(begin, end) over all rows in tasks of kRowsPerTask, shared among `threads` workers.
template <typename Rows>
void over_rows(ffi::ThreadPool& pool, int64_t rows, int64_t threads, Rows run_rows) {
  const int64_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  minikeras::for_each_index(pool, tasks, minikeras::helpers_for(pool, tasks, threads), [&](int64_t, int64_t task) {
    run_rows(task * kRowsPerTask, std::min(rows, (task + 1) * kRowsPerTask));
  });
}

ffi::Error ForwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::S32> labels,
                       ffi::ResultBuffer<ffi::F32> out, int64_t threads) {
  const int64_t rows = labels.element_count();
  if (rows <= 0 || x.element_count() % rows != 0 || out->element_count() != 3 * rows)
    return ffi::Error::InvalidArgument("sparse categorical cross-entropy of logits: expected one label and three "
                                       "outputs per row of logits, received " + std::to_string(x.element_count()) +
                                       " logits and " + std::to_string(rows) + " labels");
  const int64_t n = x.element_count() / rows;
  const float* xp = x.typed_data();
  const int32_t* lp = labels.typed_data();
  float* op = out->typed_data();
  over_rows(pool, rows, threads, [&](int64_t begin, int64_t end) { forward_rows(xp, lp, op, begin, end, n); });
  return ffi::Error::Success();
}

ffi::Error GradientImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::S32> labels,
                        ffi::Buffer<ffi::F32> out, ffi::Buffer<ffi::F32> g, ffi::ResultBuffer<ffi::F32> dx,
                        int64_t threads) {
  const int64_t rows = labels.element_count();
  if (rows <= 0 || x.element_count() % rows != 0 || out.element_count() != 3 * rows ||
      g.element_count() != 3 * rows || dx->element_count() != x.element_count())
    return ffi::Error::InvalidArgument("sparse categorical cross-entropy of logits, gradient: expected one label and "
                                       "three forward outputs and cotangents per row of logits, received " +
                                       std::to_string(x.element_count()) + " logits and " + std::to_string(rows) +
                                       " labels");
  const int64_t n = x.element_count() / rows;
  const float *xp = x.typed_data(), *op = out.typed_data(), *gp = g.typed_data();
  const int32_t* lp = labels.typed_data();
  float* dp = dx->typed_data();
  over_rows(pool, rows, threads, [&](int64_t begin, int64_t end) { gradient_rows(xp, lp, op, gp, dp, begin, end, n); });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasLogitsCrossentropy, ForwardImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // logits, rows of n
                                  .Arg<ffi::Buffer<ffi::S32>>()  // one label per row
                                  .Ret<ffi::Buffer<ffi::F32>>()  // (loss, max, log of the sum) per row
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasLogitsCrossentropyGradient, GradientImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // logits
                                  .Arg<ffi::Buffer<ffi::S32>>()  // labels
                                  .Arg<ffi::Buffer<ffi::F32>>()  // the forward's output
                                  .Arg<ffi::Buffer<ffi::F32>>()  // its cotangent
                                  .Ret<ffi::Buffer<ffi::F32>>()  // the logits' gradient
                                  .Attr<int64_t>("threads"));
