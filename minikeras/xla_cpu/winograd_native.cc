// A 3x3 stride-1 float32 convolution as Winograd's F(2x2, 3x3), NHWC, as an XLA FFI handler for the
// CPU; minikeras/xla_cpu/winograd_native.py builds this file (-O3 -march=native) and calls it with
// the filter already transformed (16 x C_in x C_out, ``winograd.filter_transform``, in XLA).
//
// Why: written as jax ops (winograd.py) the algorithm writes the transformed input (16 values per
// 2x2 output tile and channel: four times the input) and the 16 products to memory and reads them
// back, which costs more than it saves where the channels are few. Here a block of tiles is
// transformed into a buffer that stays in the core's cache, the 16 products run from it in
// register tiles (6 or 12 tiles x 64, 32 or 16 output channels, as matmul_native.cc's), and each
// product's tile is added into its tiles' 2x2 outputs at once (the output transform), so that
// nothing but the input, the filter and the output crosses memory.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::for_each_index;
using minikeras::helpers_for;
using minikeras::kTileRows;
using minikeras::kWideTiles;
using minikeras::load;
using minikeras::store;
using minikeras::tile_step;
using minikeras::v16;
using minikeras::with_tile_size;

namespace {

constexpr int kFrequencies = 16;
// A^T's entries: output a of a tile's row takes frequency row r times kOut[a][r]
constexpr int kOut[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

struct Shape {
  int64_t n, h, w, c, o, out_h, out_w, tiles_h, tiles_w, pad_top, pad_left;
  int64_t tiles() const { return n * tiles_h * tiles_w; }
};

// B^T d for four vectors along one axis
inline void input_frequencies(const v16 (&d)[4], v16 (&f)[4]) {
  f[0] = d[0] - d[2];
  f[1] = d[1] + d[2];
  f[2] = d[2] - d[1];
  f[3] = d[1] - d[3];
}

// The input transform of tiles [first, first + count) into v[p][t][c] (p a frequency, t < count).
void transform_inputs(const Shape& s, const float* x, float* v, int64_t first, int64_t count) {
  const v16 zero{};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t, tj = tile % s.tiles_w, ti = (tile / s.tiles_w) % s.tiles_h,
                  n = tile / (s.tiles_w * s.tiles_h);
    const int64_t row0 = 2 * ti - s.pad_top, col0 = 2 * tj - s.pad_left;
    for (int64_t c0 = 0; c0 < s.c; c0 += 16) {
      v16 d[4][4];
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) {
          const int64_t row = row0 + r, col = col0 + q;
          d[r][q] = (row >= 0 && row < s.h && col >= 0 && col < s.w)
                        ? load(x + ((n * s.h + row) * s.w + col) * s.c + c0)
                        : zero;
        }
      v16 rows[4][4];  // rows[i][q]: frequency i along the rows, column q
      for (int q = 0; q < 4; ++q) {
        const v16 column[4] = {d[0][q], d[1][q], d[2][q], d[3][q]};
        v16 f[4];
        input_frequencies(column, f);
        for (int i = 0; i < 4; ++i) rows[i][q] = f[i];
      }
      for (int i = 0; i < 4; ++i) {
        v16 f[4];
        input_frequencies(rows[i], f);
        for (int j = 0; j < 4; ++j) store(v + ((4 * i + j) * count + t) * s.c + c0, f[j]);
      }
    }
  }
}

// Tiles [t0, t0 + TM) of a block (its first tile `first`) and output channels [o0, o0 + 16 NV): the
// 16 products v[p] u[p] in registers, each added into the tiles' 2x2 outputs, then stored in y.
template <int NV, int TM>
void tile_outputs(const Shape& s, const float* v, const float* u, float* y, int64_t first, int64_t count,
                  int64_t t0, int64_t o0) {
  v16 out[TM][4][NV];  // the tiles' outputs (a, b) = (index / 2, index % 2)
  for (int t = 0; t < TM; ++t)
    for (int k = 0; k < 4; ++k)
      for (int q = 0; q < NV; ++q) out[t][k][q] = v16{};
  for (int p = 0; p < kFrequencies; ++p) {
    v16 acc[TM][NV];
    for (int t = 0; t < TM; ++t)
      for (int q = 0; q < NV; ++q) acc[t][q] = v16{};
    const float* vp = v + (p * count + t0) * s.c;
    const float* up = u + p * s.c * s.o + o0;
    for (int64_t k = 0; k < s.c; ++k) tile_step(acc, up + k * s.o, vp + k, s.c);
    const int r = p / 4, col = p % 4;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const int sign = kOut[a][r] * kOut[b][col];
        if (sign == 0) continue;
        for (int t = 0; t < TM; ++t)
          for (int q = 0; q < NV; ++q) {
            if (sign > 0)
              out[t][2 * a + b][q] += acc[t][q];
            else
              out[t][2 * a + b][q] = out[t][2 * a + b][q] - acc[t][q];
          }
      }
  }
  for (int t = 0; t < TM; ++t) {
    const int64_t tile = first + t0 + t, tj = tile % s.tiles_w, ti = (tile / s.tiles_w) % s.tiles_h,
                  n = tile / (s.tiles_w * s.tiles_h);
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const int64_t row = 2 * ti + a, column = 2 * tj + b;
        if (row >= s.out_h || column >= s.out_w) continue;
        float* dst = y + ((n * s.out_h + row) * s.out_w + column) * s.o + o0;
        for (int q = 0; q < NV; ++q) store(dst + 16 * q, out[t][2 * a + b][q]);
      }
  }
}

template <int NV>
void column_block(const Shape& s, const float* v, const float* u, float* y, int64_t first, int64_t count,
                  int64_t o0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t t0 = 0; t0 < count; t0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, count - t0)), [&](auto rows) __attribute__((always_inline)) {
      tile_outputs<NV, decltype(rows)::value>(s, v, u, y, first, count, t0, o0);
    });
}

ffi::Error WinogradForwardImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> u,
                               ffi::ResultBuffer<ffi::F32> y, int64_t pad_top, int64_t pad_left, int64_t block_tiles,
                               int64_t threads) {
  const auto xd = x.dimensions(), ud = u.dimensions(), yd = y->dimensions();
  if (xd.size() != 4 || ud.size() != 3 || yd.size() != 4 || ud[0] != kFrequencies || ud[1] != xd[3] ||
      ud[2] != yd[3] || yd[0] != xd[0] || xd[3] % 16 != 0 || yd[3] % 16 != 0 || block_tiles < 1 || pad_top < 0 ||
      pad_left < 0)
    return ffi::Error::InvalidArgument(
        "winograd: expected x (N, H, W, C), u (16, C, O), y (N, out_h, out_w, O), C and O multiples of 16");
  Shape s{xd[0], xd[1], xd[2], xd[3], yd[3], yd[1], yd[2], (yd[1] + 1) / 2, (yd[2] + 1) / 2, pad_top, pad_left};
  const int64_t tiles = s.tiles();
  if (tiles == 0) return ffi::Error::Success();
  const int64_t blocks = (tiles + block_tiles - 1) / block_tiles;
  const int64_t helpers = helpers_for(pool, blocks, threads);
  std::vector<float> scratch((helpers + 1) * kFrequencies * block_tiles * s.c);
  const float *xp = x.typed_data(), *up = u.typed_data();
  float* yp = y->typed_data();
  for_each_index(pool, blocks, helpers, [&](int64_t worker, int64_t block) {
    float* v = scratch.data() + worker * kFrequencies * block_tiles * s.c;
    const int64_t first = block * block_tiles, count = std::min(block_tiles, tiles - first);
    transform_inputs(s, xp, v, first, count);
    int64_t o0 = 0;
    if constexpr (kWideTiles) {
      for (; o0 + 64 <= s.o; o0 += 64) column_block<4>(s, v, up, yp, first, count, o0);
      for (; o0 + 32 <= s.o; o0 += 32) column_block<2>(s, v, up, yp, first, count, o0);
    }
    for (; o0 < s.o; o0 += 16) column_block<1>(s, v, up, yp, first, count, o0);
  });
  return ffi::Error::Success();
}

// A dy for two vectors along one axis (the output transform's transpose)
inline void output_frequencies(const v16& y0, const v16& y1, v16 (&f)[4]) {
  const v16 zero{};
  f[0] = y0;
  f[1] = y0 + y1;
  f[2] = y0 - y1;
  f[3] = zero - y1;
}

// The transposed output transform of dy's tiles [first, first + count) into m[p][t][o] (zeros past
// dy's edge).
void transform_cotangents(const Shape& s, const float* dy, float* m, int64_t first, int64_t count) {
  const v16 zero{};
  for (int64_t t = 0; t < count; ++t) {
    const int64_t tile = first + t, tj = tile % s.tiles_w, ti = (tile / s.tiles_w) % s.tiles_h,
                  n = tile / (s.tiles_w * s.tiles_h);
    for (int64_t o0 = 0; o0 < s.o; o0 += 16) {
      v16 d[2][2];
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
          const int64_t row = 2 * ti + a, col = 2 * tj + b;
          d[a][b] = (row < s.out_h && col < s.out_w) ? load(dy + ((n * s.out_h + row) * s.out_w + col) * s.o + o0)
                                                     : zero;
        }
      v16 rows[2][4];  // rows[b][i]: frequency i along the rows, column b
      for (int b = 0; b < 2; ++b) output_frequencies(d[0][b], d[1][b], rows[b]);
      for (int i = 0; i < 4; ++i) {
        v16 f[4];
        output_frequencies(rows[0][i], rows[1][i], f);
        for (int j = 0; j < 4; ++j) store(m + ((4 * i + j) * count + t) * s.o + o0, f[j]);
      }
    }
  }
}

// du[p][c0 + r][o0 + 16q ...] = the sum over a part's tiles t of v[p][t][c0 + r] * m[p][t][o0 + 16q ...],
// for r < TM, q < NV, every frequency p: the accumulators stay in registers over all the tiles.
template <int NV, int TM>
void part_products(const Shape& s, const float* v, const float* m, float* du, int64_t count, int64_t c0,
                   int64_t o0) {
  for (int p = 0; p < kFrequencies; ++p) {
    v16 acc[TM][NV];
    for (int r = 0; r < TM; ++r)
      for (int q = 0; q < NV; ++q) acc[r][q] = v16{};
    const float* vp = v + p * count * s.c + c0;
    const float* mp = m + p * count * s.o + o0;
    for (int64_t t = 0; t < count; ++t) tile_step(acc, mp + t * s.o, vp + t * s.c, 1);
    float* dst = du + (p * s.c + c0) * s.o + o0;
    for (int r = 0; r < TM; ++r)
      for (int q = 0; q < NV; ++q) store(dst + r * s.o + 16 * q, acc[r][q]);
  }
}

template <int NV>
void filter_rows(const Shape& s, const float* v, const float* m, float* du, int64_t count, int64_t o0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t c0 = 0; c0 < s.c; c0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, s.c - c0)), [&](auto rows) __attribute__((always_inline)) {
      part_products<NV, decltype(rows)::value>(s, v, m, du, count, c0, o0);
    });
}

// The tiles are summed in parts of at most kFilterGradPartTiles tiles (contiguous ranges, as
// many as that takes): each part's 16 x tiles x (C + O) transformed values are written to a
// buffer, its products summed in registers over all its tiles into a buffer of its own, and the
// parts' sums added in order, so that the result does not depend on the threads or on which
// thread took which part.
constexpr int64_t kFilterGradPartTiles = 512;

ffi::Error WinogradFilterGradImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> dy,
                                  ffi::ResultBuffer<ffi::F32> du, int64_t pad_top, int64_t pad_left,
                                  int64_t threads) {
  const auto xd = x.dimensions(), yd = dy.dimensions(), ud = du->dimensions();
  if (xd.size() != 4 || yd.size() != 4 || ud.size() != 3 || ud[0] != kFrequencies || ud[1] != xd[3] ||
      ud[2] != yd[3] || yd[0] != xd[0] || xd[3] % 16 != 0 || yd[3] % 16 != 0 || pad_top < 0 || pad_left < 0)
    return ffi::Error::InvalidArgument(
        "winograd filter gradient: expected x (N, H, W, C), dy (N, out_h, out_w, O), du (16, C, O), C and O "
        "multiples of 16");
  Shape s{xd[0], xd[1], xd[2], xd[3], yd[3], yd[1], yd[2], (yd[1] + 1) / 2, (yd[2] + 1) / 2, pad_top, pad_left};
  const int64_t tiles = s.tiles(), size = kFrequencies * s.c * s.o;
  float* out = du->typed_data();
  std::fill(out, out + size, 0.0f);
  if (tiles == 0) return ffi::Error::Success();
  const int64_t parts = (tiles + kFilterGradPartTiles - 1) / kFilterGradPartTiles;
  const int64_t part_tiles = (tiles + parts - 1) / parts;
  const int64_t helpers = helpers_for(pool, parts, threads);
  std::vector<float> sums(parts * size);
  std::vector<float> scratch((helpers + 1) * kFrequencies * part_tiles * (s.c + s.o));
  const float *xp = x.typed_data(), *yp = dy.typed_data();
  for_each_index(pool, parts, helpers, [&](int64_t worker, int64_t part) {
    float* v = scratch.data() + worker * kFrequencies * part_tiles * (s.c + s.o);
    float* m = v + kFrequencies * part_tiles * s.c;
    float* sum = sums.data() + part * size;
    const int64_t first = part * part_tiles, count = std::min(part_tiles, tiles - first);
    transform_inputs(s, xp, v, first, count);
    transform_cotangents(s, yp, m, first, count);
    int64_t o0 = 0;
    if constexpr (kWideTiles) {
      for (; o0 + 64 <= s.o; o0 += 64) filter_rows<4>(s, v, m, sum, count, o0);
      for (; o0 + 32 <= s.o; o0 += 32) filter_rows<2>(s, v, m, sum, count, o0);
    }
    for (; o0 < s.o; o0 += 16) filter_rows<1>(s, v, m, sum, count, o0);
  });
  for (int64_t part = 0; part < parts; ++part)
    for (int64_t i = 0; i < size; i += 16) store(out + i, load(out + i) + load(sums.data() + part * size + i));
  return ffi::Error::Success();
}

}  // namespace

// x (N, H, W, C); dy (N, out_h, out_w, O); du (16, C, O), the transformed filter gradient (G^T du G
// is the filter's); the padding above and left of x; the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasWinogradFilterGrad, WinogradFilterGradImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("threads"));

// x (N, H, W, C); u (16, C, O), the transformed filter; y (N, out_h, out_w, O); the padding above and
// left of x (the rest of the padding is implied by y's size); tiles per block; the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasWinogradForward, WinogradForwardImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("pad_top")
                                  .Attr<int64_t>("pad_left")
                                  .Attr<int64_t>("block_tiles")
                                  .Attr<int64_t>("threads"));
