// What the native kernels of recurrent loops (rnn_step_native.cc, rnn_loops_native.cc) share: a helper
// thread that stays alive between a loop's steps (ThreadPair) and the register-tiled product of a
// step (block), whose every element is one sum in order of k.
#ifndef MINIKERAS_XLA_CPU_STEP_KERNELS_H_
#define MINIKERAS_XLA_CPU_STEP_KERNELS_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include <sys/types.h>
#include <unistd.h>

#include "native_kernels.h"

namespace minikeras {

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
inline void block(const float* a, const float* b, float* c, int64_t m_begin, int64_t m_end, int64_t k_size, int64_t n,
           int64_t n_begin, int64_t n_end) {
  int64_t n0 = n_begin;
  if constexpr (kWideTiles) {
    for (; n0 + 64 <= n_end; n0 += 64) panel<4>(a, b, c, m_begin, m_end, k_size, n, n0);
    for (; n0 + 32 <= n_end; n0 += 32) panel<2>(a, b, c, m_begin, m_end, k_size, n, n0);
  }
  for (; n0 < n_end; n0 += 16) panel<1>(a, b, c, m_begin, m_end, k_size, n, n0);
}

}  // namespace minikeras

#endif  // MINIKERAS_XLA_CPU_STEP_KERNELS_H_
