// A stride-1 2-D convolution of bfloat16 arrays and its filter gradient on AVX512_BF16's
// `vdpbf16ps` (two bfloat16 products added into each float32 lane), as XLA FFI handlers for the
// CPU. minikeras/xla_cpu/conv_bf16_native.py builds this file (-O3 -march=native), pairs the
// filter's input channels with jax ops, and calls the handlers from compiled programs.
//
// Why: a bfloat16 layer's convolutions (a 'mixed_bfloat16' policy) on float32 kernels run at
// float32's rate plus the casts; XLA's own bfloat16 convolutions and an im2col formulation on its
// bfloat16 dot run no faster (benchmarks/bf16_xla.py). `vdpbf16ps` does twice the multiply-adds
// of a float32 FMA per instruction, with float32 accumulation. A CPU without AVX512_BF16 has no
// such instruction, so nothing here can gain there: without it this file compiles to handlers
// that return an error, and the Python side never calls them (bfloat16 convolutions are
// widened to the float32 kernels there).
//
//   forward:         y[b,h,w,co]   = sum_{i,j,cp} dot2(x[b, h+i, w+j, 2cp : 2cp+2], wp[i, j, cp, co, :])
//                    (optionally + bias[co], then max(., 0): Conv2D's bias and ReLU, before the rounding)
//   filter gradient: dw[i,j,ci,co] = sum_{b,r,qp} dot2(xx[b, r+i, 2qp+j, ci, :], dyp[b, r, qp, co, :])
//
// with x zero-padded by pt rows on top and pl columns on the left (and as much as the shapes
// imply on the bottom and right), wp the filter with input channels paired (kh, kw, C/2, O, 2),
// xx the padded x with each pixel paired with its right neighbour and dyp dy with its columns
// paired (a zero column after an odd last one); with one input channel (C = 1) a pixel and its
// right neighbour are adjacent in the padded x already, which then needs no pairing. Each worker
// builds the padded or paired copy of one image at a time, which stays in its cache. Sums run in
// float32; each result is rounded to bfloat16 once, to nearest even. The input gradient is the
// forward pass on the padded dy with the flipped filter (conv_bf16_native.py). Both are
// vectorized over output channels, which must be a multiple of 16.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

#ifdef __AVX512BF16__
#include <immintrin.h>
#endif

namespace ffi = xla::ffi;

namespace {

std::string dims_text(ffi::Span<const int64_t> d) {
  std::string text = "(";
  for (size_t k = 0; k < d.size(); ++k) text += (k ? ", " : "") + std::to_string(d[k]);
  return text + ")";
}

#ifdef __AVX512BF16__
// A pair of bfloat16 values (adjacent in memory) broadcast to all 16 lanes.
inline __m512bh pair(const uint16_t* p) {
  int32_t bits;
  std::memcpy(&bits, p, sizeof bits);
  return (__m512bh)_mm512_set1_epi32(bits);
}

inline __m512bh load_pairs(const uint16_t* p) { return (__m512bh)_mm512_loadu_si512(p); }

// 16 float32 sums rounded to bfloat16 (nearest even) and stored.
inline void store_bf16(uint16_t* p, __m512 v) { _mm256_storeu_si256((__m256i*)p, (__m256i)_mm512_cvtneps_pbh(v)); }

struct Shape {
  int64_t n, h, w, c;  // x (N, H, W, C)
  int64_t ho, wo, o;   // the output (N, Ho, Wo, O)
  int64_t kh, kw;      // filter taps
  int64_t pt, pl;      // zero rows above x, zero columns left of it
  int64_t hp() const { return ho + kh - 1; }  // the padded input the windows read
  int64_t wp() const { return wo + kw - 1; }
};

// The C channels of the padded x at row u, column v of image xb, or `zeros` in the padding.
inline const uint16_t* padded_pixel(const uint16_t* xb, const Shape& s, int64_t u, int64_t v, const uint16_t* zeros) {
  const int64_t h = u - s.pt, w = v - s.pl;
  return h >= 0 && h < s.h && w >= 0 && w < s.w ? xb + (h * s.w + w) * s.c : zeros;
}

// out[2k] = a[k], out[2k + 1] = b[k] for k < n (the compiler vectorizes it into shuffles).
inline void interleave(const uint16_t* __restrict a, const uint16_t* __restrict b, uint16_t* __restrict out,
                       int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    out[2 * k] = a[k];
    out[2 * k + 1] = b[k];
  }
}

// -- forward ------------------------------------------------------------------------------------
// The forward pass's epilogue: a per-channel bias (O floats, or null), then an optional ReLU.
struct Epilogue {
  const float* bias;
  bool relu;
};

// acc[p] += the products of filter tap (i, j) for the tile's pixels p in [LO, HI): xr, wr its x
// and paired weights.
template <int NV, int TP, int LO, int HI>
__attribute__((always_inline)) inline void tap_products(__m512 (&acc)[TP][NV], const uint16_t* xr,
                                                        const uint16_t* wr, const Shape& s, int64_t pairs) {
  for (int64_t cp = 0; cp < pairs; ++cp) {
    __m512bh wv[NV];
    for (int v = 0; v < NV; ++v) wv[v] = load_pairs(wr + cp * s.o * 2 + 32 * v);
    for (int p = LO; p < HI; ++p) {
      const __m512bh xv = pair(xr + p * s.c + 2 * cp);
      for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_dpbf16_ps(acc[p][v], xv, wv[v]);
    }
  }
}

// The most pixels a tile leaves out at each end for a tap whose columns fall on the zero padding.
constexpr int kSkipMax = 2;

constexpr int upper(int tp, int lo, int cut) { return tp - cut > lo ? tp - cut : lo; }

// y[h, w0 + p, o0 ...] for p < TP (the first `valid` stored), NV vectors of 16 output channels.
template <int NV, int TP>
void forward_tile(const uint16_t* xi, const uint16_t* wp, uint16_t* yr, const Shape& s, int64_t h, int64_t w0,
                  int valid, int64_t o0, const Epilogue& epilogue) {
  __m512 acc[TP][NV];
  for (int p = 0; p < TP; ++p)
    for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_setzero_ps();
  const int64_t pairs = s.c / 2;
  // only the filter rows that meet x's rows: the padding's rows are zeros, whose products add
  // nothing (an input gradient's dy is padded by the filter's size less one on each side)
  const int64_t i_begin = std::max<int64_t>(0, s.pt - h), i_end = std::min<int64_t>(s.kh, s.pt + s.h - h);
  // whether some pixel's window reaches into the padding columns (with 4 vectors of channels the
  // tile's 24 accumulators leave no room for the variants below: slower, measured)
  const bool edge = NV < 4 && (w0 < s.pl || w0 + TP + s.kw - 1 > s.pl + s.w);
  for (int64_t i = i_begin; i < i_end; ++i)
    for (int64_t j = 0; j < s.kw; ++j) {
      const uint16_t* xr = xi + ((h + i) * s.wp() + w0 + j) * s.c;
      const uint16_t* wr = wp + (i * s.kw + j) * pairs * s.o * 2 + o0 * 2;
      if (!edge) {
        for (int64_t cp = 0; cp < pairs; ++cp) {
          __m512bh wv[NV];
          for (int v = 0; v < NV; ++v) wv[v] = load_pairs(wr + cp * s.o * 2 + 32 * v);
          for (int p = 0; p < TP; ++p) {
            const __m512bh xv = pair(xr + p * s.c + 2 * cp);
            for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_dpbf16_ps(acc[p][v], xv, wv[v]);
          }
        }
        continue;
      }
      // likewise the pixels whose column of this tap is padding (the input gradient's dy is
      // padded by 2 columns a side for a 3x3 filter): up to kSkipMax at either end are left out
      const int64_t lo = std::min<int64_t>(kSkipMax, std::max<int64_t>(0, s.pl - w0 - j));
      const int64_t hi = std::min<int64_t>(TP, std::max<int64_t>(TP - kSkipMax, s.pl + s.w - w0 - j));
      if (hi <= lo) continue;  // every pixel's column of this tap is padding
      switch (lo * 3 + (TP - hi)) {
        case 0: tap_products<NV, TP, 0, TP>(acc, xr, wr, s, pairs); break;
        case 1: tap_products<NV, TP, 0, upper(TP, 0, 1)>(acc, xr, wr, s, pairs); break;
        case 2: tap_products<NV, TP, 0, upper(TP, 0, 2)>(acc, xr, wr, s, pairs); break;
        case 3: tap_products<NV, TP, 1, upper(TP, 1, 0)>(acc, xr, wr, s, pairs); break;
        case 4: tap_products<NV, TP, 1, upper(TP, 1, 1)>(acc, xr, wr, s, pairs); break;
        case 5: tap_products<NV, TP, 1, upper(TP, 1, 2)>(acc, xr, wr, s, pairs); break;
        case 6: tap_products<NV, TP, 2, upper(TP, 2, 0)>(acc, xr, wr, s, pairs); break;
        case 7: tap_products<NV, TP, 2, upper(TP, 2, 1)>(acc, xr, wr, s, pairs); break;
        default: tap_products<NV, TP, 2, upper(TP, 2, 2)>(acc, xr, wr, s, pairs); break;
      }
    }
  if (epilogue.bias)
    for (int v = 0; v < NV; ++v) {
      const __m512 b = _mm512_loadu_ps(epilogue.bias + o0 + 16 * v);
      for (int p = 0; p < valid; ++p) acc[p][v] = _mm512_add_ps(acc[p][v], b);
    }
  if (epilogue.relu)  // max(y, 0) with a NaN kept, as XLA's maximum keeps it
    for (int p = 0; p < valid; ++p)
      for (int v = 0; v < NV; ++v)
        acc[p][v] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(acc[p][v], _mm512_setzero_ps(), _CMP_LT_OQ), acc[p][v],
                                         _mm512_setzero_ps());
  for (int p = 0; p < valid; ++p)
    for (int v = 0; v < NV; ++v) store_bf16(yr + (w0 + p) * s.o + o0 + 16 * v, acc[p][v]);
}

// Pixels per tile: 4 vectors x 6 pixels, or 2 x 12, or 1 x 12 (at most 24 accumulators).
template <int NV>
constexpr int kForwardTileMax = NV == 4 ? 6 : 12;

int tile_width(int64_t width, int most) {
  const int64_t tiles = (width + most - 1) / most;
  return static_cast<int>((width + tiles - 1) / tiles);
}

template <int NV>
void forward_row(const uint16_t* xi, const uint16_t* wp, uint16_t* yr, const Shape& s, int64_t h, int64_t o0,
                 const Epilogue& epilogue) {
  constexpr int TPMAX = kForwardTileMax<NV>;
  const int tp = tile_width(s.wo, TPMAX);
  for (int64_t w0 = 0; w0 < s.wo; w0 += tp) {
    const int valid = static_cast<int>(std::min<int64_t>(tp, s.wo - w0));
    minikeras::with_tile_size<TPMAX>(valid, [&](auto t) __attribute__((always_inline)) {
      forward_tile<NV, decltype(t)::value>(xi, wp, yr, s, h, w0, valid, o0, epilogue);
    });
  }
}

void forward(ffi::ThreadPool& pool, const uint16_t* x, const uint16_t* wp, uint16_t* y, const Shape& s,
             int64_t threads, const uint16_t* bias, bool relu) {
  std::vector<float> bias_f(bias ? s.o : 0);  // bfloat16 is the top half of a float32
  for (size_t k = 0; k < bias_f.size(); ++k) {
    const uint32_t bits = static_cast<uint32_t>(bias[k]) << 16;
    std::memcpy(&bias_f[k], &bits, sizeof bits);
  }
  const Epilogue epilogue{bias ? bias_f.data() : nullptr, relu};
  const int64_t hp = s.hp(), wp_ = s.wp();
  const int64_t helpers = minikeras::helpers_for(pool, s.n, threads);
  // one padded image per worker; only its interior is rewritten, so the border stays zero
  std::vector<std::vector<uint16_t>> padded(helpers + 1, std::vector<uint16_t>(hp * wp_ * s.c, 0));
  minikeras::for_each_index(pool, s.n, helpers, [&](int64_t worker, int64_t b) {
    uint16_t* xi = padded[worker].data();
    const uint16_t* xb = x + b * s.h * s.w * s.c;
    for (int64_t u = 0; u < hp; ++u) {
      const int64_t row = u - s.pt;
      if (row < 0 || row >= s.h) continue;
      std::memcpy(xi + (u * wp_ + s.pl) * s.c, xb + row * s.w * s.c, sizeof(uint16_t) * s.w * s.c);
    }
    uint16_t* yb = y + b * s.ho * s.wo * s.o;
    for (int64_t h = 0; h < s.ho; ++h) {
      uint16_t* yr = yb + h * s.wo * s.o;
      int64_t o0 = 0;
      for (; o0 + 64 <= s.o; o0 += 64) forward_row<4>(xi, wp, yr, s, h, o0, epilogue);
      for (; o0 + 32 <= s.o; o0 += 32) forward_row<2>(xi, wp, yr, s, h, o0, epilogue);
      for (; o0 < s.o; o0 += 16) forward_row<1>(xi, wp, yr, s, h, o0, epilogue);
    }
  });
}

// -- filter gradient ----------------------------------------------------------------------------
// acc[t][v] += dot2(xx[r + i, 2qp + j, c0 + t, :], dyp[r, qp, o0 + 16v ..., :]) over the rows
// [r0, r1) and all column pairs, then added to dw[i, j, c0 + t, o0 ...] (float32).
template <int NV, int TC>
void filter_tile(const uint16_t* xxi, const uint16_t* dyi, float* dw, const Shape& s, int64_t wx, int64_t qpairs,
                 int64_t r0, int64_t r1, int64_t i, int64_t j, int64_t c0, int64_t o0) {
  __m512 acc[TC][NV];
  for (int t = 0; t < TC; ++t)
    for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_setzero_ps();
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* xr = xxi + ((r + i) * wx + j) * s.c * 2 + c0 * 2;
    const uint16_t* dr = dyi + r * qpairs * s.o * 2 + o0 * 2;
    for (int64_t qp = 0; qp < qpairs; ++qp) {
      __m512bh dv[NV];
      for (int v = 0; v < NV; ++v) dv[v] = load_pairs(dr + qp * s.o * 2 + 32 * v);
      const uint16_t* xq = xr + 2 * qp * s.c * 2;
      for (int t = 0; t < TC; ++t) {
        const __m512bh xv = pair(xq + 2 * t);
        for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], xv, dv[v]);
      }
    }
  }
  float* out = dw + ((i * s.kw + j) * s.c + c0) * s.o + o0;
  for (int t = 0; t < TC; ++t)
    for (int v = 0; v < NV; ++v) {
      float* p = out + t * s.o + 16 * v;
      _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[t][v]));
    }
}

constexpr int64_t kFilterRows = 8;  // output rows per block: their dy stays in L1/L2
template <int NV>
constexpr int kFilterTileC = NV == 4 ? 6 : 12;

template <int NV>
void filter_columns(const uint16_t* xxi, const uint16_t* dyi, float* dw, const Shape& s, int64_t wx,
                    int64_t qpairs, int64_t r0, int64_t r1, int64_t i, int64_t j, int64_t o0) {
  constexpr int TC = kFilterTileC<NV>;
  // tiles of nearly equal widths (32 channels: 6, 6, 5, 5, 5, 5 rather than 6 x 5 and a 2 whose 8
  // accumulators leave the unit idle while the dy loads dominate); each dw element's sum is the same
  const int64_t tiles = (s.c + TC - 1) / TC;
  for (int64_t k = 0, c0 = 0; k < tiles; ++k) {
    const int tc = static_cast<int>(s.c / tiles + (k < s.c % tiles ? 1 : 0));
    minikeras::with_tile_size<TC>(tc, [&](auto t) __attribute__((always_inline)) {
      filter_tile<NV, decltype(t)::value>(xxi, dyi, dw, s, wx, qpairs, r0, r1, i, j, c0, o0);
    });
    c0 += tc;
  }
}

// As conv_native.cc's float32 filter gradient: the batch is summed in fixed parts, each into an
// accumulator of its own, added in order at the end, so the result does not depend on threads.
constexpr int64_t kFilterParts = 8;

// Image xb's padded x with each pixel paired with its right neighbour: xx[u][v][c] = (xpad[u][v][c],
// xpad[u][v + 1][c]) for the hp rows and wx columns the windows read.
void pair_columns_of_x(const uint16_t* xb, uint16_t* xx, const Shape& s, int64_t wx, const uint16_t* zeros) {
  for (int64_t u = 0; u < s.hp(); ++u)
    for (int64_t v = 0; v < wx; ++v)
      interleave(padded_pixel(xb, s, u, v, zeros), padded_pixel(xb, s, u, v + 1, zeros),
                 xx + (u * wx + v) * s.c * 2, s.c);
}

// Image dyb's dy with its columns paired: dyp[r][qp][o] = (dy[r][2qp][o], dy[r][2qp + 1][o]), zero
// past the last column.
void pair_columns_of_dy(const uint16_t* dyb, uint16_t* dyp, const Shape& s, int64_t qpairs, const uint16_t* zeros) {
  for (int64_t r = 0; r < s.ho; ++r)
    for (int64_t qp = 0; qp < qpairs; ++qp) {
      const uint16_t* a = dyb + (r * s.wo + 2 * qp) * s.o;
      interleave(a, 2 * qp + 1 < s.wo ? a + s.o : zeros, dyp + (r * qpairs + qp) * s.o * 2, s.o);
    }
}

// One input channel (a first layer on grey images): a pixel and its right neighbour are adjacent
// in x, so x needs no pairing, and every filter tap's sums stay in registers while the rows pass:
// acc[t][v] += dot2(xpad[r + i, 2qp + j : 2qp + j + 2], dyp[r, qp, o0 + 16v ..., :]) for the KK
// taps t = (i, j), each dy vector loaded once for all of them. xi: the padded image, `wx`
// columns (one more zero column than the windows read when the output width is odd).
template <int KK, int NV>
void filter_taps_tile(const uint16_t* xi, const uint16_t* dyi, float* dw, const Shape& s, int64_t wx, int64_t qpairs,
                      int64_t o0) {
  int64_t offset[KK];
  for (int t = 0; t < KK; ++t) offset[t] = (t / s.kw) * wx + t % s.kw;
  __m512 acc[KK][NV];
  for (int t = 0; t < KK; ++t)
    for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_setzero_ps();
  for (int64_t r = 0; r < s.ho; ++r) {
    const uint16_t* xr = xi + r * wx;
    const uint16_t* dr = dyi + r * qpairs * s.o * 2 + o0 * 2;
    for (int64_t qp = 0; qp < qpairs; ++qp) {
      __m512bh dv[NV];
      for (int v = 0; v < NV; ++v) dv[v] = load_pairs(dr + qp * s.o * 2 + 32 * v);
      for (int t = 0; t < KK; ++t) {
        const __m512bh xv = pair(xr + 2 * qp + offset[t]);
        for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], xv, dv[v]);
      }
    }
  }
  for (int t = 0; t < KK; ++t)
    for (int v = 0; v < NV; ++v) {
      float* out = dw + t * s.o + o0 + 16 * v;  // dw[i, j, 0, o0 + 16v ...]
      _mm512_storeu_ps(out, _mm512_add_ps(_mm512_loadu_ps(out), acc[t][v]));
    }
}

constexpr int kFilterTapsMax = 12;  // taps (kh * kw) of the one-channel path: 12 x 2 accumulators

// One image's part of the one-channel filter gradient: its padded x into xi (the border stays
// zero), then the taps tiles over 32 output channels at a time.
void filter_grad_one_channel(const uint16_t* xb, const uint16_t* dyi, uint16_t* xi, float* dw, const Shape& s,
                             int64_t wx, int64_t qpairs) {
  for (int64_t u = 0; u < s.hp(); ++u) {
    const int64_t row = u - s.pt;
    if (row >= 0 && row < s.h) std::memcpy(xi + u * wx + s.pl, xb + row * s.w, sizeof(uint16_t) * s.w);
  }
  minikeras::with_tile_size<kFilterTapsMax>(static_cast<int>(s.kh * s.kw), [&](auto kk) __attribute__((always_inline)) {
    constexpr int KK = decltype(kk)::value;
    int64_t o0 = 0;
    for (; o0 + 32 <= s.o; o0 += 32) filter_taps_tile<KK, 2>(xi, dyi, dw, s, wx, qpairs, o0);
    for (; o0 < s.o; o0 += 16) filter_taps_tile<KK, 1>(xi, dyi, dw, s, wx, qpairs, o0);
  });
}

// sums[o] += dy[r][q][o] over image dyb's pixels, in order (a Conv2D's bias gradient, summed
// while dy is read for the pairing).
inline __m512 widened(const uint16_t* p) {
  return (__m512)_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16);
}

template <int NV>
void add_pixels_block(const uint16_t* dyb, float* sums, const Shape& s, int64_t o0) {
  __m512 acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = _mm512_loadu_ps(sums + o0 + 16 * v);
  for (int64_t p = 0; p < s.ho * s.wo; ++p)
    for (int v = 0; v < NV; ++v) acc[v] = _mm512_add_ps(acc[v], widened(dyb + p * s.o + o0 + 16 * v));
  for (int v = 0; v < NV; ++v) _mm512_storeu_ps(sums + o0 + 16 * v, acc[v]);
}

void add_pixels(const uint16_t* dyb, float* sums, const Shape& s) {
  int64_t o0 = 0;
  for (; o0 + 64 <= s.o; o0 += 64) add_pixels_block<4>(dyb, sums, s, o0);
  for (; o0 < s.o; o0 += 16) add_pixels_block<1>(dyb, sums, s, o0);
}

// dw, and with db (null: none) dy summed over its images and pixels (the bias gradient), both
// rounded to bfloat16; the sums run in fixed parts of the batch, added in order.
void filter_grad(ffi::ThreadPool& pool, const uint16_t* x, const uint16_t* dy, uint16_t* dw, const Shape& s,
                 int64_t threads, uint16_t* db = nullptr) {
  const int64_t size = s.kh * s.kw * s.c * s.o;
  const int64_t qpairs = (s.wo + 1) / 2;
  const int64_t wx = 2 * qpairs + s.kw - 2;  // the paired columns the windows read
  const int64_t parts = std::max<int64_t>(1, std::min(kFilterParts, s.n));
  const int64_t helpers = minikeras::helpers_for(pool, parts, threads);
  std::vector<std::vector<float>> acc(parts, std::vector<float>(size, 0.0f));
  std::vector<std::vector<float>> bias_acc(db ? parts : 0, std::vector<float>(s.o, 0.0f));
  const bool one_channel = s.c == 1 && s.kh * s.kw <= kFilterTapsMax;
  // the paired x, or with one channel the padded x (wx + 1 columns: a pair may start at the last)
  std::vector<std::vector<uint16_t>> xx(helpers + 1, std::vector<uint16_t>(s.hp() * (wx + 1) * s.c * 2, 0));
  std::vector<std::vector<uint16_t>> dyp(helpers + 1, std::vector<uint16_t>(s.ho * qpairs * s.o * 2));
  const std::vector<uint16_t> zeros(std::max(s.c, s.o), 0);  // a pixel of the zero padding
  minikeras::for_each_index(pool, parts, helpers, [&](int64_t worker, int64_t part) {
    for (int64_t b = s.n * part / parts; b < s.n * (part + 1) / parts; ++b) {
      const uint16_t* xxi = xx[worker].data();
      const uint16_t* dyi = dyp[worker].data();
      pair_columns_of_dy(dy + b * s.ho * s.wo * s.o, dyp[worker].data(), s, qpairs, zeros.data());
      if (db) add_pixels(dy + b * s.ho * s.wo * s.o, bias_acc[part].data(), s);
      if (one_channel) {
        filter_grad_one_channel(x + b * s.h * s.w, dyi, xx[worker].data(), acc[part].data(), s, wx + 1, qpairs);
        continue;
      }
      pair_columns_of_x(x + b * s.h * s.w * s.c, xx[worker].data(), s, wx, zeros.data());
      for (int64_t r0 = 0; r0 < s.ho; r0 += kFilterRows) {
        const int64_t r1 = std::min(r0 + kFilterRows, s.ho);
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            int64_t o0 = 0;
            for (; o0 + 64 <= s.o; o0 += 64) filter_columns<4>(xxi, dyi, acc[part].data(), s, wx, qpairs, r0, r1, i, j, o0);
            for (; o0 < s.o; o0 += 16) filter_columns<1>(xxi, dyi, acc[part].data(), s, wx, qpairs, r0, r1, i, j, o0);
          }
      }
    }
  });
  for (int64_t k = 0; k < size; k += 16) {
    __m512 sum = _mm512_loadu_ps(acc[0].data() + k);
    for (int64_t p = 1; p < parts; ++p) sum = _mm512_add_ps(sum, _mm512_loadu_ps(acc[p].data() + k));
    store_bf16(dw + k, sum);
  }
  if (db)
    for (int64_t o0 = 0; o0 < s.o; o0 += 16) {
      __m512 sum = _mm512_loadu_ps(bias_acc[0].data() + o0);
      for (int64_t p = 1; p < parts; ++p) sum = _mm512_add_ps(sum, _mm512_loadu_ps(bias_acc[p].data() + o0));
      store_bf16(db + o0, sum);
    }
}

#endif  // __AVX512BF16__

ffi::Error unsupported() {
  return ffi::Error(ffi::ErrorCode::kUnimplemented,
                    "bfloat16 convolution: this library was built for a CPU without AVX512_BF16");
}

// Whether x (N, H, W, C) padded by pt rows on top and pl columns on the left gives an output
// (N, Ho, Wo, O) with a kh x kw filter: the pads smaller than the filter, the bottom and right
// ones not negative.
bool fits_padding(ffi::Span<const int64_t> xd, ffi::Span<const int64_t> yd, int64_t kh, int64_t kw, int64_t pt,
                  int64_t pl) {
  return yd[0] == xd[0] && yd[1] > 0 && yd[2] > 0 && pt >= 0 && pl >= 0 && pt < kh && pl < kw &&
         yd[1] + kh - 1 >= xd[1] + pt && yd[2] + kw - 1 >= xd[2] + pl && yd[1] + kh - 1 <= xd[1] + pt + kh - 1 &&
         yd[2] + kw - 1 <= xd[2] + pl + kw - 1;
}

// x: (N, H, W, C); wp: (KH, KW, C/2, O, 2); y: (N, Ho, Wo, O), x padded by pt / pl leading zeros;
// bias: null or O values, then the ReLU.
ffi::Error forward_call(ffi::ThreadPool& pool, ffi::Buffer<ffi::BF16>& x, ffi::Buffer<ffi::BF16>& wp,
                        ffi::ResultBuffer<ffi::BF16>& y, int64_t pt, int64_t pl, int64_t threads,
                        ffi::Buffer<ffi::BF16>* bias) {
  const auto xd = x.dimensions(), wd = wp.dimensions(), yd = y->dimensions();
  const bool fits = xd.size() == 4 && wd.size() == 5 && yd.size() == 4 && wd[4] == 2 && xd[3] == 2 * wd[2] &&
                    yd[3] == wd[3] && yd[3] % 16 == 0 && fits_padding(xd, yd, wd[0], wd[1], pt, pl);
  if (!fits)
    return ffi::Error::InvalidArgument("bfloat16 conv2d: shapes x " + dims_text(xd) + ", paired filter " +
                                       dims_text(wd) + ", y " + dims_text(yd) + " with pads (" + std::to_string(pt) +
                                       ", " + std::to_string(pl) + ") are not a stride-1 convolution with O % 16 == 0");
  if (bias && (bias->dimensions().size() != 1 || bias->dimensions()[0] != yd[3]))
    return ffi::Error::InvalidArgument("bfloat16 conv2d: expected a bias of shape (" + std::to_string(yd[3]) +
                                       "), got " + dims_text(bias->dimensions()));
#ifdef __AVX512BF16__
  const Shape s{xd[0], xd[1], xd[2], xd[3], yd[1], yd[2], yd[3], wd[0], wd[1], pt, pl};
  forward(pool, x.typed_data(), wp.typed_data(), y->typed_data(), s, threads, bias ? bias->typed_data() : nullptr,
          bias != nullptr);
  return ffi::Error::Success();
#else
  return unsupported();
#endif
}

ffi::Error ForwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> x, ffi::Buffer<ffi::BF16> wp,
                       ffi::ResultBuffer<ffi::BF16> y, int64_t pad_top, int64_t pad_left, int64_t threads) {
  return forward_call(pool, x, wp, y, pad_top, pad_left, threads, nullptr);
}

ffi::Error ForwardBiasReluImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> x, ffi::Buffer<ffi::BF16> wp,
                               ffi::Buffer<ffi::BF16> bias, ffi::ResultBuffer<ffi::BF16> y, int64_t pad_top,
                               int64_t pad_left, int64_t threads) {
  return forward_call(pool, x, wp, y, pad_top, pad_left, threads, &bias);
}

// x: (N, H, W, C); dy: (N, Ho, Wo, O); dw: (KH, KW, C, O); x padded by pt / pl leading zeros;
// db: null, or (O) for dy's sums over all but its last axis.
ffi::Error filter_grad_call(ffi::ThreadPool& pool, ffi::Buffer<ffi::BF16>& x, ffi::Buffer<ffi::BF16>& dy,
                            ffi::ResultBuffer<ffi::BF16>& dw, int64_t pad_top, int64_t pad_left, int64_t threads,
                            ffi::ResultBuffer<ffi::BF16>* db) {
  const auto xd = x.dimensions(), dd = dy.dimensions(), fd = dw->dimensions();
  const bool fits = xd.size() == 4 && dd.size() == 4 && fd.size() == 4 && fd[2] == xd[3] && fd[3] == dd[3] &&
                    dd[3] % 16 == 0 && fits_padding(xd, dd, fd[0], fd[1], pad_top, pad_left);
  if (!fits)
    return ffi::Error::InvalidArgument("bfloat16 conv2d filter gradient: shapes x " + dims_text(xd) + ", dy " +
                                       dims_text(dd) + ", filter " + dims_text(fd) + " with pads (" +
                                       std::to_string(pad_top) + ", " + std::to_string(pad_left) +
                                       ") are not a stride-1 convolution with O % 16 == 0");
#ifdef __AVX512BF16__
  const Shape s{xd[0], xd[1], xd[2], xd[3], dd[1], dd[2], dd[3], fd[0], fd[1], pad_top, pad_left};
  if (db && ((*db)->dimensions().size() != 1 || (*db)->dimensions()[0] != dd[3]))
    return ffi::Error::InvalidArgument("bfloat16 conv2d filter gradient: expected a bias gradient of shape (" +
                                       std::to_string(dd[3]) + "), got " + dims_text((*db)->dimensions()));
  filter_grad(pool, x.typed_data(), dy.typed_data(), dw->typed_data(), s, threads,
              db ? (*db)->typed_data() : nullptr);
  return ffi::Error::Success();
#else
  return unsupported();
#endif
}

ffi::Error FilterGradImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> x, ffi::Buffer<ffi::BF16> dy,
                          ffi::ResultBuffer<ffi::BF16> dw, int64_t pad_top, int64_t pad_left, int64_t threads) {
  return filter_grad_call(pool, x, dy, dw, pad_top, pad_left, threads, nullptr);
}

ffi::Error FilterGradBiasImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> x, ffi::Buffer<ffi::BF16> dy,
                              ffi::ResultBuffer<ffi::BF16> dw, ffi::ResultBuffer<ffi::BF16> db, int64_t pad_top,
                              int64_t pad_left, int64_t threads) {
  return filter_grad_call(pool, x, dy, dw, pad_top, pad_left, threads, &db);
}

auto Binding() {
  return ffi::Ffi::Bind()
      .Ctx<ffi::ThreadPool>()
      .Arg<ffi::Buffer<ffi::BF16>>()
      .Arg<ffi::Buffer<ffi::BF16>>()
      .Ret<ffi::Buffer<ffi::BF16>>()
      .Attr<int64_t>("pad_top")
      .Attr<int64_t>("pad_left")
      .Attr<int64_t>("threads");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dBf16Forward, ForwardImpl, Binding());

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dBf16FilterGrad, FilterGradImpl, Binding());

// The forward pass with Conv2D's bias and ReLU as its epilogue: x, the paired filter and the bias.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dBf16ForwardBiasRelu, ForwardBiasReluImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::BF16>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("threads"));

// The filter gradient with the bias gradient (dy summed over images and pixels) as a second result.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasConv2dBf16FilterGradBias, FilterGradBiasImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::BF16>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("threads"));
