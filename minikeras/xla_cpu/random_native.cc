// jax's threefry random bits on the CPU, as XLA FFI handlers, for minikeras' compiled programs
// (minikeras/xla_cpu/random_native.py builds this file):
//
// - MinikerasDropoutMask: a dropout layer's scaled keep-mask: out[i] = scale where element i is
//   kept, else 0, with exactly jax.random.bernoulli(key, 1 - rate)'s bits (ops.nn.dropout);
// - MinikerasThreefrySplit: jax.random.split(key) into two keys (ops.random.next_key, which
//   advances the global generator once per random op in a program).
//
// The bits are jax's threefry in its partitionable form: Threefry-2x32 (20 rounds) keyed by the
// key's two words over the counter (0, i) for the flat index i, the two output words xor-ed;
// jax's uniform draws (bits >> 9) * 2^-23 and keeps where that is below 1 - rate, that is where
// (bits >> 9) < threshold (computed by the caller).
//
// Why: XLA:CPU compiles the unrolled threefry as one big loop fusion per mask (and one per key
// split), a noticeable share of the MNIST CNN step's compile; a custom call compiles nothing. The mask's loop runs kChains
// vectors of counters at once: each vector's 20 rounds are a chain of dependent instructions, and
// a single chain leaves most of the vector units idle (written with one chain, the kernel took
// twice XLA's time).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::for_each_index;
using minikeras::helpers_for;

namespace {

#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX2__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;  // SSE2 or NEON
#endif
typedef uint32_t u32v __attribute__((vector_size(4 * kLanes)));
typedef float f32v __attribute__((vector_size(4 * kLanes)));
typedef int32_t i32v __attribute__((vector_size(4 * kLanes)));

constexpr int kChains = 4;                    // independent vectors of counters per loop turn
constexpr int64_t kStep = kLanes * kChains;  // elements per loop turn
constexpr int64_t kBlock = 1 << 16;           // elements per unit of work shared among the threads
constexpr uint32_t kParity = 0x1BD11BDA;

template <int R>
inline u32v rotl(u32v v) {
  return (v << R) | (v >> (32 - R));
}

// Four rounds of one chain with the rotations R0..R3.
template <int R0, int R1, int R2, int R3>
inline void rounds(u32v (&x0)[kChains], u32v (&x1)[kChains]) {
  for (int c = 0; c < kChains; ++c) { x0[c] += x1[c]; x1[c] = x0[c] ^ rotl<R0>(x1[c]); }
  for (int c = 0; c < kChains; ++c) { x0[c] += x1[c]; x1[c] = x0[c] ^ rotl<R1>(x1[c]); }
  for (int c = 0; c < kChains; ++c) { x0[c] += x1[c]; x1[c] = x0[c] ^ rotl<R2>(x1[c]); }
  for (int c = 0; c < kChains; ++c) { x0[c] += x1[c]; x1[c] = x0[c] ^ rotl<R3>(x1[c]); }
}

// Key injection after round group g (0-based): x0 += ks[(g+1)%3], x1 += ks[(g+2)%3] + g + 1.
inline void inject(u32v (&x0)[kChains], u32v (&x1)[kChains], uint32_t a, uint32_t b) {
  for (int c = 0; c < kChains; ++c) { x0[c] += a; x1[c] += b; }
}

// Threefry-2x32 (20 rounds) of the counter (x0, x1) under the key words ks (ks[2] the parity word).
inline void threefry(const uint32_t (&ks)[3], uint32_t& x0, uint32_t& x1) {
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
  for (int g = 0; g < 5; ++g) {
    for (int r = 0; r < 4; ++r) {
      const int d = kRot[g % 2][r];
      x0 += x1;
      x1 = x0 ^ ((x1 << d) | (x1 >> (32 - d)));
    }
    x0 += ks[(g + 1) % 3];
    x1 += ks[(g + 2) % 3] + static_cast<uint32_t>(g + 1);
  }
}

// Elements [begin, end) of the mask.
void mask(float* out, int64_t begin, int64_t end, uint32_t k0, uint32_t k1, uint32_t threshold, float scale) {
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ kParity};
  u32v lane;
  for (int l = 0; l < kLanes; ++l) lane[l] = l;
  const f32v keep_value = f32v{} + scale;
  const i32v limit = i32v{} + static_cast<int32_t>(threshold);  // threshold <= 2^23: no sign issue
  int64_t i = begin;
  for (; i + kStep <= end; i += kStep) {
    u32v x0[kChains], x1[kChains];
    for (int c = 0; c < kChains; ++c) {
      x0[c] = u32v{} + ks[0];  // the counter's high word is 0
      x1[c] = lane + static_cast<uint32_t>(i + c * kLanes) + ks[1];
    }
    rounds<13, 15, 26, 6>(x0, x1);
    inject(x0, x1, ks[1], ks[2] + 1);
    rounds<17, 29, 16, 24>(x0, x1);
    inject(x0, x1, ks[2], ks[0] + 2);
    rounds<13, 15, 26, 6>(x0, x1);
    inject(x0, x1, ks[0], ks[1] + 3);
    rounds<17, 29, 16, 24>(x0, x1);
    inject(x0, x1, ks[1], ks[2] + 4);
    rounds<13, 15, 26, 6>(x0, x1);
    inject(x0, x1, ks[2], ks[0] + 5);
    for (int c = 0; c < kChains; ++c) {
      const i32v high = reinterpret_cast<i32v>((x0[c] ^ x1[c]) >> 9);  // < 2^23: fits an int32
      const i32v kept = high < limit;                                    // all ones where kept
      const i32v value = reinterpret_cast<i32v>(keep_value) & kept;
      __builtin_memcpy(out + i + c * kLanes, &value, sizeof(value));
    }
  }
  for (; i < end; ++i) {  // the tail, one element at a time
    uint32_t x0 = 0, x1 = static_cast<uint32_t>(i);
    threefry(ks, x0, x1);
    out[i] = ((x0 ^ x1) >> 9) < threshold ? scale : 0.0f;
  }
}

ffi::Error MaskImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::F32> out,
                    int64_t threshold, float scale, int64_t threads) {
  if (key.element_count() != 2)
    return ffi::Error::InvalidArgument("dropout mask: expected a threefry key's data (2 uint32 words), received " +
                                       std::to_string(key.element_count()) + " words");
  const int64_t n = out->element_count();
  if (n >= (int64_t{1} << 32) || threshold < 0 || threshold > (int64_t{1} << 23))
    return ffi::Error::InvalidArgument("dropout mask: expected fewer than 2^32 elements and a threshold in [0, 2^23]");
  const uint32_t k0 = key.typed_data()[0], k1 = key.typed_data()[1];
  float* data = out->typed_data();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  for_each_index(pool, blocks, helpers_for(pool, blocks, threads), [&](int64_t, int64_t block) {
    mask(data, block * kBlock, std::min(n, (block + 1) * kBlock), k0, k1, static_cast<uint32_t>(threshold), scale);
  });
  return ffi::Error::Success();
}

// jax.random.split's two new keys (partitionable threefry): the block function of the counter
// (0, j) is the data of key j.
ffi::Error SplitImpl(ffi::Buffer<ffi::U32> key, ffi::ResultBuffer<ffi::U32> first, ffi::ResultBuffer<ffi::U32> second) {
  if (key.element_count() != 2 || first->element_count() != 2 || second->element_count() != 2)
    return ffi::Error::InvalidArgument("threefry split: expected a threefry key's data (2 uint32 words), received " +
                                       std::to_string(key.element_count()) + " words");
  const uint32_t k0 = key.typed_data()[0], k1 = key.typed_data()[1];
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ kParity};
  uint32_t a0 = 0, a1 = 0, b0 = 0, b1 = 1;
  threefry(ks, a0, b0);
  threefry(ks, a1, b1);
  first->typed_data()[0] = a0;
  first->typed_data()[1] = b0;
  second->typed_data()[0] = a1;
  second->typed_data()[1] = b1;
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasThreefrySplit, SplitImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::U32>>()  // the key's data, uint32[2]
                                  .Ret<ffi::Buffer<ffi::U32>>()  // the first new key's data
                                  .Ret<ffi::Buffer<ffi::U32>>()); // the second's

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasDropoutMask, MaskImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::U32>>()  // the key's data, uint32[2]
                                  .Ret<ffi::Buffer<ffi::F32>>()  // the scaled mask
                                  .Attr<int64_t>("threshold")
                                  .Attr<float>("scale")
                                  .Attr<int64_t>("threads"));
