// C = A B for float32 matrices A (M x K) and B (K x N), N a multiple of 16, on two threads: a
// recurrent layer's per-step product (h @ U forward, dz @ U^T backward) inside its loop over time,
// as an XLA FFI handler for the CPU. minikeras/xla_cpu/rnn_step_native.py builds this file.
//
// Why: the loop is sequential, so a step's product (tens of microseconds) is the only work there
// is to share; waking one of XLA's pool threads per step costs about as much as the half it would
// take. Here one helper thread of our own stays alive between steps (ThreadPair). Each element of
// C is one register tile's sum over k in order of k: the bits of matmul_native.cc's a @ b kernel
// (and, at the sizes tested, of XLA's dot), whichever thread computes it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "step_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::block;
using minikeras::ThreadPair;

namespace {

// The work is shared by chunks of C: kChunkCols columns (a core keeps its columns of B in its own
// cache from step to step), or, where that gives one chunk, C's rows in two halves (split on a
// boundary of every tile height).
constexpr int64_t kChunkCols = 64;
constexpr int64_t kRowAlign = 12;

// C = A B on `threads` threads (2: with ThreadPair's helper).
void step_matmul(const float* ap, const float* bp, float* cp, int64_t m, int64_t k_size, int64_t n,
                 int64_t threads) {
  const int64_t col_chunks = (n + kChunkCols - 1) / kChunkCols;
  const int64_t row_parts = col_chunks >= 2 ? 1 : 2;
  const int64_t row_split = std::min(m, (m / 2 + kRowAlign - 1) / kRowAlign * kRowAlign);
  auto work = [&](int64_t chunk) {
    const int64_t n_begin = (chunk / row_parts) * kChunkCols, n_end = std::min(n, n_begin + kChunkCols);
    const int64_t m_begin = row_parts == 1 || chunk % 2 == 0 ? 0 : row_split;
    const int64_t m_end = row_parts == 1 || chunk % 2 == 1 ? m : row_split;
    block(ap, bp, cp, m_begin, m_end, k_size, n, n_begin, n_end);
  };
  const int64_t chunks = col_chunks * row_parts;
  if (threads >= 2) {
    ThreadPair::instance().run(chunks, work);
  } else {
    for (int64_t i = 0; i < chunks; ++i) work(i);
  }
}

ffi::Error StepMatmulImpl(ffi::Buffer<ffi::F32> a, ffi::Buffer<ffi::F32> b, ffi::ResultBuffer<ffi::F32> c,
                          int64_t threads) {
  const auto ad = a.dimensions(), bd = b.dimensions(), cd = c->dimensions();
  if (ad.size() != 2 || bd.size() != 2 || cd.size() != 2 || ad[1] != bd[0] || cd[0] != ad[0] || cd[1] != bd[1] ||
      bd[1] % 16 != 0)
    return ffi::Error::InvalidArgument("step matmul A B: expected A (M, K), B (K, N) and C (M, N) with N % 16 == 0");
  step_matmul(a.typed_data(), b.typed_data(), c->typed_data(), ad[0], ad[1], bd[1], threads);
  return ffi::Error::Success();
}

// Wall seconds of `steps` dependent products (each step's A takes the product's first columns)
// on `threads` threads.
double timed_loop(std::vector<float>& a, const std::vector<float>& b, std::vector<float>& c, int64_t m, int64_t k,
                  int64_t n, int64_t steps, int64_t threads) {
  const auto start = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < steps; ++s) {
    step_matmul(a.data(), b.data(), c.data(), m, k, n, threads);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < std::min(k, n); ++j) a[i * k + j] = 0.5f * c[i * n + j];
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

// The wall time of a loop of (m, k) @ (k, n) products on one thread over that on two: medians of
// `rounds` alternating rounds of `steps` steps (rnn_step_native.two_threads_faster, at first use).
extern "C" double MinikerasRnnStepTwoThreadSpeedup(int64_t m, int64_t k, int64_t n, int64_t steps, int64_t rounds) {
  if (m <= 0 || k <= 0 || n <= 0 || n % 16 != 0 || steps <= 0 || rounds <= 0) return 0.0;
  std::vector<float> a(m * k), b(k * n), c(m * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = static_cast<float>(i % 7) * 0.01f;
  for (int64_t i = 0; i < k * n; ++i) b[i] = static_cast<float>(i % 5) * 0.001f;
  std::vector<double> one, two;
  timed_loop(a, b, c, m, k, n, 2, 2);  // starts the helper thread
  for (int64_t r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      one.push_back(timed_loop(a, b, c, m, k, n, steps, 1));
      two.push_back(timed_loop(a, b, c, m, k, n, steps, 2));
    } else {
      two.push_back(timed_loop(a, b, c, m, k, n, steps, 2));
      one.push_back(timed_loop(a, b, c, m, k, n, steps, 1));
    }
  }
  return median(one) / median(two);
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasRnnStepMatmul, StepMatmulImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));
