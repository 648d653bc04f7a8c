// A 2-D convolution (NHWC input, HWIO filter, float32; the gradients stride 1) and its two gradients,
// as XLA FFI handlers for the CPU. minikeras/xla_cpu/conv_native.py builds this file with the
// machine's C++ compiler (-O3 -march=native) and calls the handlers from compiled programs.
//
// Why: XLA:CPU runs the gradients through Eigen well below its GEMM speed, while a direct loop
// nest vectorized over channels runs them close to it (benchmarks/conv.py --methods): every
// output tile stays in registers for a whole block of pixels and each step is one
// broadcast and a few fused multiply-adds from L1/L2, with no im2col copy.
//
//   forward:         y[b,h,w,co]  = sum_{i,j,ci} xpad[b, h*sh+i, w*sw+j, ci] * w[i, j, ci, co]
//                    (optionally + bias[co], then max(., 0): Conv2D's bias and ReLU, fused)
//   filter gradient: dw[i,j,ci,co] = sum_{b,r,q} xpad[b, r+i, q+j, ci] * dy[b, r, q, co]
//   input gradient:  dx[b,h,w,ci] = sum_{i,j,co} dy[b, h+pt-i, w+pl-j, co] * w[i, j, ci, co]
//
// where xpad is x zero-padded by pt rows on top and pl columns on the left (and as much as the
// shapes imply on the bottom and right). The gradients are vectorized over input channels and
// the forward pass over output channels, which must be a multiple of 16; the Python side checks
// that and every shape before it calls them. The filter gradient of a layer with few input
// channels (kw * C <= kFewTaps: the first layer of an MNIST or RGB CNN) is vectorized over output
// channels instead. Images are shared out among `threads` workers: the
// calling thread and tasks on XLA's own intra-op thread pool.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::add_to;
using minikeras::for_each_index;
using minikeras::helpers_for;
using minikeras::kSingleVectorTile;
using minikeras::kWideTiles;
using minikeras::load;
using minikeras::store;
using minikeras::tile_step;
using minikeras::v16;
using minikeras::with_tile_size;

namespace {

struct Shape {
  int64_t n, h, w, c;   // x (NHWC)
  int64_t ho, wo, o;    // dy (N, Ho, Wo, O)
  int64_t kh, kw;       // filter taps
  int64_t pt, pl;       // zero rows above x, zero columns left of it
  int64_t sh = 1, sw = 1;  // the forward pass's strides (the gradients are stride 1)
};

// -- filter gradient --------------------------------------------------------------------------
// acc[t][v] += x[pixel, c0 + 16v : +16] * dy[pixel, o0 + t] over the pixels of rows [r0, r1),
// then added to dwt[i][j][o0 + t][c0 ...] (the filter gradient with O and I swapped).
template <int CV, int TO>
void filter_tile(const float* xi, const float* dyi, float* dwt, const Shape& s, int64_t wp,
                 int64_t r0, int64_t r1, int64_t i, int64_t j, int64_t c0, int64_t o0) {
  v16 acc[TO][CV];
  for (int t = 0; t < TO; ++t)
    for (int v = 0; v < CV; ++v) acc[t][v] = v16{};
  // only the rows whose tap i reads a row of x, not its zero padding
  const int64_t r_end = std::min(r1, s.h + s.pt - i);
  for (int64_t r = std::max(r0, s.pt - i); r < r_end; ++r) {
    const float* xr = xi + ((r + i) * wp + j) * s.c + c0;
    const float* dr = dyi + r * s.wo * s.o + o0;
    for (int64_t q = 0; q < s.wo; ++q) tile_step(acc, xr + q * s.c, dr + q * s.o, 1);
  }
  float* out = dwt + ((i * s.kw + j) * s.o + o0) * s.c + c0;
  for (int t = 0; t < TO; ++t)
    for (int v = 0; v < CV; ++v) add_to(out + t * s.c + 16 * v, acc[t][v]);
}

// Output-channel tile: with 2 input-channel vectors (AVX-512), 8 channels make 16 accumulators
// and each step 2 loads + 8 broadcasts for 16 multiply-adds; with 1 vector, kSingleVectorTile.
template <int CV>
constexpr int kFilterTileO = CV == 2 ? 8 : kSingleVectorTile;
constexpr int64_t kFilterRows = 8;  // output rows per block: their dy (8 x Wo x O) stays in L1/L2

// filter_tile<1, TO> for the 3 taps j of filter row i at once (AVX-512): acc[j][t] += x[pixel + j,
// c0 ...] * dy[pixel, o0 + t]. With one vector of 16 input channels filter_tile broadcasts a dy
// scalar per multiply-add, and its loads, not its multiply-adds, bound it; here each dy scalar is
// broadcast once for the row's 3 taps. The same sums, in the same order, to the bit.
constexpr bool kRowTaps = kWideTiles;  // 3 x 8 accumulators, 3 x vectors and a broadcast: 28 registers
constexpr int kRowTapsFilterO = 8;
template <int TO>
void filter_row_taps_tile(const float* xi, const float* dyi, float* dwt, const Shape& s, int64_t wp,
                          int64_t r0, int64_t r1, int64_t i, int64_t c0, int64_t o0) {
  constexpr int KW = 3;
  v16 acc[KW][TO];
  for (int j = 0; j < KW; ++j)
    for (int t = 0; t < TO; ++t) acc[j][t] = v16{};
  const int64_t r_end = std::min(r1, s.h + s.pt - i);
  for (int64_t r = std::max(r0, s.pt - i); r < r_end; ++r) {
    const float* xr = xi + (r + i) * wp * s.c + c0;
    const float* dr = dyi + r * s.wo * s.o + o0;
    for (int64_t q = 0; q < s.wo; ++q) {
      v16 x[KW];
      for (int j = 0; j < KW; ++j) x[j] = load(xr + (q + j) * s.c);
      for (int t = 0; t < TO; ++t) {
        const float scalar = dr[q * s.o + t];
        for (int j = 0; j < KW; ++j) acc[j][t] += x[j] * scalar;
      }
    }
  }
  for (int j = 0; j < KW; ++j) {
    float* out = dwt + ((i * s.kw + j) * s.o + o0) * s.c + c0;
    for (int t = 0; t < TO; ++t) add_to(out + t * s.c, acc[j][t]);
  }
}

template <int CV>
void filter_chunk(const float* xi, const float* dyi, float* dwt, const Shape& s, int64_t wp, int64_t c0) {
  constexpr int TO = kFilterTileO<CV>;
  for (int64_t r0 = 0; r0 < s.ho; r0 += kFilterRows) {
    const int64_t r1 = std::min(r0 + kFilterRows, s.ho);
    if constexpr (kRowTaps && CV == 1) {
      if (s.kw == 3) {
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t o0 = 0; o0 < s.o; o0 += kRowTapsFilterO) {
            const int to = static_cast<int>(std::min<int64_t>(kRowTapsFilterO, s.o - o0));
            with_tile_size<kRowTapsFilterO>(to, [&](auto t) __attribute__((always_inline)) {
              filter_row_taps_tile<decltype(t)::value>(xi, dyi, dwt, s, wp, r0, r1, i, c0, o0);
            });
          }
        continue;
      }
    }
    for (int64_t i = 0; i < s.kh; ++i)
      for (int64_t j = 0; j < s.kw; ++j)
        for (int64_t o0 = 0; o0 < s.o; o0 += TO) {
          const int to = static_cast<int>(std::min<int64_t>(TO, s.o - o0));
          with_tile_size<TO>(to, [&](auto t) __attribute__((always_inline)) {
            filter_tile<CV, decltype(t)::value>(xi, dyi, dwt, s, wp, r0, r1, i, j, c0, o0);
          });
        }
  }
}

// -- filter gradient, few input channels ----------------------------------------------------------
// For a filter row i, the kw * C taps (j, ci) of a pixel are kw * C consecutive floats of x's padded
// row: acc[t][v] += xpad[r + i, q + j, ci] * dy[r, q, o0 + 16v ...] with t = j * C + ci, over the
// pixels of rows [r0, r1), then added to dw[i, j, ci, o0 ...] (HWIO: row i's taps are consecutive).
// kw * C at most: with AVX-512, T x 1 output vector for T <= 9 (an RGB image's 3x3 layer) in 32
// registers; elsewhere T x 2 fit AVX2's 16 registers for T <= 3, T x 1 for T <= 6
constexpr int kFewTaps = kWideTiles ? 9 : 6;
template <int T, int OV>
void few_filter_tile(const float* xi, const float* dyi, float* dw, const Shape& s, int64_t wp, int64_t r0,
                     int64_t r1, int64_t i, int64_t o0) {
  v16 acc[T][OV];
  for (int t = 0; t < T; ++t)
    for (int v = 0; v < OV; ++v) acc[t][v] = v16{};
  const int64_t r_end = std::min(r1, s.h + s.pt - i);  // rows whose tap row i is padding add nothing
  for (int64_t r = std::max(r0, s.pt - i); r < r_end; ++r) {
    const float* xr = xi + (r + i) * wp * s.c;
    const float* dr = dyi + r * s.wo * s.o + o0;
    for (int64_t q = 0; q < s.wo; ++q) tile_step(acc, dr + q * s.o, xr + q * s.c, 1);
  }
  float* out = dw + i * s.kw * s.c * s.o + o0;
  for (int t = 0; t < T; ++t)
    for (int v = 0; v < OV; ++v) add_to(out + t * s.o + 16 * v, acc[t][v]);
}

void few_filter_chunk(const float* xi, const float* dyi, float* dw, const Shape& s, int64_t wp) {
  const int taps = static_cast<int>(s.kw * s.c);
  // two output vectors per step where the accumulators fit the registers, else one
  constexpr int kPairTaps = std::min(kFewTaps, kSingleVectorTile / 2);
  const bool pairs = taps <= kPairTaps;
  for (int64_t r0 = 0; r0 < s.ho; r0 += kFilterRows) {
    const int64_t r1 = std::min(r0 + kFilterRows, s.ho);
    for (int64_t i = 0; i < s.kh; ++i) {
      int64_t o0 = 0;
      if (pairs)
        for (; o0 + 32 <= s.o; o0 += 32)
          with_tile_size<kPairTaps>(taps, [&](auto t) __attribute__((always_inline)) {
            few_filter_tile<decltype(t)::value, 2>(xi, dyi, dw, s, wp, r0, r1, i, o0);
          });
      for (; o0 < s.o; o0 += 16)
        with_tile_size<kFewTaps>(taps, [&](auto t) __attribute__((always_inline)) {
          few_filter_tile<decltype(t)::value, 1>(xi, dyi, dw, s, wp, r0, r1, i, o0);
        });
    }
  }
}

// Copies image b of x into `pad` with pt/pl zero rows/columns, hp x wp in all.
void pad_image(const float* xb, float* pad, const Shape& s, int64_t hp, int64_t wp) {
  std::memset(pad, 0, sizeof(float) * hp * wp * s.c);
  for (int64_t u = 0; u < hp; ++u) {
    const int64_t h = u - s.pt;
    if (h < 0 || h >= s.h) continue;
    const int64_t w_first = std::max<int64_t>(0, -s.pl), w_end = std::min<int64_t>(s.w, wp - s.pl);
    if (w_end > w_first)
      std::memcpy(pad + (u * wp + w_first + s.pl) * s.c, xb + (h * s.w + w_first) * s.c,
                  sizeof(float) * (w_end - w_first) * s.c);
  }
}

// The batch is summed in kFilterParts fixed parts (fewer when the filter is big), each into an
// accumulator of its own, and the parts are added in order at the end: which thread summed
// which part does not change a bit of the result, so training runs repeat exactly.
constexpr int64_t kFilterParts = 8;
constexpr int64_t kFilterPartsBytes = 64 << 20;  // all the parts' accumulators at most

// Whether a filter gradient with c input channels and kw filter columns has few input channels:
// then it is vectorized over output channels (few_filter_chunk).
bool few_channels(int64_t c, int64_t kw) { return c % 16 != 0 && kw * c <= kFewTaps; }

void filter_grad(ffi::ThreadPool& pool, const float* x, const float* dy, float* dw, const Shape& s,
                 int64_t threads) {
  const bool few = few_channels(s.c, s.kw);
  const int64_t hp = s.ho + s.kh - 1, wp = s.wo + s.kw - 1;  // the padded input the windows read
  const bool copy = s.pt != 0 || s.pl != 0 || hp != s.h || wp != s.w;
  const int64_t size = s.kh * s.kw * s.o * s.c;
  const int64_t parts = std::max<int64_t>(
      1, std::min({kFilterParts, s.n, kFilterPartsBytes / static_cast<int64_t>(sizeof(float) * size)}));
  const int64_t helpers = helpers_for(pool, parts, threads);
  std::vector<std::vector<float>> dwt(parts, std::vector<float>(size, 0.0f));  // dw^T per part
  std::vector<std::vector<float>> pad(helpers + 1, std::vector<float>(copy ? hp * wp * s.c : 0));  // per worker
  for_each_index(pool, parts, helpers, [&](int64_t worker, int64_t part) {
    for (int64_t b = s.n * part / parts; b < s.n * (part + 1) / parts; ++b) {
      const float* xi = x + b * s.h * s.w * s.c;
      if (copy) {
        pad_image(xi, pad[worker].data(), s, hp, wp);
        xi = pad[worker].data();
      }
      const float* dyi = dy + b * s.ho * s.wo * s.o;
      float* acc = dwt[part].data();
      if (few) {  // accumulated in dw's own layout
        few_filter_chunk(xi, dyi, acc, s, copy ? wp : s.w);
        continue;
      }
      int64_t c0 = 0;
      if constexpr (kWideTiles)
        for (; c0 + 32 <= s.c; c0 += 32) filter_chunk<2>(xi, dyi, acc, s, copy ? wp : s.w, c0);
      for (; c0 < s.c; c0 += 16) filter_chunk<1>(xi, dyi, acc, s, copy ? wp : s.w, c0);
    }
  });
  // dw[i][j][ci][co] = the sum over parts, in order, of dwt[i][j][co][ci] (dw itself if few)
  if (few) {
    for (int64_t k = 0; k < size; ++k) {
      float sum = 0.0f;
      for (int64_t p = 0; p < parts; ++p) sum += dwt[p][k];
      dw[k] = sum;
    }
    return;
  }
  for (int64_t tap = 0; tap < s.kh * s.kw; ++tap)
    for (int64_t ci = 0; ci < s.c; ++ci)
      for (int64_t co = 0; co < s.o; ++co) {
        float sum = 0.0f;
        for (int64_t p = 0; p < parts; ++p) sum += dwt[p][(tap * s.o + co) * s.c + ci];
        dw[(tap * s.c + ci) * s.o + co] = sum;
      }
}

// Equal tiles covering a row of `width` pixels, at most `most` wide: their width.
int tile_width(int64_t width, int most) {
  const int64_t tiles = (width + most - 1) / most;
  return static_cast<int>((width + tiles - 1) / tiles);
}

// -- input gradient ---------------------------------------------------------------------------
// dx[h, w0 + p, c0 ...] for p < TP (only the first `valid` are stored): a sum over taps and
// output channels of dyp[row, column, co] * wt[i][j][co][c0 ...], with dyp the padded dy.
template <int CV, int TP>
void input_tile(const float* dyp, const float* wt, float* dxr, const Shape& s, int64_t wq,
                int64_t h, int64_t w0, int valid, int64_t c0) {
  v16 acc[TP][CV];
  for (int p = 0; p < TP; ++p)
    for (int v = 0; v < CV; ++v) acc[p][v] = v16{};
  // only the taps that read a row of dy, not one of its zero rows (the border rows of dx have
  // fewer: 4 of 26 rows of the MNIST CNN's second layer, 8% of the work)
  const int64_t i_end = std::min(s.kh, h + s.pt + 1);
  for (int64_t i = std::max<int64_t>(0, h + s.pt - s.ho + 1); i < i_end; ++i) {
    const float* row = dyp + (h + s.pt - i + s.kh - 1) * wq * s.o;
    for (int64_t j = 0; j < s.kw; ++j) {
      const float* d = row + (w0 + s.pl - j + s.kw - 1) * s.o;
      const float* wr = wt + (i * s.kw + j) * s.o * s.c + c0;
      for (int64_t co = 0; co < s.o; ++co) tile_step(acc, wr + co * s.c, d + co, s.o);
    }
  }
  for (int p = 0; p < valid; ++p)
    for (int v = 0; v < CV; ++v) store(dxr + (w0 + p) * s.c + c0 + 16 * v, acc[p][v]);
}

// pixels per tile: 12 x 2 vectors = 24 accumulators (AVX-512), else kSingleVectorTile x 1
constexpr int kInputTileMax = kWideTiles ? 12 : kSingleVectorTile;

void input_grad(ffi::ThreadPool& pool, const float* dy, const float* w, float* dx, const Shape& s,
                int64_t threads) {
  const int tp = tile_width(s.w, kInputTileMax);
  // dy padded by kh-1 rows and kw-1 columns on every side
  const int64_t hq = s.ho + 2 * (s.kh - 1);
  const int64_t wq = s.wo + 2 * (s.kw - 1);
  std::vector<float> wt(s.kh * s.kw * s.o * s.c);  // w with I and O swapped: [i][j][co][ci]
  for (int64_t tap = 0; tap < s.kh * s.kw; ++tap)
    for (int64_t ci = 0; ci < s.c; ++ci)
      for (int64_t co = 0; co < s.o; ++co) wt[(tap * s.o + co) * s.c + ci] = w[(tap * s.c + ci) * s.o + co];
  const int64_t helpers = helpers_for(pool, s.n, threads);
  // one padded dy per worker; only its interior is rewritten, so the border stays zero
  std::vector<std::vector<float>> padded(helpers + 1, std::vector<float>(hq * wq * s.o, 0.0f));
  for_each_index(pool, s.n, helpers, [&](int64_t worker, int64_t b) {
    float* dyp = padded[worker].data();
    const float* dyb = dy + b * s.ho * s.wo * s.o;
    for (int64_t r = 0; r < s.ho; ++r)
      std::memcpy(dyp + ((r + s.kh - 1) * wq + s.kw - 1) * s.o, dyb + r * s.wo * s.o, sizeof(float) * s.wo * s.o);
    float* dxb = dx + b * s.h * s.w * s.c;
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t w0 = 0; w0 < s.w; w0 += tp) {
        const int valid = static_cast<int>(std::min<int64_t>(tp, s.w - w0));
        int64_t c0 = 0;  // the last tile only as wide as what is left of the row
        if constexpr (kWideTiles)
          for (; c0 + 32 <= s.c; c0 += 32)
            with_tile_size<kInputTileMax>(valid, [&](auto t) __attribute__((always_inline)) {
              input_tile<2, decltype(t)::value>(dyp, wt.data(), dxb + h * s.w * s.c, s, wq, h, w0, valid, c0);
            });
        for (; c0 < s.c; c0 += 16)
          with_tile_size<kInputTileMax>(valid, [&](auto t) __attribute__((always_inline)) {
            input_tile<1, decltype(t)::value>(dyp, wt.data(), dxb + h * s.w * s.c, s, wq, h, w0, valid, c0);
          });
      }
  });
}

// -- forward ------------------------------------------------------------------------------------
// The forward pass's epilogue: an optional per-channel bias added to each sum, then an optional
// ReLU (max(y, 0), NaN kept as XLA's maximum keeps it), in the order Conv2D applies them.
struct Epilogue {
  const float* bias;  // O floats, or null
  bool relu;
};

// y[h, w0 + p, o0 ...] for p < TP (the first `valid` stored): a sum over taps and input channels
// of xpad[h sh + i, (w0 + p) sw + j, ci] * w[i, j, ci, o0 ...], vectorized over output channels,
// then the epilogue.
template <int NV, int TP>
void forward_tile(const float* xi, const float* w, float* yr, const Shape& s, int64_t wp, int64_t h,
                  int64_t w0, int valid, int64_t o0, const Epilogue& epilogue) {
  v16 acc[TP][NV];
  for (int p = 0; p < TP; ++p)
    for (int v = 0; v < NV; ++v) acc[p][v] = v16{};
  const int64_t top = h * s.sh;  // the output row's first row of the padded x
  const int64_t i_end = std::min(s.kh, s.h + s.pt - top);  // only taps on rows of x, not its zero padding
  for (int64_t i = std::max<int64_t>(0, s.pt - top); i < i_end; ++i)
    for (int64_t j = 0; j < s.kw; ++j) {
      const float* xr = xi + ((top + i) * wp + w0 * s.sw + j) * s.c;
      const float* wr = w + (i * s.kw + j) * s.c * s.o + o0;
      for (int64_t ci = 0; ci < s.c; ++ci) tile_step(acc, wr + ci * s.o, xr + ci, s.c * s.sw);
    }
  if (epilogue.bias) {
    for (int v = 0; v < NV; ++v) {
      const v16 b = load(epilogue.bias + o0 + 16 * v);
      for (int p = 0; p < valid; ++p) acc[p][v] += b;
    }
  }
  if (epilogue.relu) {
    for (int p = 0; p < valid; ++p)
      for (int v = 0; v < NV; ++v) acc[p][v] = minikeras::relu(acc[p][v]);
  }
  for (int p = 0; p < valid; ++p)
    for (int v = 0; v < NV; ++v) store(yr + (w0 + p) * s.o + o0 + 16 * v, acc[p][v]);
}

// Pixels per tile: 4 vectors x 6 pixels, or 2 x 12 (AVX-512), or 1 x kSingleVectorTile.
template <int NV>
constexpr int kForwardTileMax = NV == 4 ? 6 : NV == 2 ? 12 : kSingleVectorTile;

template <int NV>
void forward_row(const float* xi, const float* w, float* yr, const Shape& s, int64_t wp, int64_t h, int64_t o0,
                 const Epilogue& epilogue) {
  constexpr int TPMAX = kForwardTileMax<NV>;
  const int tp = tile_width(s.wo, TPMAX);
  for (int64_t w0 = 0; w0 < s.wo; w0 += tp) {
    const int valid = static_cast<int>(std::min<int64_t>(tp, s.wo - w0));  // the last tile may be narrower
    with_tile_size<TPMAX>(valid, [&](auto t) __attribute__((always_inline)) {
      forward_tile<NV, decltype(t)::value>(xi, w, yr, s, wp, h, w0, valid, o0, epilogue);
    });
  }
}

void forward(ffi::ThreadPool& pool, const float* x, const float* w, float* y, const Shape& s, int64_t threads,
             const Epilogue& epilogue) {
  // the padded input the windows read (with strides, x's last rows or columns may be outside it)
  const int64_t hp = (s.ho - 1) * s.sh + s.kh, wp = (s.wo - 1) * s.sw + s.kw;
  const int64_t columns = std::min(s.w, wp - s.pl);  // of x, the ones the windows read
  const int64_t helpers = helpers_for(pool, s.n, threads);
  std::vector<std::vector<float>> padded(helpers + 1, std::vector<float>(hp * wp * s.c, 0.0f));
  for_each_index(pool, s.n, helpers, [&](int64_t worker, int64_t b) {
    float* xi = padded[worker].data();
    const float* xb = x + b * s.h * s.w * s.c;
    for (int64_t u = 0; u < hp; ++u) {
      const int64_t row = u - s.pt;
      if (row < 0 || row >= s.h) continue;
      std::memcpy(xi + (u * wp + s.pl) * s.c, xb + row * s.w * s.c, sizeof(float) * columns * s.c);
    }
    float* yb = y + b * s.ho * s.wo * s.o;
    for (int64_t h = 0; h < s.ho; ++h) {
      int64_t o0 = 0;
      if constexpr (kWideTiles) {
        for (; o0 + 64 <= s.o; o0 += 64) forward_row<4>(xi, w, yb + h * s.wo * s.o, s, wp, h, o0, epilogue);
        for (; o0 + 32 <= s.o; o0 += 32) forward_row<2>(xi, w, yb + h * s.wo * s.o, s, wp, h, o0, epilogue);
      }
      for (; o0 < s.o; o0 += 16) forward_row<1>(xi, w, yb + h * s.wo * s.o, s, wp, h, o0, epilogue);
    }
  });
}

// -- XLA FFI ----------------------------------------------------------------------------------
std::string dims_text(ffi::Span<const int64_t> d) {
  std::string text = "(";
  for (size_t k = 0; k < d.size(); ++k) text += (k ? ", " : "") + std::to_string(d[k]);
  return text + ")";
}

// The shapes of one call, or an error naming what does not fit. x: (N, H, W, C); dy:
// (N, Ho, Wo, O); filter: (KH, KW, C, O); a stride-1 convolution with pt / pl leading pads,
// whose input channels (the gradients) or output channels (the forward pass) are the vectors.
ffi::Error check(const char* op, ffi::Span<const int64_t> x, ffi::Span<const int64_t> dy,
                 ffi::Span<const int64_t> f, int64_t pt, int64_t pl, bool output_vectors, Shape* s) {
  if (x.size() != 4 || dy.size() != 4 || f.size() != 4)
    return ffi::Error::InvalidArgument(std::string(op) + ": expected rank-4 x, dy and filter, got " +
                                       dims_text(x) + ", " + dims_text(dy) + ", " + dims_text(f));
  *s = Shape{x[0], x[1], x[2], x[3], dy[1], dy[2], dy[3], f[0], f[1], pt, pl};
  const bool fits = dy[0] == x[0] && f[2] == x[3] && f[3] == dy[3] && (output_vectors ? dy[3] : x[3]) % 16 == 0 &&
                    pt >= 0 && pl >= 0 && pt < f[0] && pl < f[1] &&
                    dy[1] + f[0] - 1 >= x[1] + pt && dy[2] + f[1] - 1 >= x[2] + pl;
  if (!fits)
    return ffi::Error::InvalidArgument(std::string(op) + ": shapes x " + dims_text(x) + ", dy " + dims_text(dy) +
                                       ", filter " + dims_text(f) + " with pads (" + std::to_string(pt) + ", " +
                                       std::to_string(pl) + ") are not a stride-1 convolution with " +
                                       (output_vectors ? "O" : "C") + " % 16 == 0");
  return ffi::Error::Success();
}

// The forward pass's shapes: x (N, H, W, C), y (N, Ho, Wo, O), filter (KH, KW, C, O), O % 16 == 0,
// strides sh, sw >= 1 and pads pt < KH, pl < KW; the rows below x (and columns right of it) that
// the windows read are fewer than KH (KW), and with strides the windows may leave out fewer than
// sh of x's last rows (sw of its columns), as a 'VALID' strided convolution does.
ffi::Error check_forward(ffi::Span<const int64_t> x, ffi::Span<const int64_t> y, ffi::Span<const int64_t> f,
                         int64_t pt, int64_t pl, int64_t sh, int64_t sw, Shape* s) {
  if (x.size() != 4 || y.size() != 4 || f.size() != 4)
    return ffi::Error::InvalidArgument("conv2d: expected rank-4 x, y and filter, got " + dims_text(x) + ", " +
                                       dims_text(y) + ", " + dims_text(f));
  *s = Shape{x[0], x[1], x[2], x[3], y[1], y[2], y[3], f[0], f[1], pt, pl, sh, sw};
  const int64_t bottom = (y[1] - 1) * sh + f[0] - pt - x[1], right = (y[2] - 1) * sw + f[1] - pl - x[2];
  const bool fits = y[0] == x[0] && f[2] == x[3] && f[3] == y[3] && y[3] % 16 == 0 && sh >= 1 && sw >= 1 &&
                    y[1] >= 1 && y[2] >= 1 && pt >= 0 && pl >= 0 && pt < f[0] && pl < f[1] &&
                    bottom > -sh && bottom < f[0] && right > -sw && right < f[1];
  if (!fits)
    return ffi::Error::InvalidArgument("conv2d: shapes x " + dims_text(x) + ", y " + dims_text(y) + ", filter " +
                                       dims_text(f) + " with pads (" + std::to_string(pt) + ", " + std::to_string(pl) +
                                       ") and strides (" + std::to_string(sh) + ", " + std::to_string(sw) +
                                       ") are not a convolution with O % 16 == 0");
  return ffi::Error::Success();
}

ffi::Error FilterGradImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> dy, ffi::ResultBuffer<ffi::F32> dw,
                          int64_t pad_top, int64_t pad_left, int64_t threads) {
  Shape s;
  // vectorized over input channels, or over output channels where there are few input channels
  const auto xd = x.dimensions(), fd = dw->dimensions();
  const bool few = xd.size() == 4 && fd.size() == 4 && few_channels(xd[3], fd[1]);
  ffi::Error error = check("conv2d filter gradient", xd, dy.dimensions(), fd, pad_top, pad_left, few, &s);
  if (error.failure()) return error;
  filter_grad(pool, x.typed_data(), dy.typed_data(), dw->typed_data(), s, threads);
  return ffi::Error::Success();
}

ffi::Error InputGradImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> dy, ffi::Buffer<ffi::F32> w, ffi::ResultBuffer<ffi::F32> dx,
                         int64_t pad_top, int64_t pad_left, int64_t threads) {
  Shape s;
  ffi::Error error = check("conv2d input gradient", dx->dimensions(), dy.dimensions(), w.dimensions(),
                           pad_top, pad_left, false, &s);
  if (error.failure()) return error;
  input_grad(pool, dy.typed_data(), w.typed_data(), dx->typed_data(), s, threads);
  return ffi::Error::Success();
}

ffi::Error ForwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w, ffi::ResultBuffer<ffi::F32> y,
                       int64_t pad_top, int64_t pad_left, int64_t stride_h, int64_t stride_w, int64_t threads) {
  Shape s;
  ffi::Error error = check_forward(x.dimensions(), y->dimensions(), w.dimensions(), pad_top, pad_left, stride_h,
                                   stride_w, &s);
  if (error.failure()) return error;
  forward(pool, x.typed_data(), w.typed_data(), y->typed_data(), s, threads, Epilogue{nullptr, false});
  return ffi::Error::Success();
}

ffi::Error ForwardBiasReluImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                               ffi::Buffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> y, int64_t pad_top,
                               int64_t pad_left, int64_t stride_h, int64_t stride_w, int64_t threads) {
  Shape s;
  ffi::Error error = check_forward(x.dimensions(), y->dimensions(), w.dimensions(), pad_top, pad_left, stride_h,
                                   stride_w, &s);
  if (error.failure()) return error;
  if (b.dimensions().size() != 1 || b.dimensions()[0] != s.o)
    return ffi::Error::InvalidArgument("conv2d: expected a bias of shape (" + std::to_string(s.o) + "), got " +
                                       dims_text(b.dimensions()));
  forward(pool, x.typed_data(), w.typed_data(), y->typed_data(), s, threads, Epilogue{b.typed_data(), true});
  return ffi::Error::Success();
}

// The gradient handlers' signature: two f32 operands and a result, the pads and the thread count.
auto ConvBinding() {
  return ffi::Ffi::Bind()
      .Ctx<ffi::ThreadPool>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Ret<ffi::Buffer<ffi::F32>>()
      .Attr<int64_t>("pad_top")
      .Attr<int64_t>("pad_left")
      .Attr<int64_t>("threads");
}

}  // namespace

// The forward pass: x and w, then the pads, the strides and the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dForward, ForwardImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("stride_h")
                                  .Attr<int64_t>("stride_w")
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dFilterGrad, FilterGradImpl,
                              ConvBinding());

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dInputGrad, InputGradImpl,
                              ConvBinding());

// The forward pass with the bias and ReLU as its epilogue: x, w and the bias, then the pads, the
// strides and the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dForwardBiasRelu, ForwardBiasReluImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("stride_h")
                                  .Attr<int64_t>("stride_w")
                                  .Attr<int64_t>("threads"));
