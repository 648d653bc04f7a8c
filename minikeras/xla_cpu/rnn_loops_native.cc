// The whole loops over time of an LSTM and of a GRU (reset_after=True, Keras's default), forward
// and backward, on the calling thread and one helper thread (ThreadPair, step_kernels.h), as XLA
// FFI handlers for the CPU: Keras's layers with their default activations (tanh, sigmoid) and no
// recurrent dropout. minikeras/xla_cpu/rnn_loops_native.py builds this file and says where it
// applies.
//
// Why: XLA runs a step of the layer's lax.scan as a dozen operations one after another (the
// recurrent product, the gate fusions, the writes of the saved values into the stacked outputs),
// only the product on both cores. Here a forward step is one task per thread: each computes the
// product for its units' gate columns, then those units' gate math, and writes its part of every
// output; the next step starts when both are done (the product needs all of h). A reverse step is
// two: the gate gradients of each thread's units, then (all of them written) each thread's
// columns of dz @ U^T and its units' other state cotangents.
//
// LSTM, from every step's input projection p (T, B, 4H):
//   forward, t = 0 .. T-1, from the states h, c (h0, c0, then the step before's):
//     z = (p[t] + b) + h @ U;   i, f, o = sigmoid(z_i, z_f, z_o);   g = tanh(z_g)
//     c' = f c + i g;   h' = o tanh(c');   where mask[t] is 0, the states stay: h', c' = h, c
//     outputs: hs[t] = h', cs[t] = c', gates[t] = (i, f, g, o), tcs[t] = tanh(f c + i g)
//   backward, t = T-1 .. 0, from the final states' cotangents (dh, dc) and dhs, that of hs:
//     dh += dhs[t];   (dh', dc') = (dh, dc) where mask[t] is 1, else 0
//     dz_o = (dh' tc) (o (1 - o));   dc' += (dh' o) (1 - tc tc)
//     dz_i = (dc' g) (i (1 - i));   dz_f = (dc' c_prev[t]) (f (1 - f));   dz_g = (dc' i) (1 - g g)
//     dz[t] = (dz_i, dz_f, dz_g, dz_o);   dh = dz[t] @ U^T (+ dh where mask[t] is 0);   dc = dc' f (+ dc likewise)
//   outputs dz and the initial states' cotangents dh, dc.
// GRU, from p (T, B, 3H):
//   forward: q = h @ U + b_rec;   x = p[t] + b_in;   z = sigmoid(x_z + q_z);   r = sigmoid(x_r + q_r)
//     hh = tanh(x_h + r q_h);   h' = z h + (1 - z) hh (h where mask[t] is 0)
//     outputs: hs[t] = h', gates[t] = (z, r, hh), rhs[t] = q_h
//   backward: dh += dhs[t];   dh' = dh where mask[t] is 1, else 0
//     dz = (dh' (h_prev[t] - hh)) (z (1 - z));   dhh = (dh' (1 - z)) (1 - hh hh);   dr = (dhh q_h) (r (1 - r))
//     dp[t] = (dz, dr, dhh);   dq[t] = (dz, dr, dhh r);   dh = dh' z + dq[t] @ U^T (dh where mask[t] is 0)
//   outputs dp, dq (the cotangents of x and of q) and the initial state's cotangent dh.
//
// That is rnn_gates.LSTMGates' and GRUGates' step and step_grad, operation for operation; sigmoid
// is 1 / (1 + exp(-x)) with XLA's exp, tanh the rational approximation of Eigen and XLA:CPU (so the
// values are within a float32 rounding or two of XLA's). The products are step_kernels.h's: every element
// one sum in order of k, whichever thread computes it, so the results do not depend on the thread
// count.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "native_kernels.h"
#include "step_kernels.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using minikeras::block;
using minikeras::madd;
using minikeras::ThreadPair;
using minikeras::xla_exp;

namespace {

inline float sigmoid(float x) { return 1.0f / (1.0f + xla_exp(-x)); }

// Eigen's float32 tanh, which XLA:CPU's EmitFastTanh also evaluates: x itself where |x| < 0.0004,
// else a ratio of two polynomials in x^2 of x clamped to [-7.90531, 7.90531] (XLA clamps at
// 7.99881 where it emits FMAs; both give +-1 there to float32 precision).
inline float fast_tanh(float x) {
  const float ax = x < 0.0f ? -x : x;
  float c = x < -7.90531110763549805f ? -7.90531110763549805f : x;
  c = c > 7.90531110763549805f ? 7.90531110763549805f : c;
  const float x2 = c * c;
  float p = madd(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
  p = madd(x2, p, -8.60467152213735e-11f);
  p = madd(x2, p, 5.12229709037114e-08f);
  p = madd(x2, p, 1.48572235717979e-05f);
  p = madd(x2, p, 6.37261928875436e-04f);
  p = madd(x2, p, 4.89352455891786e-03f);
  p = c * p;
  float q = madd(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
  q = madd(x2, q, 2.26843463243900e-03f);
  q = madd(x2, q, 4.89352518554385e-03f);
  return ax < 0.0004f ? x : p / q;
}

#if defined(__AVX512F__)
inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, minikeras::xla_exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// fast_tanh of 16 floats (max(c, x) and min(c, x) keep a NaN x, as the scalar clamps do)
inline __m512 tanh16(__m512 x) {
  __m512 c = _mm512_max_ps(_mm512_set1_ps(-7.90531110763549805f), x);
  c = _mm512_min_ps(_mm512_set1_ps(7.90531110763549805f), c);
  const __m512 x2 = _mm512_mul_ps(c, c);
  __m512 p = _mm512_fmadd_ps(x2, _mm512_set1_ps(-2.76076847742355e-16f), _mm512_set1_ps(2.00018790482477e-13f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-8.60467152213735e-11f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(5.12229709037114e-08f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(1.48572235717979e-05f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(6.37261928875436e-04f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(4.89352455891786e-03f));
  p = _mm512_mul_ps(c, p);
  __m512 q = _mm512_fmadd_ps(x2, _mm512_set1_ps(1.19825839466702e-06f), _mm512_set1_ps(1.18534705686654e-04f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(2.26843463243900e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(4.89352518554385e-03f));
  const __mmask16 small = _mm512_cmp_ps_mask(_mm512_abs_ps(x), _mm512_set1_ps(0.0004f), _CMP_LT_OQ);
  return _mm512_mask_blend_ps(small, _mm512_div_ps(p, q), x);
}
#endif

// n floats on 64-byte boundaries: the threads write their own 16-float blocks of each row, and
// no cache line holds floats of both.
class AlignedFloats {
 public:
  explicit AlignedFloats(int64_t n) : data_(static_cast<float*>(std::aligned_alloc(64, ((4 * n + 63) / 64) * 64))) {}
  ~AlignedFloats() { std::free(data_); }
  AlignedFloats(AlignedFloats&& other) noexcept : data_(other.data_) { other.data_ = nullptr; }
  AlignedFloats(const AlignedFloats&) = delete;
  AlignedFloats& operator=(const AlignedFloats&) = delete;
  float* data() { return data_; }

 private:
  float* data_;
};

struct Sizes {
  int64_t t, b, h;  // steps, batch, units
};

// The units of each of `parts` work chunks: [edges[k], edges[k + 1]), on multiples of 16.
std::vector<int64_t> unit_chunks(int64_t units, int64_t parts) {
  const int64_t vectors = units / 16;
  parts = std::max<int64_t>(1, std::min(parts, vectors));
  std::vector<int64_t> edges;
  for (int64_t k = 0; k <= parts; ++k) edges.push_back(16 * (vectors * k / parts));
  return edges;
}

struct LstmForwardArgs {
  const float *p, *bias, *u, *h0, *c0, *mask;  // mask: (T, B) of 0 / 1, or null
  float *hs, *cs, *gates, *tcs;
  float* z;  // (B, 4H): the step's product
};

// Step t of the forward loop for units [u0, u1).
void lstm_forward_chunk(const LstmForwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1) {
  const int64_t H = s.h, G = 4 * s.h;
  const float* h = t == 0 ? a.h0 : a.hs + (t - 1) * s.b * H;
  const float* c = t == 0 ? a.c0 : a.cs + (t - 1) * s.b * H;
  for (int64_t q = 0; q < 4; ++q) block(h, a.u, a.z, 0, s.b, H, G, q * H + u0, q * H + u1);
  for (int64_t r = 0; r < s.b; ++r) {
    const float* pr = a.p + (t * s.b + r) * G;
    const float* zr = a.z + r * G;
    float* gr = a.gates + (t * s.b + r) * G;
    float* tcr = a.tcs + (t * s.b + r) * H;
    float* hr = a.hs + (t * s.b + r) * H;
    float* cr = a.cs + (t * s.b + r) * H;
    const float* hp = h + r * H;
    const float* cp = c + r * H;
    const bool keep = a.mask == nullptr || a.mask[t * s.b + r] != 0.0f;
    int64_t u = u0;
#if defined(__AVX512F__)
    for (; u < u1; u += 16) {
      auto z_of = [&](int64_t q) {
        return _mm512_add_ps(_mm512_add_ps(_mm512_loadu_ps(pr + q * H + u), _mm512_loadu_ps(a.bias + q * H + u)),
                             _mm512_loadu_ps(zr + q * H + u));
      };
      const __m512 i = sigmoid16(z_of(0)), f = sigmoid16(z_of(1)), g = tanh16(z_of(2)), o = sigmoid16(z_of(3));
      const __m512 c_new = _mm512_fmadd_ps(f, _mm512_loadu_ps(cp + u), _mm512_mul_ps(i, g));
      const __m512 tc = tanh16(c_new);
      _mm512_storeu_ps(gr + u, i);
      _mm512_storeu_ps(gr + H + u, f);
      _mm512_storeu_ps(gr + 2 * H + u, g);
      _mm512_storeu_ps(gr + 3 * H + u, o);
      _mm512_storeu_ps(tcr + u, tc);
      _mm512_storeu_ps(hr + u, keep ? _mm512_mul_ps(o, tc) : _mm512_loadu_ps(hp + u));
      _mm512_storeu_ps(cr + u, keep ? c_new : _mm512_loadu_ps(cp + u));
    }
#endif
    for (; u < u1; ++u) {  // without AVX-512 (where rnn_loops_native.py does not call this kernel)
      const float i = sigmoid((pr[u] + a.bias[u]) + zr[u]);
      const float f = sigmoid((pr[H + u] + a.bias[H + u]) + zr[H + u]);
      const float g = fast_tanh((pr[2 * H + u] + a.bias[2 * H + u]) + zr[2 * H + u]);
      const float o = sigmoid((pr[3 * H + u] + a.bias[3 * H + u]) + zr[3 * H + u]);
      const float c_new = madd(f, cp[u], i * g);
      const float tc = fast_tanh(c_new);
      gr[u] = i;
      gr[H + u] = f;
      gr[2 * H + u] = g;
      gr[3 * H + u] = o;
      tcr[u] = tc;
      hr[u] = keep ? o * tc : hp[u];
      cr[u] = keep ? c_new : cp[u];
    }
  }
}

struct LstmBackwardArgs {
  const float *gates, *tcs, *c_prev, *ut, *dhs, *mask;  // dhs, mask: or null
  float *dz, *dh, *dc;        // dh, dc: (B, H), the carried cotangents, updated in place per step
  float *dh_next, *dc_next;   // (B, H) each
};

// dz[t] of units [u0, u1) for every row (written to dz_t, a (B, 4H) array).
void lstm_gate_gradients(const LstmBackwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1, float* dz_t) {
  const int64_t H = s.h, G = 4 * s.h;
  for (int64_t r = 0; r < s.b; ++r) {
    const float* gr = a.gates + (t * s.b + r) * G;
    const float* tcr = a.tcs + (t * s.b + r) * H;
    const float* cpr = a.c_prev + (t * s.b + r) * H;
    const float* dhsr = a.dhs ? a.dhs + (t * s.b + r) * H : nullptr;
    const float* dhr = a.dh + r * H;
    const float* dcr = a.dc + r * H;
    float* dzr = dz_t + r * G;
    const bool keep = a.mask == nullptr || a.mask[t * s.b + r] != 0.0f;
    for (int64_t u = u0; u < u1; ++u) {
      const float dh = keep ? (dhsr ? dhr[u] + dhsr[u] : dhr[u]) : 0.0f;
      const float i = gr[u], f = gr[H + u], g = gr[2 * H + u], o = gr[3 * H + u], tc = tcr[u];
      const float dc = (keep ? dcr[u] : 0.0f) + (dh * o) * (1.0f - tc * tc);
      dzr[u] = (dc * g) * (i * (1.0f - i));
      dzr[H + u] = (dc * cpr[u]) * (f * (1.0f - f));
      dzr[2 * H + u] = (dc * i) * (1.0f - g * g);
      dzr[3 * H + u] = (dh * tc) * (o * (1.0f - o));
    }
  }
}

// Step t's cotangents of the states before it, units [u0, u1), once lstm_gate_gradients has written
// every unit's dz[t] (dz_t): dh_next = dz_t @ U^T, dc_next = dc' f (plus dh, dc where masked).
void lstm_state_gradients(const LstmBackwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1, const float* dz_t) {
  const int64_t H = s.h, G = 4 * s.h;
  block(dz_t, a.ut, a.dh_next, 0, s.b, G, H, u0, u1);
  for (int64_t r = 0; r < s.b; ++r) {
    const float* gr = a.gates + (t * s.b + r) * G;
    const float* tcr = a.tcs + (t * s.b + r) * H;
    const float* dhsr = a.dhs ? a.dhs + (t * s.b + r) * H : nullptr;
    const float* dhr = a.dh + r * H;
    const float* dcr = a.dc + r * H;
    float* dhn = a.dh_next + r * H;
    float* dcn = a.dc_next + r * H;
    const bool keep = a.mask == nullptr || a.mask[t * s.b + r] != 0.0f;
    for (int64_t u = u0; u < u1; ++u) {
      const float dh = dhsr ? dhr[u] + dhsr[u] : dhr[u];
      if (keep) {
        const float o = gr[3 * H + u], tc = tcr[u];
        dcn[u] = (dcr[u] + (dh * o) * (1.0f - tc * tc)) * gr[H + u];
      } else {
        dhn[u] = dhn[u] + dh;
        dcn[u] = dcr[u];
      }
    }
  }
}

// -- GRU ----------------------------------------------------------------------------------------------
struct GruForwardArgs {
  const float *p, *b_in, *u, *b_rec, *h0, *mask;  // mask: (T, B) of 0 / 1, or null
  float *hs, *gates, *rhs;
  float* q;  // (B, 3H): the step's product
};

// Step t of the GRU's forward loop for units [u0, u1).
void gru_forward_chunk(const GruForwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1) {
  const int64_t H = s.h, G = 3 * s.h;
  const float* h = t == 0 ? a.h0 : a.hs + (t - 1) * s.b * H;
  for (int64_t k = 0; k < 3; ++k) block(h, a.u, a.q, 0, s.b, H, G, k * H + u0, k * H + u1);
  for (int64_t r = 0; r < s.b; ++r) {
    const float* pr = a.p + (t * s.b + r) * G;
    const float* qr = a.q + r * G;
    float* gr = a.gates + (t * s.b + r) * G;
    float* rhr = a.rhs + (t * s.b + r) * H;
    float* hr = a.hs + (t * s.b + r) * H;
    const float* hp = h + r * H;
    const bool keep = a.mask == nullptr || a.mask[t * s.b + r] != 0.0f;
    int64_t u = u0;
#if defined(__AVX512F__)
    for (; u < u1; u += 16) {
      auto x_of = [&](int64_t k) {
        return _mm512_add_ps(_mm512_loadu_ps(pr + k * H + u), _mm512_loadu_ps(a.b_in + k * H + u));
      };
      auto q_of = [&](int64_t k) {
        return _mm512_add_ps(_mm512_loadu_ps(qr + k * H + u), _mm512_loadu_ps(a.b_rec + k * H + u));
      };
      const __m512 z = sigmoid16(_mm512_add_ps(x_of(0), q_of(0)));
      const __m512 rg = sigmoid16(_mm512_add_ps(x_of(1), q_of(1)));
      const __m512 qh = q_of(2);
      const __m512 hh = tanh16(_mm512_fmadd_ps(rg, qh, x_of(2)));
      const __m512 h_old = _mm512_loadu_ps(hp + u);
      const __m512 h_new = _mm512_fmadd_ps(z, h_old, _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), z), hh));
      _mm512_storeu_ps(gr + u, z);
      _mm512_storeu_ps(gr + H + u, rg);
      _mm512_storeu_ps(gr + 2 * H + u, hh);
      _mm512_storeu_ps(rhr + u, qh);
      _mm512_storeu_ps(hr + u, keep ? h_new : h_old);
    }
#endif
    for (; u < u1; ++u) {  // without AVX-512 (where rnn_loops_native.py does not call this kernel)
      const float z = sigmoid((pr[u] + a.b_in[u]) + (qr[u] + a.b_rec[u]));
      const float rg = sigmoid((pr[H + u] + a.b_in[H + u]) + (qr[H + u] + a.b_rec[H + u]));
      const float qh = qr[2 * H + u] + a.b_rec[2 * H + u];
      const float hh = fast_tanh(madd(rg, qh, pr[2 * H + u] + a.b_in[2 * H + u]));
      gr[u] = z;
      gr[H + u] = rg;
      gr[2 * H + u] = hh;
      rhr[u] = qh;
      hr[u] = keep ? madd(z, hp[u], (1.0f - z) * hh) : hp[u];
    }
  }
}

struct GruBackwardArgs {
  const float *gates, *rhs, *h_prev, *ut, *dhs, *mask;  // dhs, mask: or null
  float *dp, *dq, *dh, *dh_next;  // dh, dh_next: (B, H), this step's carried cotangent and the next
};

// dp[t], dq[t] of units [u0, u1) for every row.
void gru_gate_gradients(const GruBackwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1) {
  const int64_t H = s.h, G = 3 * s.h;
  for (int64_t r = 0; r < s.b; ++r) {
    const int64_t row = t * s.b + r;
    const float* gr = a.gates + row * G;
    const float* rhr = a.rhs + row * H;
    const float* hpr = a.h_prev + row * H;
    const float* dhsr = a.dhs ? a.dhs + row * H : nullptr;
    const float* dhr = a.dh + r * H;
    float* dpr = a.dp + row * G;
    float* dqr = a.dq + row * G;
    const bool keep = a.mask == nullptr || a.mask[row] != 0.0f;
    for (int64_t u = u0; u < u1; ++u) {
      const float dh = keep ? (dhsr ? dhr[u] + dhsr[u] : dhr[u]) : 0.0f;
      const float z = gr[u], rg = gr[H + u], hh = gr[2 * H + u];
      const float dz = (dh * (hpr[u] - hh)) * (z * (1.0f - z));
      const float dhh = (dh * (1.0f - z)) * (1.0f - hh * hh);
      const float dr = (dhh * rhr[u]) * (rg * (1.0f - rg));
      dpr[u] = dqr[u] = dz;
      dpr[H + u] = dqr[H + u] = dr;
      dpr[2 * H + u] = dhh;
      dqr[2 * H + u] = dhh * rg;
    }
  }
}

// Step t's cotangent of the state before it, units [u0, u1), once gru_gate_gradients has written
// every unit's dq[t]: dh' z + dq[t] @ U^T (dh where masked).
void gru_state_gradients(const GruBackwardArgs& a, const Sizes& s, int64_t t, int64_t u0, int64_t u1) {
  const int64_t H = s.h, G = 3 * s.h;
  block(a.dq + t * s.b * G, a.ut, a.dh_next, 0, s.b, G, H, u0, u1);
  for (int64_t r = 0; r < s.b; ++r) {
    const int64_t row = t * s.b + r;
    const float* gr = a.gates + row * G;
    const float* dhsr = a.dhs ? a.dhs + row * H : nullptr;
    const float* dhr = a.dh + r * H;
    float* dhn = a.dh_next + r * H;
    const bool keep = a.mask == nullptr || a.mask[row] != 0.0f;
    for (int64_t u = u0; u < u1; ++u) {
      const float dh = dhsr ? dhr[u] + dhsr[u] : dhr[u];
      dhn[u] = keep ? dh * gr[u] + dhn[u] : dhn[u] + dh;
    }
  }
}

std::string dims_text(ffi::Span<const int64_t> d) {
  std::string text = "(";
  for (size_t k = 0; k < d.size(); ++k) text += (k ? ", " : "") + std::to_string(d[k]);
  return text + ")";
}

bool dims_are(ffi::Span<const int64_t> d, std::initializer_list<int64_t> want) {
  return d.size() == want.size() && std::equal(want.begin(), want.end(), d.begin());
}

// p (T, B, nH) and u (H, nH) for n gates: the sizes, or an error naming the layer.
ffi::Error sizes_of(const char* layer, int64_t n, ffi::Span<const int64_t> p, ffi::Span<const int64_t> u, Sizes* s) {
  if (p.size() != 3 || u.size() != 2 || u[1] != n * u[0] || p[2] != u[1] || u[0] % 16 != 0 || p[0] < 1) {
    const std::string nh = std::to_string(n) + "H";
    return ffi::Error::InvalidArgument(std::string(layer) + ": expected p (T, B, " + nh + ") and a recurrent kernel (H, " +
                                       nh + "), H % 16 == 0, got p " + dims_text(p) + ", kernel " + dims_text(u));
  }
  *s = Sizes{p[0], p[1], u[0]};
  return ffi::Error::Success();
}

ffi::Error LstmForwardImpl(ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::F32> bias, ffi::Buffer<ffi::F32> u,
                       ffi::Buffer<ffi::F32> h0, ffi::Buffer<ffi::F32> c0, ffi::Buffer<ffi::F32> mask,
                       ffi::ResultBuffer<ffi::F32> hs, ffi::ResultBuffer<ffi::F32> cs,
                       ffi::ResultBuffer<ffi::F32> gates, ffi::ResultBuffer<ffi::F32> tcs, int64_t threads) {
  Sizes s;
  ffi::Error error = sizes_of("lstm", 4, p.dimensions(), u.dimensions(), &s);
  if (error.failure()) return error;
  const bool masked = mask.element_count() != 0;
  if (!dims_are(bias.dimensions(), {4 * s.h}) || !dims_are(h0.dimensions(), {s.b, s.h}) ||
      !dims_are(c0.dimensions(), {s.b, s.h}) || (masked && !dims_are(mask.dimensions(), {s.t, s.b})))
    return ffi::Error::InvalidArgument("lstm: expected a bias (4H), states (B, H) and a mask (T, B) or (0,) for p " +
                                       dims_text(p.dimensions()));
  AlignedFloats z(s.b * 4 * s.h);
  const LstmForwardArgs a{p.typed_data(), bias.typed_data(), u.typed_data(), h0.typed_data(), c0.typed_data(),
                      masked ? mask.typed_data() : nullptr, hs->typed_data(), cs->typed_data(), gates->typed_data(),
                      tcs->typed_data(), z.data()};
  const std::vector<int64_t> edges = unit_chunks(s.h, threads);
  const int64_t chunks = static_cast<int64_t>(edges.size()) - 1;
  for (int64_t t = 0; t < s.t; ++t) {
    auto work = [&](int64_t k) { lstm_forward_chunk(a, s, t, edges[k], edges[k + 1]); };
    ThreadPair::instance().run(chunks, work);
  }
  return ffi::Error::Success();
}

ffi::Error LstmBackwardImpl(ffi::Buffer<ffi::F32> gates, ffi::Buffer<ffi::F32> tcs, ffi::Buffer<ffi::F32> c_prev,
                        ffi::Buffer<ffi::F32> ut, ffi::Buffer<ffi::F32> dhs, ffi::Buffer<ffi::F32> dh_final,
                        ffi::Buffer<ffi::F32> dc_final, ffi::Buffer<ffi::F32> mask, ffi::ResultBuffer<ffi::F32> dz,
                        ffi::ResultBuffer<ffi::F32> dh0, ffi::ResultBuffer<ffi::F32> dc0, int64_t threads) {
  const auto gd = gates.dimensions(), ud = ut.dimensions();
  if (gd.size() != 3 || ud.size() != 2 || ud[0] != 4 * ud[1] || gd[2] != ud[0] || ud[1] % 16 != 0)
    return ffi::Error::InvalidArgument("lstm gradient: expected gates (T, B, 4H) and U^T (4H, H), H % 16 == 0, got " +
                                       dims_text(gd) + ", " + dims_text(ud));
  const Sizes s{gd[0], gd[1], ud[1]};
  const bool masked = mask.element_count() != 0, with_dhs = dhs.element_count() != 0;
  if (!dims_are(tcs.dimensions(), {s.t, s.b, s.h}) || !dims_are(c_prev.dimensions(), {s.t, s.b, s.h}) ||
      (with_dhs && !dims_are(dhs.dimensions(), {s.t, s.b, s.h})) || !dims_are(dh_final.dimensions(), {s.b, s.h}) ||
      !dims_are(dc_final.dimensions(), {s.b, s.h}) || (masked && !dims_are(mask.dimensions(), {s.t, s.b})))
    return ffi::Error::InvalidArgument("lstm gradient: the saved values, cotangents and mask do not match gates " +
                                       dims_text(gd));
  const int64_t n = s.b * s.h;
  std::vector<float> carry(4 * n);  // dh, dc and the next step's
  std::copy(dh_final.typed_data(), dh_final.typed_data() + n, carry.begin());
  std::copy(dc_final.typed_data(), dc_final.typed_data() + n, carry.begin() + n);
  const std::vector<int64_t> edges = unit_chunks(s.h, threads);
  const int64_t chunks = static_cast<int64_t>(edges.size()) - 1;
  float *dh = carry.data(), *dc = dh + n, *dh_next = dc + n, *dc_next = dh_next + n;
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const LstmBackwardArgs a{gates.typed_data(), tcs.typed_data(), c_prev.typed_data(), ut.typed_data(),
                         with_dhs ? dhs.typed_data() : nullptr, masked ? mask.typed_data() : nullptr,
                         dz->typed_data(), dh, dc, dh_next, dc_next};
    float* dz_t = a.dz + t * s.b * 4 * s.h;
    auto gate_work = [&](int64_t k) { lstm_gate_gradients(a, s, t, edges[k], edges[k + 1], dz_t); };
    ThreadPair::instance().run(chunks, gate_work);  // every unit's dz before the product reads them
    auto state_work = [&](int64_t k) { lstm_state_gradients(a, s, t, edges[k], edges[k + 1], dz_t); };
    ThreadPair::instance().run(chunks, state_work);
    std::swap(dh, dh_next);
    std::swap(dc, dc_next);
  }
  std::copy(dh, dh + n, dh0->typed_data());
  std::copy(dc, dc + n, dc0->typed_data());
  return ffi::Error::Success();
}

ffi::Error GruForwardImpl(ffi::Buffer<ffi::F32> p, ffi::Buffer<ffi::F32> b_in, ffi::Buffer<ffi::F32> u,
                          ffi::Buffer<ffi::F32> b_rec, ffi::Buffer<ffi::F32> h0, ffi::Buffer<ffi::F32> mask,
                          ffi::ResultBuffer<ffi::F32> hs, ffi::ResultBuffer<ffi::F32> gates,
                          ffi::ResultBuffer<ffi::F32> rhs, int64_t threads) {
  Sizes s;
  ffi::Error error = sizes_of("gru", 3, p.dimensions(), u.dimensions(), &s);
  if (error.failure()) return error;
  const bool masked = mask.element_count() != 0;
  if (!dims_are(b_in.dimensions(), {3 * s.h}) || !dims_are(b_rec.dimensions(), {3 * s.h}) ||
      !dims_are(h0.dimensions(), {s.b, s.h}) || (masked && !dims_are(mask.dimensions(), {s.t, s.b})))
    return ffi::Error::InvalidArgument("gru: expected biases (3H), a state (B, H) and a mask (T, B) or (0,) for p " +
                                       dims_text(p.dimensions()));
  AlignedFloats q(s.b * 3 * s.h);
  const GruForwardArgs a{p.typed_data(), b_in.typed_data(), u.typed_data(), b_rec.typed_data(), h0.typed_data(),
                         masked ? mask.typed_data() : nullptr, hs->typed_data(), gates->typed_data(),
                         rhs->typed_data(), q.data()};
  const std::vector<int64_t> edges = unit_chunks(s.h, threads);
  const int64_t chunks = static_cast<int64_t>(edges.size()) - 1;
  for (int64_t t = 0; t < s.t; ++t) {
    auto work = [&](int64_t k) { gru_forward_chunk(a, s, t, edges[k], edges[k + 1]); };
    ThreadPair::instance().run(chunks, work);
  }
  return ffi::Error::Success();
}

ffi::Error GruBackwardImpl(ffi::Buffer<ffi::F32> gates, ffi::Buffer<ffi::F32> rhs, ffi::Buffer<ffi::F32> h_prev,
                           ffi::Buffer<ffi::F32> ut, ffi::Buffer<ffi::F32> dhs, ffi::Buffer<ffi::F32> dh_final,
                           ffi::Buffer<ffi::F32> mask, ffi::ResultBuffer<ffi::F32> dp, ffi::ResultBuffer<ffi::F32> dq,
                           ffi::ResultBuffer<ffi::F32> dh0, int64_t threads) {
  const auto gd = gates.dimensions(), ud = ut.dimensions();
  if (gd.size() != 3 || ud.size() != 2 || ud[0] != 3 * ud[1] || gd[2] != ud[0] || ud[1] % 16 != 0)
    return ffi::Error::InvalidArgument("gru gradient: expected gates (T, B, 3H) and U^T (3H, H), H % 16 == 0, got " +
                                       dims_text(gd) + ", " + dims_text(ud));
  const Sizes s{gd[0], gd[1], ud[1]};
  const bool masked = mask.element_count() != 0, with_dhs = dhs.element_count() != 0;
  if (!dims_are(rhs.dimensions(), {s.t, s.b, s.h}) || !dims_are(h_prev.dimensions(), {s.t, s.b, s.h}) ||
      (with_dhs && !dims_are(dhs.dimensions(), {s.t, s.b, s.h})) || !dims_are(dh_final.dimensions(), {s.b, s.h}) ||
      (masked && !dims_are(mask.dimensions(), {s.t, s.b})))
    return ffi::Error::InvalidArgument("gru gradient: the saved values, cotangents and mask do not match gates " +
                                       dims_text(gd));
  const int64_t n = s.b * s.h;
  std::vector<float> carry(2 * n);  // dh and the next step's
  std::copy(dh_final.typed_data(), dh_final.typed_data() + n, carry.begin());
  const std::vector<int64_t> edges = unit_chunks(s.h, threads);
  const int64_t chunks = static_cast<int64_t>(edges.size()) - 1;
  float *dh = carry.data(), *dh_next = dh + n;
  for (int64_t t = s.t - 1; t >= 0; --t) {
    const GruBackwardArgs a{gates.typed_data(), rhs.typed_data(), h_prev.typed_data(), ut.typed_data(),
                            with_dhs ? dhs.typed_data() : nullptr, masked ? mask.typed_data() : nullptr,
                            dp->typed_data(), dq->typed_data(), dh, dh_next};
    auto gate_work = [&](int64_t k) { gru_gate_gradients(a, s, t, edges[k], edges[k + 1]); };
    ThreadPair::instance().run(chunks, gate_work);  // every unit's dq before the product reads them
    auto state_work = [&](int64_t k) { gru_state_gradients(a, s, t, edges[k], edges[k + 1]); };
    ThreadPair::instance().run(chunks, state_work);
    std::swap(dh, dh_next);
  }
  std::copy(dh, dh + n, dh0->typed_data());
  return ffi::Error::Success();
}

}  // namespace

// p, bias, U, h0, c0, mask -> hs, cs, gates, tcs; the thread count (1, or 2 with the helper).
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasLstmForward, LstmForwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

// gates, tcs, c_prev, U^T, dhs, dh, dc, mask -> dz, dh0, dc0; the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasLstmBackward, LstmBackwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

// p, b_in, U, b_rec, h0, mask -> hs, gates, rhs; the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasGruForward, GruForwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

// gates, rhs, h_prev, U^T, dhs, dh, mask -> dp, dq, dh0; the thread count.
XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasGruBackward, GruBackwardImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));
