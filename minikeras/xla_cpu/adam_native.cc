// One Adam step for one float32 variable, as an XLA FFI handler for the CPU: the new variable,
// first and second moments in one pass over the four arrays. minikeras/xla_cpu/adam_native.py
// builds this file and calls it from mk.optimizers.Adam inside compiled programs; the outputs
// alias the inputs, so the update is in place.
//
// Why: in XLA each variable's update is three loop fusions (moment, moment, variable), and each
// fusion is an LLVM module compiled at the program's first call (24 kernels for the MNIST CNN's 8
// variables). A custom call compiles nothing.
//
//   m' = m + (g - m) * c1        (c1 = 1 - beta_1, rounded to float32 as jax rounds it)
//   v' = v + (g * g - v) * c2    (c2 = 1 - beta_2)
//   p' = p - (m' * alpha) / (sqrt(v') + epsilon)
//
// MinikerasAdamWUpdate first applies decoupled weight decay (AdamW, or any optimizer's
// weight_decay), p = p - p * weight_decay * lr, in the same pass: the optimizer's separate decay
// pass read and wrote every decayed variable once more (its 9216x2048 head kernel is 75 MB in the
// keras.io Vision Transformer; the moments stay in place, the new variable has a buffer of its own,
// see adam_native.py). As XLA computes it: its simplifier multiplies the two scalars
// first, s = lr * weight_decay, and the multiply by s is contracted into the subtraction,
// p' = fma(-p, s, p).
//
// in the operations and order of mk.optimizers.Adam's jax code, and with the roundings XLA:CPU
// gives them: it contracts each multiply feeding an add into a fused multiply-add (m' is one,
// v' two: fma(fma(g, g, -v), c2, v)), so the kernel writes those fmas out and is built with
// -ffp-contract=off, so that the compiler adds no others. The bits are XLA's
// (tests/test_adam_native.py checks them). alpha is the step's bias-corrected learning rate, a
// float32 scalar operand computed by the program.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "native_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::for_each_index;
using minikeras::helpers_for;
using minikeras::madd;

namespace {

constexpr int64_t kBlock = 1 << 15;  // elements per unit of work shared among the threads

// Elements [begin, end). The outputs are the inputs' buffers (the update is in place): each
// element is read before it is written and no other element is touched, which the pragmas tell
// the compiler, so that it vectorizes the loop without checking the arrays for overlap.
// With kDecay, p[i] is first decayed: p - p * s, s = lr * weight_decay (rounded once).
template <bool kDecay>
void update(const float* p, const float* m, const float* v, const float* g, float* p_out, float* m_out,
            float* v_out, int64_t begin, int64_t end, float alpha, float c1, float c2, float epsilon,
            float decay) {
#if defined(__clang__)
#pragma clang loop vectorize(assume_safety)
#elif defined(__GNUC__)
#pragma GCC ivdep
#endif
  for (int64_t i = begin; i < end; ++i) {
    const float gi = g[i];
    const float mi = madd(gi - m[i], c1, m[i]);
    const float vi = madd(madd(gi, gi, -v[i]), c2, v[i]);
    const float pi = kDecay ? madd(-p[i], decay, p[i]) : p[i];
    p_out[i] = pi - (mi * alpha) / (std::sqrt(vi) + epsilon);
    m_out[i] = mi;
    v_out[i] = vi;
  }
}

template <bool kDecay>
ffi::Error Run(ffi::ThreadPool& pool, ffi::Buffer<ffi::F32>& p, ffi::Buffer<ffi::F32>& m, ffi::Buffer<ffi::F32>& v,
               ffi::Buffer<ffi::F32>& g, ffi::Buffer<ffi::F32>& alpha, const float* lr, ffi::ResultBuffer<ffi::F32>& p_out,
               ffi::ResultBuffer<ffi::F32>& m_out, ffi::ResultBuffer<ffi::F32>& v_out, float one_minus_beta_1,
               float one_minus_beta_2, float epsilon, float weight_decay, int64_t threads) {
  const int64_t n = p.element_count();
  if (m.element_count() != n || v.element_count() != n || g.element_count() != n || alpha.element_count() != 1 ||
      p_out->element_count() != n || m_out->element_count() != n || v_out->element_count() != n)
    return ffi::Error::InvalidArgument("adam update: expected variable, moments and gradient of " +
                                       std::to_string(n) + " elements each and a scalar alpha");
  const float a = alpha.typed_data()[0];
  const float decay = kDecay ? lr[0] * weight_decay : 0.0f;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  for_each_index(pool, blocks, helpers_for(pool, blocks, threads), [&](int64_t, int64_t block) {
    update<kDecay>(p.typed_data(), m.typed_data(), v.typed_data(), g.typed_data(), p_out->typed_data(),
                   m_out->typed_data(), v_out->typed_data(), block * kBlock, std::min(n, (block + 1) * kBlock), a,
                   one_minus_beta_1, one_minus_beta_2, epsilon, decay);
  });
  return ffi::Error::Success();
}

ffi::Error AdamImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::F32> m, ffi::Buffer<ffi::F32> v,
                    ffi::Buffer<ffi::F32> g, ffi::Buffer<ffi::F32> alpha, ffi::ResultBuffer<ffi::F32> p_out,
                    ffi::ResultBuffer<ffi::F32> m_out, ffi::ResultBuffer<ffi::F32> v_out, float one_minus_beta_1,
                    float one_minus_beta_2, float epsilon, int64_t threads) {
  return Run<false>(pool, p, m, v, g, alpha, nullptr, p_out, m_out, v_out, one_minus_beta_1, one_minus_beta_2,
                    epsilon, 0.0f, threads);
}

ffi::Error AdamWImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::F32> m, ffi::Buffer<ffi::F32> v,
                     ffi::Buffer<ffi::F32> g, ffi::Buffer<ffi::F32> alpha, ffi::Buffer<ffi::F32> lr,
                     ffi::ResultBuffer<ffi::F32> p_out, ffi::ResultBuffer<ffi::F32> m_out,
                     ffi::ResultBuffer<ffi::F32> v_out, float one_minus_beta_1, float one_minus_beta_2, float epsilon,
                     float weight_decay, int64_t threads) {
  if (lr.element_count() != 1) return ffi::Error::InvalidArgument("adamw update: expected a scalar learning rate");
  return Run<true>(pool, p, m, v, g, alpha, lr.typed_data(), p_out, m_out, v_out, one_minus_beta_1,
                   one_minus_beta_2, epsilon, weight_decay, threads);
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasAdamUpdate, AdamImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // variable
                                  .Arg<ffi::Buffer<ffi::F32>>()  // first moment
                                  .Arg<ffi::Buffer<ffi::F32>>()  // second moment
                                  .Arg<ffi::Buffer<ffi::F32>>()  // gradient
                                  .Arg<ffi::Buffer<ffi::F32>>()  // alpha, a scalar
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("one_minus_beta_1")
                                  .Attr<float>("one_minus_beta_2")
                                  .Attr<float>("epsilon")
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasAdamWUpdate, AdamWImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // variable
                                  .Arg<ffi::Buffer<ffi::F32>>()  // first moment
                                  .Arg<ffi::Buffer<ffi::F32>>()  // second moment
                                  .Arg<ffi::Buffer<ffi::F32>>()  // gradient
                                  .Arg<ffi::Buffer<ffi::F32>>()  // alpha, a scalar
                                  .Arg<ffi::Buffer<ffi::F32>>()  // the learning rate, a scalar
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("one_minus_beta_1")
                                  .Attr<float>("one_minus_beta_2")
                                  .Attr<float>("epsilon")
                                  .Attr<float>("weight_decay")
                                  .Attr<int64_t>("threads"));
