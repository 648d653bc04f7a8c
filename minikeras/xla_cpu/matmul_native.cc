// C = A^T B for float32 matrices A (K x M) and B (K x N), N a multiple of 16, as an XLA FFI handler
// for the CPU. minikeras/xla_cpu/matmul_native.py builds this file (-O3 -march=native) and calls
// it for the weight gradient of a Dense layer, x^T g, whose contraction runs over the batch rows.
// A second handler also returns B's column sums, the layer's bias gradient, in the same pass over
// B: the blocks of C's last rows add up the slices of B they have just read, so that a gradient
// over a vocabulary (2560 x 20000 floats) is not read once more for its sum.
//
// Why: XLA:CPU runs a product contracting the rows of both operands well below its GEMM speed,
// and transposing an operand first does not help,
// since XLA fuses the transpose back into the product or into its consumer. Here a 6 x 64 (or
// 12 x 32, 12 x 16) tile of C stays in registers while k runs over the batch: per row of the
// batch, 4 loads of B and 6 broadcasts of A feed 24 fused multiply-adds, all from L1.
//
// Two more handlers: C = A B for a recurrent layer's step (few rows, one thread), and a batch of
// products C[i, j] = A[i, j] B[i, j] read through any strides (unit ones along N), the threads
// sharing the products: the attention products of a multi-head layer (strided_matmul.py).
#include <algorithm>
#include <initializer_list>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

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

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV: a sum over k of A[k, m0 + t] * B[k, n0 + 16v ...], from
// k_begin to k_end, added to the sum so far in C unless k_begin is 0 (the same order of additions
// as one pass over all k).
template <int NV, int TM>
void tile(const float* a, const float* b, float* c, int64_t k_begin, int64_t k_end, int64_t m, int64_t n,
          int64_t m0, int64_t n0) {
  v16 acc[TM][NV];
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) acc[t][v] = k_begin == 0 ? v16{} : load(c + (m0 + t) * n + n0 + 16 * v);
  for (int64_t k = k_begin; k < k_end; ++k) tile_step(acc, b + k * n + n0, a + k * m + m0, 1);
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store(c + (m0 + t) * n + n0 + 16 * v, acc[t][v]);
}

template <int NV>
void row_block(const float* a, const float* b, float* c, int64_t k_begin, int64_t k_end, int64_t m, int64_t n,
               int64_t m_begin, int64_t m_end, int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = m_begin; m0 < m_end; m0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m_end - m0)), [&](auto t) __attribute__((always_inline)) {
      tile<NV, decltype(t)::value>(a, b, c, k_begin, k_end, m, n, m0, n0);
    });
}

// s[n0 + 16v ...] for v < NV: the sum over k of B[k, n0 + 16v ...] from k_begin to k_end, added to
// the sum so far in s unless k_begin is 0 (each sum in order of k).
template <int NV>
void column_sums(const float* b, float* s, int64_t k_begin, int64_t k_end, int64_t n, int64_t n0) {
  v16 acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = k_begin == 0 ? v16{} : load(s + n0 + 16 * v);
  for (int64_t k = k_begin; k < k_end; ++k)
    for (int v = 0; v < NV; ++v) acc[v] += load(b + k * n + n0 + 16 * v);
  for (int v = 0; v < NV; ++v) store(s + n0 + 16 * v, acc[v]);
}

// The row block of C from m_begin, the columns from n0 (NV vectors wide), over B's rows k_begin
// to k_end; and their column sums of B into s where s is not null.
template <int NV>
void block_panel(const float* a, const float* b, float* c, float* s, int64_t k_begin, int64_t k_end, int64_t m,
                 int64_t n, int64_t m_begin, int64_t m_end, int64_t n0) {
  row_block<NV>(a, b, c, k_begin, k_end, m, n, m_begin, m_end, n0);
  if (s != nullptr) column_sums<NV>(b, s, k_begin, k_end, n, n0);
}

// A unit of work shared among the threads is a block of C's rows and columns, so that a wide C
// (a classifier over a vocabulary) gives every thread work; within it the batch runs in slices
// of kBlockDepth rows, so that the slices of A and B a block reads stay in the core's cache
// (and B's rows, which lie a row of C apart, in its address translation buffer).
constexpr int64_t kBlockRows = 96;
constexpr int64_t kBlockCols = 256;  // a multiple of 64: the widest tile
constexpr int64_t kBlockDepth = 256;

// C = A^T B and, where `sums` is not null, sums[j] = the sum over k of B[k, j]. The sums are
// taken by the blocks of C's last row block (one block for a C with no rows), each for its columns:
// that row block is the one that may be narrower, so the threads' shares stay nearer even.
ffi::Error TnProduct(ffi::ThreadPool& pool, const ffi::Buffer<ffi::F32>& a, const ffi::Buffer<ffi::F32>& b,
                     ffi::ResultBuffer<ffi::F32>& c, float* sums, int64_t threads) {
  const auto ad = a.dimensions(), bd = b.dimensions(), cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[0] != bd[0] || cd[0] != ad[1] || cd[1] != bd[1] ||
      bd[1] % 16 != 0)
    return ffi::Error::InvalidArgument("matmul A^T B: expected A (K, M), B (K, N) and C (M, N) with N % 16 == 0");
  const int64_t k_size = ad[0], m = ad[1], n = bd[1];
  const int64_t row_blocks = std::max<int64_t>(sums != nullptr ? 1 : 0, (m + kBlockRows - 1) / kBlockRows);
  const int64_t col_blocks = (n + kBlockCols - 1) / kBlockCols;
  const int64_t blocks = row_blocks * col_blocks;
  const float *ap = a.typed_data(), *bp = b.typed_data();
  float* cp = c->typed_data();
  if (k_size == 0) {
    std::fill(cp, cp + m * n, 0.0f);
    if (sums != nullptr) std::fill(sums, sums + n, 0.0f);
    return ffi::Error::Success();
  }
  for_each_index(pool, blocks, helpers_for(pool, blocks, threads), [&](int64_t, int64_t block) {
    const int64_t m_begin = (block / col_blocks) * kBlockRows, m_end = std::min(m, m_begin + kBlockRows);
    const int64_t n_begin = (block % col_blocks) * kBlockCols, n_end = std::min(n, n_begin + kBlockCols);
    float* s = block / col_blocks == row_blocks - 1 ? sums : nullptr;
    for (int64_t k_begin = 0; k_begin < k_size; k_begin += kBlockDepth) {
      const int64_t k_end = std::min(k_size, k_begin + kBlockDepth);
      int64_t n0 = n_begin;
      if constexpr (kWideTiles) {
        for (; n0 + 64 <= n_end; n0 += 64) block_panel<4>(ap, bp, cp, s, k_begin, k_end, m, n, m_begin, m_end, n0);
        for (; n0 + 32 <= n_end; n0 += 32) block_panel<2>(ap, bp, cp, s, k_begin, k_end, m, n, m_begin, m_end, n0);
      }
      for (; n0 < n_end; n0 += 16) block_panel<1>(ap, bp, cp, s, k_begin, k_end, m, n, m_begin, m_end, n0);
    }
  });
  return ffi::Error::Success();
}

ffi::Error MatmulTnImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                        ffi::ResultBuffer<ffi::F32> c, int64_t threads) {
  return TnProduct(pool, a, b, c, nullptr, threads);
}

ffi::Error MatmulTnSumsImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                            ffi::ResultBuffer<ffi::F32> c, ffi::ResultBuffer<ffi::F32> sums, int64_t threads) {
  const auto sd = sums->dimensions();
  if (sd.size() != 1 || b.dimensions().size() != 2 || sd[0] != b.dimensions()[1])
    return ffi::Error::InvalidArgument("matmul A^T B with B's column sums: expected B (K, N) and sums (N,)");
  return TnProduct(pool, a, b, c, sums->typed_data(), threads);
}

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV: the sum over k of A[m0 + t, k] * B[k, n0 + 16v ...] in order of k.
template <int NV, int TM>
void nn_tile(const float* a, const float* b, float* c, int64_t k_size, int64_t n, int64_t m0, int64_t n0) {
  v16 acc[TM][NV] = {};
  for (int64_t k = 0; k < k_size; ++k) tile_step(acc, b + k * n + n0, a + m0 * k_size + k, k_size);
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store(c + (m0 + t) * n + n0 + 16 * v, acc[t][v]);
}

template <int NV>
void nn_panel(const float* a, const float* b, float* c, int64_t m, int64_t k_size, int64_t n, int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = 0; m0 < m; m0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m - m0)), [&](auto t) __attribute__((always_inline)) {
      nn_tile<NV, decltype(t)::value>(a, b, c, k_size, n, m0, n0);
    });
}

// The small product of a recurrent layer's step, h @ U: few rows (the batch), U read by column
// panels that stay in the L1 cache while every row tile of C passes over them.
constexpr int64_t kNnBlockCols = 128;  // a multiple of 64: the widest tile

ffi::Error MatmulNnImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b,
                        ffi::ResultBuffer<ffi::F32> c, int64_t threads) {
  const auto ad = a.dimensions(), bd = b.dimensions(), cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[1] != bd[0] || cd[0] != ad[0] || cd[1] != bd[1] ||
      bd[1] % 16 != 0)
    return ffi::Error::InvalidArgument("matmul A B: expected A (M, K), B (K, N) and C (M, N) with N % 16 == 0");
  const int64_t m = ad[0], k_size = ad[1], n = bd[1];
  const int64_t blocks = (n + kNnBlockCols - 1) / kNnBlockCols;
  const float *ap = a.typed_data(), *bp = b.typed_data();
  float* cp = c->typed_data();
  for_each_index(pool, blocks, helpers_for(pool, blocks, threads), [&](int64_t, int64_t block) {
    const int64_t n_begin = block * kNnBlockCols, n_end = std::min(n, n_begin + kNnBlockCols);
    int64_t n0 = n_begin;
    if constexpr (kWideTiles) {
      for (; n0 + 64 <= n_end; n0 += 64) nn_panel<4>(ap, bp, cp, m, k_size, n, n0);
      for (; n0 + 32 <= n_end; n0 += 32) nn_panel<2>(ap, bp, cp, m, k_size, n, n0);
    }
    for (; n0 < n_end; n0 += 16) nn_panel<1>(ap, bp, cp, m, k_size, n, n0);
  });
  return ffi::Error::Success();
}

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV: the sum over k of A[m0 + t, k] * B[k, n0 + 16v ...] in
// order of k, for operands laid out with any strides but unit ones along N (elements apart: A's
// rows sam and columns sak, B's rows sbk, C's rows scm).
template <int NV, int TM>
void strided_tile(const float* a, int64_t sam, int64_t sak, const float* b, int64_t sbk, float* c, int64_t scm,
                  int64_t k_size, int64_t m0, int64_t n0) {
  v16 acc[TM][NV] = {};
  for (int64_t k = 0; k < k_size; ++k) tile_step(acc, b + k * sbk + n0, a + m0 * sam + k * sak, sam);
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store(c + (m0 + t) * scm + n0 + 16 * v, acc[t][v]);
}

template <int NV>
void strided_panel(const float* a, int64_t sam, int64_t sak, const float* b, int64_t sbk, float* c, int64_t scm,
                   int64_t m, int64_t k_size, int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = 0; m0 < m; m0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m - m0)), [&](auto t) __attribute__((always_inline)) {
      strided_tile<NV, decltype(t)::value>(a, sam, sak, b, sbk, c, scm, k_size, m0, n0);
    });
}

// The largest element offset a layout reaches: sizes[i] - 1 steps of strides[i] each.
int64_t last_offset(std::initializer_list<std::pair<int64_t, int64_t>> sizes_strides) {
  int64_t offset = 0;
  for (auto [size, stride] : sizes_strides) offset += (size - 1) * stride;
  return offset;
}

// A batch of products C[i, j] = A[i, j] B[i, j] (i < batch0, j < batch1; A[i, j] M x K, B[i, j] K x N,
// C[i, j] M x N, N a multiple of 16), each operand read and written in place through its strides:
// the attention products of a multi-head layer, whose operands are [batch, sequence, heads, dim]
// arrays. XLA:CPU runs such a batched dot on one thread, after copying its operands into
// [batch, heads, ...] order; here the threads share the (i, j) products, each on one thread, every
// element's sum in order of k.
ffi::Error StridedBatchedMatmulImpl(ffi::ThreadPool pool, ffi::AnyBuffer a, ffi::AnyBuffer b,
                                    ffi::Result<ffi::AnyBuffer> c, int64_t batch0, int64_t batch1, int64_t m,
                                    int64_t n, int64_t k_size, int64_t sa0, int64_t sa1, int64_t sam, int64_t sak,
                                    int64_t sb0, int64_t sb1, int64_t sbk, int64_t sc0, int64_t sc1, int64_t scm,
                                    int64_t threads) {
  if (a.element_type() != ffi::F32 || b.element_type() != ffi::F32 || c->element_type() != ffi::F32)
    return ffi::Error::InvalidArgument("strided batched matmul: expected float32 operands");
  const int64_t a_count = static_cast<int64_t>(a.element_count()), b_count = static_cast<int64_t>(b.element_count());
  const int64_t c_count = static_cast<int64_t>(c->element_count());
  const bool empty = batch0 <= 0 || batch1 <= 0 || m <= 0 || n <= 0;
  const bool negative_stride = std::min({sa0, sa1, sam, sak, sb0, sb1, sbk, sc0, sc1, scm}) < 0;
  if (batch0 < 0 || batch1 < 0 || m < 0 || n < 0 || k_size < 0 || negative_stride || n % 16 != 0 ||
      c_count != batch0 * batch1 * m * n ||
      (!empty && k_size > 0 &&
       (last_offset({{batch0, sa0}, {batch1, sa1}, {m, sam}, {k_size, sak}}) >= a_count ||
        last_offset({{batch0, sb0}, {batch1, sb1}, {k_size, sbk}, {n, 1}}) >= b_count)) ||
      (!empty && last_offset({{batch0, sc0}, {batch1, sc1}, {m, scm}, {n, 1}}) >= c_count))
    return ffi::Error::InvalidArgument("strided batched matmul: the sizes and strides do not fit the buffers");
  if (empty) return ffi::Error::Success();
  const float *ap = static_cast<const float*>(a.untyped_data()), *bp = static_cast<const float*>(b.untyped_data());
  float* cp = static_cast<float*>(c->untyped_data());
  const int64_t products = batch0 * batch1;
  for_each_index(pool, products, helpers_for(pool, products, threads), [&](int64_t, int64_t index) {
    const int64_t i = index / batch1, j = index % batch1;
    const float *ai = ap + i * sa0 + j * sa1, *bi = bp + i * sb0 + j * sb1;
    float* ci = cp + i * sc0 + j * sc1;
    if (k_size == 0) {
      for (int64_t r = 0; r < m; ++r) std::fill(ci + r * scm, ci + r * scm + n, 0.0f);
      return;
    }
    int64_t n0 = 0;
    if constexpr (kWideTiles) {
      for (; n0 + 64 <= n; n0 += 64) strided_panel<4>(ai, sam, sak, bi, sbk, ci, scm, m, k_size, n0);
      for (; n0 + 32 <= n; n0 += 32) strided_panel<2>(ai, sam, sak, bi, sbk, ci, scm, m, k_size, n0);
    }
    for (; n0 < n; n0 += 16) strided_panel<1>(ai, sam, sak, bi, sbk, ci, scm, m, k_size, n0);
  });
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulNn, MatmulNnImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulTn, MatmulTnImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMatmulTnSums, MatmulTnSumsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasStridedBatchedMatmul, StridedBatchedMatmulImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::AnyBuffer>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Attr<int64_t>("batch0")
                                  .Attr<int64_t>("batch1")
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<int64_t>("k")
                                  .Attr<int64_t>("sa0")
                                  .Attr<int64_t>("sa1")
                                  .Attr<int64_t>("sam")
                                  .Attr<int64_t>("sak")
                                  .Attr<int64_t>("sb0")
                                  .Attr<int64_t>("sb1")
                                  .Attr<int64_t>("sbk")
                                  .Attr<int64_t>("sc0")
                                  .Attr<int64_t>("sc1")
                                  .Attr<int64_t>("scm")
                                  .Attr<int64_t>("threads"));
