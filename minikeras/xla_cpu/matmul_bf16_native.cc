// C = A^T B for bfloat16 matrices A (K x M) and B (K x N), N a multiple of 16, with float32 sums
// rounded to bfloat16 once, on AVX512_BF16's `vdpbf16ps`, as an XLA FFI handler for the CPU; and
// C = A B^T (A: M x K, B: N x K, K even), the same way (below, `matmul_nt`).
// minikeras/xla_cpu/matmul_bf16_native.py builds this file (-O3 -march=native) and calls it for
// the weight gradient of a bfloat16 Dense layer, x^T g, whose contraction runs over the batch.
//
// Why: XLA:CPU widens a bfloat16 dot that contracts the rows of both operands to float32, and on
// a row-major copy of x^T its bfloat16 dot runs that shape (many rows, a short contraction) at
// about half its GEMM rate. Here `vdpbf16ps` pairs consecutive batch rows: B's rows are paired
// once per call (B is the small operand: batch x units), A's per block of its columns, in a
// buffer of the worker that stays in its cache; a 6 x 64 (or 12 x 32, 12 x 16) tile of C stays in
// registers while the pairs of rows run. A CPU without AVX512_BF16 gets a handler that returns
// an error, and the Python side never calls it there.
//
//   C[m, n] = sum_kp dot2((A[2kp, m], A[2kp + 1, m]), (B[2kp, n], B[2kp + 1, n]))
//
// with a zero row after an odd last one. Each result's sum runs over kp in order, whatever the
// tile or thread, so results do not depend on them. A second handler writes the same bfloat16
// values widened to float32: the gradient of a float32 weight read as bfloat16 (a mixed-precision
// Dense layer's kernel) is this product widened, which XLA:CPU made as a pass of its own.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

#ifdef __AVX512BF16__
#include <immintrin.h>
#endif

namespace ffi = xla::ffi;

namespace {

#ifdef __AVX512BF16__
// out[2k] = a[k], out[2k + 1] = b[k] for k < n (b null: zeros).
inline void interleave(const uint16_t* __restrict a, const uint16_t* __restrict b, uint16_t* __restrict out,
                       int64_t n) {
  if (b == nullptr) {
    for (int64_t k = 0; k < n; ++k) {
      out[2 * k] = a[k];
      out[2 * k + 1] = 0;
    }
    return;
  }
  for (int64_t k = 0; k < n; ++k) {
    out[2 * k] = a[k];
    out[2 * k + 1] = b[k];
  }
}

// 16 float32 sums rounded to bfloat16 (nearest even) and stored: as bfloat16, or (Out = float)
// widened back to float32, the same values (a bfloat16 number is the top half of a float32's bits).
inline void store_rounded(uint16_t* p, __m512 v) {
  _mm256_storeu_si256((__m256i*)p, (__m256i)_mm512_cvtneps_pbh(v));
}
inline void store_rounded(float* p, __m512 v) {
  const __m512i bits = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(v));
  if ((reinterpret_cast<uintptr_t>(p) & 63) == 0)
    _mm512_stream_si512((__m512i*)p, _mm512_slli_epi32(bits, 16));
  else
    _mm512_storeu_si512(p, _mm512_slli_epi32(bits, 16));
}

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV from the paired block ap (kpairs x rows x 2, its
// columns from m_begin) and the paired bp (kpairs x N x 2).
template <int NV, int TM, typename Out>
void tile(const uint16_t* ap, const uint16_t* bp, Out* c, int64_t kpairs, int64_t rows, int64_t n,
          int64_t m_begin, int64_t m0, int64_t n0) {
  __m512 acc[TM][NV];
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_setzero_ps();
  const uint16_t* a0 = ap + (m0 - m_begin) * 2;
  for (int64_t kp = 0; kp < kpairs; ++kp) {
    __m512bh bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(bp + (kp * n + n0 + 16 * v) * 2);
    const uint16_t* ar = a0 + kp * rows * 2;
    for (int t = 0; t < TM; ++t) {
      int32_t bits;
      std::memcpy(&bits, ar + 2 * t, sizeof bits);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(bits);
      for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], av, bv[v]);
    }
  }
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store_rounded(c + (m0 + t) * n + n0 + 16 * v, acc[t][v]);
}

template <int NV>
constexpr int kTileRows = NV == 4 ? 6 : 12;  // at most 24 accumulators

template <int NV, typename Out>
void row_block(const uint16_t* ap, const uint16_t* bp, Out* c, int64_t kpairs, int64_t n, int64_t m_begin,
               int64_t m_end, int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = m_begin; m0 < m_end; m0 += TM)
    minikeras::with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m_end - m0)),
                                  [&](auto t) __attribute__((always_inline)) {
                                    tile<NV, decltype(t)::value>(ap, bp, c, kpairs, m_end - m_begin, n, m_begin, m0, n0);
                                  });
}

// Columns of A (rows of C) per unit of work: their pairs (K x 96 x 2 bytes) stay in the core's cache.
constexpr int64_t kBlockRows = 96;

template <typename Out>
void matmul_tn(ffi::ThreadPool& pool, const uint16_t* a, const uint16_t* b, Out* c, int64_t k, int64_t m,
               int64_t n, int64_t threads) {
  const int64_t kpairs = (k + 1) / 2;
  std::vector<uint16_t> bp(kpairs * n * 2);
  for (int64_t kp = 0; kp < kpairs; ++kp)
    interleave(b + 2 * kp * n, 2 * kp + 1 < k ? b + (2 * kp + 1) * n : nullptr, bp.data() + kp * n * 2, n);
  const int64_t blocks = (m + kBlockRows - 1) / kBlockRows;
  const int64_t helpers = minikeras::helpers_for(pool, blocks, threads);
  std::vector<std::vector<uint16_t>> ap(helpers + 1, std::vector<uint16_t>(kpairs * kBlockRows * 2));
  minikeras::for_each_index(pool, blocks, helpers, [&](int64_t worker, int64_t block) {
    const int64_t m_begin = block * kBlockRows, m_end = std::min(m, m_begin + kBlockRows), rows = m_end - m_begin;
    uint16_t* pairs = ap[worker].data();
    for (int64_t kp = 0; kp < kpairs; ++kp)
      interleave(a + 2 * kp * m + m_begin, 2 * kp + 1 < k ? a + (2 * kp + 1) * m + m_begin : nullptr,
                 pairs + kp * rows * 2, rows);
    int64_t n0 = 0;
    for (; n0 + 64 <= n; n0 += 64) row_block<4>(pairs, bp.data(), c, kpairs, n, m_begin, m_end, n0);
    for (; n0 + 32 <= n; n0 += 32) row_block<2>(pairs, bp.data(), c, kpairs, n, m_begin, m_end, n0);
    for (; n0 < n; n0 += 16) row_block<1>(pairs, bp.data(), c, kpairs, n, m_begin, m_end, n0);
  });
}

// -- C = A B^T --------------------------------------------------------------------------------------
// A bfloat16 Dense layer's input gradient g W^T (g: batch x units, W: features x units): XLA:CPU
// widens a bfloat16 dot whose operand arrives transposed, and on a row-major copy of W^T made
// first it pays a transpose pass over W per step. Here both operands are read as they lie: a row
// of A holds its pairs (A[m, 2kp], A[m, 2kp + 1]) side by side (broadcast, as `tile` does), and
// each worker pairs a block of B's rows into (kpairs, rows, 2) in a buffer of its own, which stays
// in its cache (B is the large operand: features x units).
//
//   C[m, n] = sum_kp dot2((A[m, 2kp], A[m, 2kp + 1]), (B[n, 2kp], B[n, 2kp + 1]))   (K even)

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV: A's rows m0 + t, the paired block bp of B's rows
// [n_begin, n_begin + rows).
template <int NV, int TM>
void tile_nt(const uint16_t* a, const uint16_t* bp, uint16_t* c, int64_t kpairs, int64_t rows, int64_t n,
             int64_t n_begin, int64_t m0, int64_t n0) {
  __m512 acc[TM][NV];
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_setzero_ps();
  const uint16_t* b0 = bp + (n0 - n_begin) * 2;
  const uint16_t* a0 = a + m0 * kpairs * 2;
  for (int64_t kp = 0; kp < kpairs; ++kp) {
    __m512bh bv[NV];
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b0 + (kp * rows + 16 * v) * 2);
    for (int t = 0; t < TM; ++t) {
      int32_t bits;
      std::memcpy(&bits, a0 + (t * kpairs + kp) * 2, sizeof bits);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(bits);
      for (int v = 0; v < NV; ++v) acc[t][v] = _mm512_dpbf16_ps(acc[t][v], av, bv[v]);
    }
  }
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store_rounded(c + (m0 + t) * n + n0 + 16 * v, acc[t][v]);
}

template <int NV>
void column_block_nt(const uint16_t* a, const uint16_t* bp, uint16_t* c, int64_t kpairs, int64_t m, int64_t n,
                     int64_t n_begin, int64_t rows, int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = 0; m0 < m; m0 += TM)
    minikeras::with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m - m0)),
                                  [&](auto t) __attribute__((always_inline)) {
                                    tile_nt<NV, decltype(t)::value>(a, bp, c, kpairs, rows, n, n_begin, m0, n0);
                                  });
}

// Rows of B (columns of C) per unit of work, a multiple of 16: their pairs (K x 64 x 2 bytes) stay
// in the core's cache while all of A's rows pass.
constexpr int64_t kBlockColumnsNt = 64;

void matmul_nt(ffi::ThreadPool& pool, const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t k, int64_t m,
               int64_t n, int64_t threads) {
  const int64_t kpairs = k / 2;
  const int64_t blocks = (n + kBlockColumnsNt - 1) / kBlockColumnsNt;
  const int64_t helpers = minikeras::helpers_for(pool, blocks, threads);
  std::vector<std::vector<uint32_t>> bp(helpers + 1, std::vector<uint32_t>(kpairs * kBlockColumnsNt));
  minikeras::for_each_index(pool, blocks, helpers, [&](int64_t worker, int64_t block) {
    const int64_t n_begin = block * kBlockColumnsNt, rows = std::min(n, n_begin + kBlockColumnsNt) - n_begin;
    uint32_t* pairs = bp[worker].data();  // pairs[kp * rows + r] = (B[n_begin + r, 2kp], B[n_begin + r, 2kp + 1])
    for (int64_t r = 0; r < rows; ++r) {
      const uint16_t* row = b + (n_begin + r) * k;
      for (int64_t kp = 0; kp < kpairs; ++kp) std::memcpy(pairs + kp * rows + r, row + 2 * kp, sizeof(uint32_t));
    }
    const uint16_t* paired = reinterpret_cast<const uint16_t*>(pairs);
    int64_t n0 = n_begin;
    for (; n0 + 64 <= n_begin + rows; n0 += 64) column_block_nt<4>(a, paired, c, kpairs, m, n, n_begin, rows, n0);
    for (; n0 + 32 <= n_begin + rows; n0 += 32) column_block_nt<2>(a, paired, c, kpairs, m, n, n_begin, rows, n0);
    for (; n0 < n_begin + rows; n0 += 16) column_block_nt<1>(a, paired, c, kpairs, m, n, n_begin, rows, n0);
  });
}
#endif  // __AVX512BF16__

// C = A^T B into c, bfloat16 (Out = uint16_t) or the same values widened to float32 (Out = float).
template <typename Out, typename Result>
ffi::Error matmul_tn_call(ffi::ThreadPool& pool, ffi::Buffer<ffi::BF16>& a, ffi::Buffer<ffi::BF16>& b, Result& c,
                          int64_t threads) {
  const auto ad = a.dimensions(), bd = b.dimensions(), cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[0] != bd[0] || cd[0] != ad[1] || cd[1] != bd[1] ||
      bd[1] % 16 != 0)
    return ffi::Error::InvalidArgument(
        "bfloat16 matmul A^T B: expected A (K, M), B (K, N) and C (M, N) with N % 16 == 0");
#ifdef __AVX512BF16__
  Out* cp = reinterpret_cast<Out*>(c->typed_data());
  if (ad[0] == 0) {
    std::fill(cp, cp + ad[1] * bd[1], Out{0});
    return ffi::Error::Success();
  }
  matmul_tn(pool, reinterpret_cast<const uint16_t*>(a.typed_data()), reinterpret_cast<const uint16_t*>(b.typed_data()),
            cp, ad[0], ad[1], bd[1], threads);
  return ffi::Error::Success();
#else
  return ffi::Error(ffi::ErrorCode::kUnimplemented,
                    "bfloat16 matmul: this library was built for a CPU without AVX512_BF16");
#endif
}

ffi::Error MatmulTnBf16Impl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> a, ffi::Buffer<ffi::BF16> b,
                            ffi::ResultBuffer<ffi::BF16> c, int64_t threads) {
  return matmul_tn_call<uint16_t>(pool, a, b, c, threads);
}

ffi::Error MatmulTnBf16WidenedImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> a, ffi::Buffer<ffi::BF16> b,
                                   ffi::ResultBuffer<ffi::F32> c, int64_t threads) {
  return matmul_tn_call<float>(pool, a, b, c, threads);
}

// C (M, N) = A (M, K) B^T with B (N, K); K even, N a multiple of 16.
ffi::Error MatmulNtBf16Impl(ffi::ThreadPool pool, ffi::Buffer<ffi::BF16> a, ffi::Buffer<ffi::BF16> b,
                            ffi::ResultBuffer<ffi::BF16> c, int64_t threads) {
  const auto ad = a.dimensions(), bd = b.dimensions(), cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[1] != bd[1] || cd[0] != ad[0] || cd[1] != bd[0] ||
      bd[0] % 16 != 0 || ad[1] % 2 != 0)
    return ffi::Error::InvalidArgument(
        "bfloat16 matmul A B^T: expected A (M, K), B (N, K) and C (M, N) with K even and N % 16 == 0");
#ifdef __AVX512BF16__
  uint16_t* cp = reinterpret_cast<uint16_t*>(c->typed_data());
  if (ad[1] == 0 || ad[0] == 0) {
    std::fill(cp, cp + ad[0] * bd[0], uint16_t{0});
    return ffi::Error::Success();
  }
  matmul_nt(pool, reinterpret_cast<const uint16_t*>(a.typed_data()), reinterpret_cast<const uint16_t*>(b.typed_data()),
            cp, ad[1], ad[0], bd[0], threads);
  return ffi::Error::Success();
#else
  return ffi::Error(ffi::ErrorCode::kUnimplemented,
                    "bfloat16 matmul: this library was built for a CPU without AVX512_BF16");
#endif
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulNtBf16, MatmulNtBf16Impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::BF16>>()
                                  .Attr<int64_t>("threads"));

// A^T B rounded to bfloat16 and written widened to float32 (a float32 weight's gradient).
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulTnBf16Widened, MatmulTnBf16WidenedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulTnBf16, MatmulTnBf16Impl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Arg<ffi::Buffer<ffi::BF16>>()
                                  .Ret<ffi::Buffer<ffi::BF16>>()
                                  .Attr<int64_t>("threads"));
