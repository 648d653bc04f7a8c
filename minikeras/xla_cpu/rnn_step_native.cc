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
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::kSingleVectorTile;
using minikeras::kWideTiles;
using minikeras::store;
using minikeras::tile_step;
using minikeras::v16;
using minikeras::with_tile_size;

namespace {

// Runs work(index) once for every index in [0, n) on the calling thread and one helper thread of
// its own that stays alive between calls: a recurrent layer's per-step product, a few tens of
// microseconds of work 100 times in a row, where waking one of XLA's pool threads per call
// costs about as much as the half it would take. After each call the helper spins for a while
// (kPairSpinMicroseconds) on the next call's number, then sleeps on a condition variable, so
// that between loops it takes no CPU. As in for_each_index the caller takes indices itself
// until none is left: a helper that is asleep, descheduled or serving another caller (one
// caller at a time; the others run alone) only costs its share of the speed, never a wait for
// work that has not started. A forked child has no helper thread (nor a use for the parent's
// lock state) and runs alone.
constexpr int64_t kPairSpinMicroseconds = 200;

class ThreadPair {
 public:
  static ThreadPair& instance() {
    static ThreadPair* pair = new ThreadPair();  // never destroyed: the helper may outlive exit's destructors
    return *pair;
  }

  template <typename Work>
  void run(int64_t n, Work& work) {
    if (n <= 1 || busy_.exchange(true, std::memory_order_acquire)) {
      for (int64_t i = 0; i < n; ++i) work(i);
      return;
    }
    start_helper();
    if (helper_process_ != getpid()) {  // a child forked after the helper started
      for (int64_t i = 0; i < n; ++i) work(i);
      busy_.store(false, std::memory_order_release);
      return;
    }
    call_.store([](void* w, int64_t i) { (*static_cast<Work*>(w))(i); }, std::memory_order_relaxed);
    work_.store(&work, std::memory_order_relaxed);
    n_.store(n, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    const uint64_t ticket = ++call_number_;
    next_.store(ticket << kIndexBits, std::memory_order_seq_cst);  // publishes call_, work_, n_
    if (sleeping_.load(std::memory_order_seq_cst)) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_one();
    }
    take_indices(ticket);
    for (int64_t spins = 0; done_.load(std::memory_order_acquire) != n; ++spins) pause(spins);
    busy_.store(false, std::memory_order_release);
  }

 private:
  static constexpr int kIndexBits = 16;  // next_ holds the call's number above the next index
  ThreadPair() = default;

  static void pause(int64_t spins) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (spins > 64) std::this_thread::yield();  // the helper was descheduled mid-index
  }

  // Takes and runs the indices of call `ticket` until none is left (or the call is over).
  void take_indices(uint64_t ticket) {
    for (;;) {
      uint64_t next = next_.load(std::memory_order_acquire);
      if ((next >> kIndexBits) != ticket) return;
      const int64_t i = static_cast<int64_t>(next & ((uint64_t{1} << kIndexBits) - 1));
      if (i >= n_.load(std::memory_order_relaxed)) return;
      if (!next_.compare_exchange_weak(next, next + 1, std::memory_order_acq_rel)) continue;
      call_.load(std::memory_order_relaxed)(work_.load(std::memory_order_relaxed), i);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void start_helper() {
    std::call_once(started_, [this] {
      helper_process_ = getpid();
      std::thread([this] { helper(); }).detach();
    });
  }

  void helper() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t ticket = next_.load(std::memory_order_acquire) >> kIndexBits;
      const auto spin_start = std::chrono::steady_clock::now();
      for (int64_t spins = 0; ticket == seen; ++spins) {
        if ((spins & 255) == 255 && std::chrono::steady_clock::now() - spin_start >
                                        std::chrono::microseconds(kPairSpinMicroseconds)) {
          std::unique_lock<std::mutex> lock(mutex_);
          sleeping_.store(true, std::memory_order_seq_cst);
          wake_.wait(lock, [&] { return (next_.load(std::memory_order_seq_cst) >> kIndexBits) != seen; });
          sleeping_.store(false, std::memory_order_relaxed);
        } else {
          // Yields rather than pauses: on a machine with a core to spare this returns at once,
          // on a busy one the other threads (the caller's included) run meanwhile.
          std::this_thread::yield();
        }
        ticket = next_.load(std::memory_order_acquire) >> kIndexBits;
      }
      seen = ticket;
      take_indices(ticket);
    }
  }

  std::atomic<bool> busy_{false}, sleeping_{false};
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> done_{0};
  uint64_t call_number_ = 0;  // written by the caller holding busy_ only
  // The call's work, published by next_ (a stale helper may read them as the next call writes them).
  std::atomic<void (*)(void*, int64_t)> call_{nullptr};
  std::atomic<void*> work_{nullptr};
  std::atomic<int64_t> n_{0};
  std::once_flag started_;
  pid_t helper_process_ = 0;  // written once, under started_
  std::mutex mutex_;
  std::condition_variable wake_;
};

template <int NV>
constexpr int kTileRows = NV == 4 ? 6 : NV == 2 ? 12 : kSingleVectorTile;  // 24 accumulators (AVX-512)

// C[m0 + t, n0 + 16v ...] for t < TM, v < NV: the sum over k of A[m0 + t, k] * B[k, n0 + 16v ...] in order of k.
template <int NV, int TM>
void tile(const float* a, const float* b, float* c, int64_t k_size, int64_t n, int64_t m0, int64_t n0) {
  v16 acc[TM][NV] = {};
  for (int64_t k = 0; k < k_size; ++k) tile_step(acc, b + k * n + n0, a + m0 * k_size + k, k_size);
  for (int t = 0; t < TM; ++t)
    for (int v = 0; v < NV; ++v) store(c + (m0 + t) * n + n0 + 16 * v, acc[t][v]);
}

// Rows m_begin to m_end of C's columns n0 to n0 + 16 NV.
template <int NV>
void panel(const float* a, const float* b, float* c, int64_t m_begin, int64_t m_end, int64_t k_size, int64_t n,
           int64_t n0) {
  constexpr int TM = kTileRows<NV>;
  for (int64_t m0 = m_begin; m0 < m_end; m0 += TM)
    with_tile_size<TM>(static_cast<int>(std::min<int64_t>(TM, m_end - m0)), [&](auto t) __attribute__((always_inline)) {
      tile<NV, decltype(t)::value>(a, b, c, k_size, n, m0, n0);
    });
}

// Rows m_begin to m_end of C's columns n_begin to n_end, by the widest panels that fit.
void block(const float* a, const float* b, float* c, int64_t m_begin, int64_t m_end, int64_t k_size, int64_t n,
           int64_t n_begin, int64_t n_end) {
  int64_t n0 = n_begin;
  if constexpr (kWideTiles) {
    for (; n0 + 64 <= n_end; n0 += 64) panel<4>(a, b, c, m_begin, m_end, k_size, n, n0);
    for (; n0 + 32 <= n_end; n0 += 32) panel<2>(a, b, c, m_begin, m_end, k_size, n, n0);
  }
  for (; n0 < n_end; n0 += 16) panel<1>(a, b, c, m_begin, m_end, k_size, n, n0);
}

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

namespace {

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasRnnStepMatmul, StepMatmulImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));
