// What minikeras' native XLA:CPU kernels (conv_native.cc, matmul_native.cc, ...) share: vectors of
// 16 floats, the register-tile step, work sharing between the calling thread and tasks on XLA's
// intra-op thread pool, and XLA's float32 exp.
#ifndef MINIKERAS_XLA_CPU_NATIVE_KERNELS_H_
#define MINIKERAS_XLA_CPU_NATIVE_KERNELS_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>

#include "xla/ffi/api/ffi.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace minikeras {

// 16 floats, with unaligned loads and stores (memcpy of a vector compiles to one vmovups per
// register). With AVX-512 a GCC/Clang vector extension of 64 bytes, one register. Elsewhere the
// same 16 floats as two AVX or four SSE/NEON vectors in a struct: a 64-byte vector extension
// would be "expanded piecewise" there, and GCC then keeps such vectors in memory rather than in
// registers (the kernels ran about a hundred times too slow that way on AVX2).
#if defined(__AVX512F__)
typedef float v16 __attribute__((vector_size(64)));
inline v16 load(const float* p) {
  v16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, v16 v) { std::memcpy(p, &v, sizeof v); }
inline v16 relu(v16 v) {  // max(v, 0), NaN kept as XLA's maximum keeps it
  const v16 zero{};
  return v < zero ? zero : v;
}
#else
#if defined(__AVX__)
constexpr int kPartBytes = 32;
#else
constexpr int kPartBytes = 16;
#endif
typedef float v16_part __attribute__((vector_size(kPartBytes)));
constexpr int kParts = 64 / kPartBytes;
constexpr int kPartFloats = kPartBytes / 4;
struct v16 {
  v16_part part[kParts];
  v16& operator+=(const v16& o) {
    for (int k = 0; k < kParts; ++k) part[k] += o.part[k];
    return *this;
  }
  v16 operator*(float scalar) const {
    v16 r;
    for (int k = 0; k < kParts; ++k) r.part[k] = part[k] * scalar;
    return r;
  }
  v16 operator+(const v16& o) const {
    v16 r = *this;
    return r += o;
  }
  v16 operator-(const v16& o) const {
    v16 r;
    for (int k = 0; k < kParts; ++k) r.part[k] = part[k] - o.part[k];
    return r;
  }
  v16 operator*(const v16& o) const {
    v16 r;
    for (int k = 0; k < kParts; ++k) r.part[k] = part[k] * o.part[k];
    return r;
  }
};
inline v16 load(const float* p) {
  v16 v;
  for (int k = 0; k < kParts; ++k) std::memcpy(&v.part[k], p + k * kPartFloats, kPartBytes);
  return v;
}
inline void store(float* p, v16 v) {
  for (int k = 0; k < kParts; ++k) std::memcpy(p + k * kPartFloats, &v.part[k], kPartBytes);
}
inline v16 relu(v16 v) {  // max(v, 0), NaN kept as XLA's maximum keeps it
  const v16_part zero{};
  for (int k = 0; k < kParts; ++k) v.part[k] = v.part[k] < zero ? zero : v.part[k];
  return v;
}
#endif

inline void add_to(float* p, v16 v) { store(p, load(p) + v); }

// How big a register tile may be: a v16 is one register with AVX-512 (32 of them), two with AVX
// (16 registers) and four with NEON (32) or SSE (16). A tile whose accumulators do not fit in
// registers spills them on every step. So wide tiles (2 or 4 vectors of channels per pixel) are
// for AVX-512 only, and a tile of one vector holds kSingleVectorTile pixels or rows: 12
// accumulators in 12 zmm, 12 ymm (AVX2's classic 6 x 16 GEMM tile), or 24 NEON registers.
// Every output element's sum runs in the same order whatever the tile, so the results do not
// depend on it.
#if defined(__AVX512F__)
constexpr bool kWideTiles = true;
constexpr int kSingleVectorTile = 12;
#elif defined(__AVX__) || defined(__aarch64__)
constexpr bool kWideTiles = false;
constexpr int kSingleVectorTile = 6;
#else
constexpr bool kWideTiles = false;
constexpr int kSingleVectorTile = 3;
#endif

// The rows of a register tile NV vectors wide: 24 accumulators with AVX-512 (6 x 4, 12 x 2, 12 x 1
// vectors), kSingleVectorTile elsewhere (one vector wide there).
template <int NV>
constexpr int kTileRows = NV == 4 ? 6 : NV == 2 ? 12 : kSingleVectorTile;

// One step of a register tile: acc[t][v] += vectors[16 v ...] * scalars[t * stride] for t < T,
// v < V, i.e. V vectors loaded once and T scalars broadcast, V * T fused multiply-adds. Every
// kernel's inner loop is this step over its contraction (taps and channels, or rows).
template <int T, int V>
inline void tile_step(v16 (&acc)[T][V], const float* vectors, const float* scalars, int64_t stride) {
  v16 vec[V];
  for (int v = 0; v < V; ++v) vec[v] = load(vectors + 16 * v);
  for (int t = 0; t < T; ++t) {
    const float scalar = scalars[t * stride];
    for (int v = 0; v < V; ++v) acc[t][v] += vec[v] * scalar;
  }
}

// Calls tile(std::integral_constant<int, N>{}) for the run-time size n in [1, MAX], so that a tile
// whose size is known only at run time (a row's last, narrower tile) runs the instantiation compiled
// for that size, its accumulators in registers; n outside [1, MAX] calls nothing.
// Always inlined, and so must be the lambdas given to it: called through the closure, a kernel's
// loop variables stay in memory and the MNIST CNN's step is measurably slower (benchmarks/LOG.md).
template <int MAX, typename Tile>
__attribute__((always_inline)) inline void with_tile_size(int n, Tile&& tile) {
  if constexpr (MAX > 0) {
    if (n == MAX) return tile(std::integral_constant<int, MAX>{});
    with_tile_size<MAX - 1>(n, std::forward<Tile>(tile));
  }
}

// Runs work(worker, index) once for every index in [0, n) (an image, a block of rows), on the
// calling thread (worker 0) and on up to `helpers` tasks of XLA's intra-op thread pool (workers
// 1..helpers), each taking the next index from a shared counter. The caller never waits for a task that has not
// started: it takes indices itself until none is left, then waits only for those being worked
// on. So a busy pool (both of XLA's threads inside such calls at once, say) costs speed,
// never a deadlock, and no thread of our own competes with XLA's for the cores.
template <typename Work>
inline void for_each_index(xla::ffi::ThreadPool& pool, int64_t n, int64_t helpers, Work work) {
  struct State {
    std::atomic<int64_t> next{0}, done{0};
    std::atomic<int64_t> workers{1};  // worker 0 is the caller
    std::mutex mutex;
    std::condition_variable all_done;
  };
  auto state = std::make_shared<State>();
  auto run = [state, n, work](int64_t worker) {
    for (int64_t i; (i = state->next.fetch_add(1)) < n;) {
      work(worker, i);
      if (state->done.fetch_add(1) + 1 == n) {
        std::lock_guard<std::mutex> lock(state->mutex);
        state->all_done.notify_all();
      }
    }
  };
  for (int64_t h = 0; h < helpers; ++h)
    pool.Schedule([state, run] { run(state->workers.fetch_add(1)); });
  run(0);
  std::unique_lock<std::mutex> lock(state->mutex);
  state->all_done.wait(lock, [&] { return state->done.load() == n; });
}

// Helpers for a call: `threads` workers in all (the caller included), at most one per index.
inline int64_t helpers_for(xla::ffi::ThreadPool& pool, int64_t n, int64_t threads) {
  const int64_t pool_threads = std::max<int64_t>(1, pool.num_threads());
  return std::max<int64_t>(0, std::min({threads, n, pool_threads + 1}) - 1);
}

// a * b + c as XLA:CPU computes it on this machine: one fused multiply-add where the CPU has
// them (XLA contracts a multiply feeding an add), else a multiply and an add.
inline float madd(float a, float b, float c) {
#if defined(__FMA__) || defined(__aarch64__)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

// XLA:CPU's float32 exp: clamp to [-87.8, 88.8] (NaN passes), n = floor(x log2(e) + 1/2) clamped
// to [-127, 127], r = x - n ln(2) in two parts, a degree-5 polynomial, times 2^n.
// (Its multiply-adds are written out: a source using it is built with -ffp-contract=off, so that
// the compiler adds none, and gets XLA's bits.)
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

#if defined(__AVX512F__)
// xla_exp of 16 floats: the same operations, one vector instruction each (max(c, x) and
// min(c, x) return x where it is NaN, as xla_exp's clamps do)
inline __m512 xla_exp16(__m512 x) {
  x = _mm512_max_ps(_mm512_set1_ps(-87.8f), x);
  x = _mm512_min_ps(_mm512_set1_ps(88.8f), x);
  __m512 n = _mm512_roundscale_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(0.5f)),
                                  _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  n = _mm512_max_ps(_mm512_set1_ps(-127.0f), n);
  n = _mm512_min_ps(_mm512_set1_ps(127.0f), n);
  const __m512 minus_n = _mm512_sub_ps(_mm512_setzero_ps(), n);
  __m512 r = _mm512_fmadd_ps(minus_n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fmadd_ps(minus_n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(1.9875691500e-4f), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(y, _mm512_castsi512_ps(bits));
}
#endif

}  // namespace minikeras

#endif  // MINIKERAS_XLA_CPU_NATIVE_KERNELS_H_
