// The per-channel mean and (biased) variance of a float32 array viewed as (rows, C), C a
// multiple of 16: BatchNormalization's training statistics over every axis but the last, as an
// XLA FFI handler for the CPU. minikeras/xla_cpu/batch_moments_native.py builds and calls it.
//
// Why: XLA:CPU takes the two-pass statistics as three passes over memory (the mean, the centered
// array written out, the sum of its squares). Here the rows are cut into fixed parts small enough
// for L1/L2 (`part_rows`, one 32x32x16 image at 16 channels), and each part's mean and centered
// sum of squares are two passes over data already in cache, so the array is read from memory
// once. The parts are combined in a fixed order in double (Chan et al.'s pairwise update with
// equal-sized parts):
//
//   mean = sum_p m_p mean_p / n,   M2 = sum_p M2_p + sum_p m_p (mean_p - mean)^2,   var = M2 / n
//
// so the result is as stable as the two-pass formula (no cancellation where |mean| >> std) and
// does not depend on how the parts were shared out among threads.
//
// The second handler takes the two sums of BatchNormalization's gradient, sum(g) and
// sum(g * (x - mean)) per channel, in one pass over g and x with the subtraction inside (XLA's
// reductions take a product of two arrays, not a difference, so XLA wrote x - mean out for
// them); the parts' sums are added in order in double.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::for_each_index;
using minikeras::helpers_for;
using minikeras::load;
using minikeras::v16;

namespace {

constexpr int kBlock = 4;  // channel vectors summed together: 64 channels, 4 (AVX-512) to 16 registers

// mean[c] and m2[c] = sum over rows of (x[r, c] - mean[c])^2 for the `rows` rows at x, for the
// NV channel vectors from c0: two passes over the part, which is in cache for the second.
template <int NV>
void part_block(const float* x, int64_t rows, int64_t c, int64_t c0, float* mean, float* m2) {
  v16 sum[NV];
  for (int v = 0; v < NV; ++v) sum[v] = v16{};
  for (int64_t r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v) sum[v] += load(x + r * c + c0 + 16 * v);
  // the second pass sums the deviations too: the first pass's mean is off by the rounding of
  // its sum, and sum(d)^2 / rows takes that error out of the squares (the corrected two-pass
  // formula), which matters where |mean| >> std
  v16 m[NV], deviations[NV], sq[NV];
  const float inverse = 1.0f / static_cast<float>(rows);
  for (int v = 0; v < NV; ++v) {
    m[v] = sum[v] * inverse;
    deviations[v] = sq[v] = v16{};
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v) {
      const v16 d = load(x + r * c + c0 + 16 * v) - m[v];
      deviations[v] += d;
      sq[v] += d * d;
    }
  for (int v = 0; v < NV; ++v) {
    minikeras::store(mean + c0 + 16 * v, m[v] + deviations[v] * inverse);
    minikeras::store(m2 + c0 + 16 * v, sq[v] - deviations[v] * deviations[v] * inverse);
  }
}

void part_moments(const float* x, int64_t rows, int64_t c, float* mean, float* m2) {
  int64_t c0 = 0;
  for (; c0 + 16 * kBlock <= c; c0 += 16 * kBlock) part_block<kBlock>(x, rows, c, c0, mean, m2);
  for (; c0 < c; c0 += 16) part_block<1>(x, rows, c, c0, mean, m2);
}

ffi::Error MomentsImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> mean,
                       ffi::ResultBuffer<ffi::F32> variance, int64_t part_rows, int64_t threads) {
  const auto d = x.dimensions();
  if (d.size() != 2 || d[1] % 16 != 0 || d[0] < 1 || part_rows < 1 || mean->element_count() != d[1] ||
      variance->element_count() != d[1])
    return ffi::Error::InvalidArgument("batch moments: expected x of shape (rows >= 1, C % 16 == 0), part_rows >= 1 "
                                       "and two results of C values, got x of rank " + std::to_string(d.size()));
  const int64_t rows = d[0], c = d[1];
  const int64_t parts = (rows + part_rows - 1) / part_rows;
  std::vector<float> part_mean(parts * c), part_m2(parts * c);
  const float* data = x.typed_data();
  for_each_index(pool, parts, helpers_for(pool, parts, threads), [&](int64_t, int64_t p) {
    const int64_t r0 = p * part_rows, r1 = std::min(rows, r0 + part_rows);
    part_moments(data + r0 * c, r1 - r0, c, part_mean.data() + p * c, part_m2.data() + p * c);
  });
  std::vector<double> total(c, 0.0), m2(c, 0.0);
  for (int64_t p = 0; p < parts; ++p) {
    const double m = static_cast<double>(std::min(rows, (p + 1) * part_rows) - p * part_rows);
    for (int64_t k = 0; k < c; ++k) total[k] += m * part_mean[p * c + k];
  }
  for (int64_t k = 0; k < c; ++k) total[k] /= static_cast<double>(rows);
  for (int64_t p = 0; p < parts; ++p) {
    const double m = static_cast<double>(std::min(rows, (p + 1) * part_rows) - p * part_rows);
    for (int64_t k = 0; k < c; ++k) {
      const double shift = part_mean[p * c + k] - total[k];
      m2[k] += part_m2[p * c + k] + m * shift * shift;
    }
  }
  for (int64_t k = 0; k < c; ++k) {
    mean->typed_data()[k] = static_cast<float>(total[k]);
    variance->typed_data()[k] = static_cast<float>(m2[k] / static_cast<double>(rows));
  }
  return ffi::Error::Success();
}

// sum_g[c] and sum_gc[c] = sums over the part's rows of g and g * (x - mean), NV vectors from c0.
template <int NV>
void part_gradient_block(const float* g, const float* x, const float* mean, int64_t rows, int64_t c, int64_t c0,
                         float* sum_g, float* sum_gc) {
  v16 m[NV], sg[NV], sgc[NV];
  for (int v = 0; v < NV; ++v) {
    m[v] = load(mean + c0 + 16 * v);
    sg[v] = sgc[v] = v16{};
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int v = 0; v < NV; ++v) {
      const v16 gv = load(g + r * c + c0 + 16 * v);
      sg[v] += gv;
      sgc[v] += gv * (load(x + r * c + c0 + 16 * v) - m[v]);
    }
  for (int v = 0; v < NV; ++v) {
    minikeras::store(sum_g + c0 + 16 * v, sg[v]);
    minikeras::store(sum_gc + c0 + 16 * v, sgc[v]);
  }
}

ffi::Error GradientSumsImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> g, ffi::Buffer<ffi::F32> x,
                            ffi::Buffer<ffi::F32> mean, ffi::ResultBuffer<ffi::F32> sum_g,
                            ffi::ResultBuffer<ffi::F32> sum_gc, int64_t part_rows, int64_t threads) {
  const auto d = x.dimensions(), dg = g.dimensions();
  if (d.size() != 2 || dg.size() != 2 || dg[0] != d[0] || dg[1] != d[1] || d[1] % 16 != 0 || part_rows < 1 ||
      mean.element_count() != d[1] || sum_g->element_count() != d[1] || sum_gc->element_count() != d[1])
    return ffi::Error::InvalidArgument("batch norm gradient sums: expected g and x of one shape (rows, C % 16 == 0), "
                                       "a mean and two results of C values, part_rows >= 1");
  const int64_t rows = d[0], c = d[1];
  const int64_t parts = (rows + part_rows - 1) / part_rows;
  std::vector<float> part_g(parts * c), part_gc(parts * c);
  for_each_index(pool, parts, helpers_for(pool, parts, threads), [&](int64_t, int64_t p) {
    const int64_t r0 = p * part_rows, n = std::min(rows, r0 + part_rows) - r0;
    int64_t c0 = 0;
    for (; c0 + 16 * kBlock <= c; c0 += 16 * kBlock)
      part_gradient_block<kBlock>(g.typed_data() + r0 * c, x.typed_data() + r0 * c, mean.typed_data(), n, c, c0,
                                  part_g.data() + p * c, part_gc.data() + p * c);
    for (; c0 < c; c0 += 16)
      part_gradient_block<1>(g.typed_data() + r0 * c, x.typed_data() + r0 * c, mean.typed_data(), n, c, c0,
                             part_g.data() + p * c, part_gc.data() + p * c);
  });
  for (int64_t k = 0; k < c; ++k) {
    double total_g = 0.0, total_gc = 0.0;
    for (int64_t p = 0; p < parts; ++p) {
      total_g += part_g[p * c + k];
      total_gc += part_gc[p * c + k];
    }
    sum_g->typed_data()[k] = static_cast<float>(total_g);
    sum_gc->typed_data()[k] = static_cast<float>(total_gc);
  }
  return ffi::Error::Success();
}

}  // namespace

// g and x (rows, C), the mean (C); sum(g) and sum(g * (x - mean)) (C each); the rows per part and
// the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasBatchNormGradientSums, GradientSumsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("part_rows")
                                  .Attr<int64_t>("threads"));

// x (rows, C); the mean and the variance (C each); the rows per part and the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasBatchMoments, MomentsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("part_rows")
                                  .Attr<int64_t>("threads"));
