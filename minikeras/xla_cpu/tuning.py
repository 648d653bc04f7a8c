"""Every tuned threshold of minikeras' XLA:CPU speed work, in one table.

Measured with jax/jaxlib 0.10.2 on an AMD Zen 5 machine with 2 vCPUs (AVX-512); the
earlier figures (the conv formulations' first tuning) on Zen 4, also 2 vCPUs. When jax,
XLA or the machine changes, re-measure them and edit this table only:

    python benchmarks/conv.py --methods   # conv thresholds: every formulation per shape
    python benchmarks/pool_dropout.py     # pooling and dropout (no thresholds: checks they still win)
    python benchmarks/train_step.py                       # HOST_MEMORY_RETAIN_BYTES (speed; its
                                                          # peak RSS: examples/mnist_cnn.py)
    python benchmarks/linear_regression.py                # SCAN_UNROLL, SCAN_TINY_STEP

The code reads these as ``tuning.NAME`` at the time it decides, so a test or a benchmark
can change one (``monkeypatch.setattr(tuning, "CONV_SPLIT_BYTES", ...)``). Pooling and
dropout pick their formulation by structure (windows that tile the input; a threefry key on
the CPU backend), not by a measured threshold, so they have no row here.
"""

# -- xla_cpu.conv: which formulation ``formulation()`` picks ------------------------------------
# Up to this many input channels a convolution is a handful of multiply-adds per output, which
# XLA fuses into one elementwise loop 2-5x faster than any convolution call ('taps'); the input
# gradient of such a layer is a small matmul plus a fused scatter-add ('col2im'), its filter
# gradient an im2col GEMM per batch chunk ('chunked').
CONV_FEW_CHANNELS = 4
# ... for filters of up to this many taps: 5x5 where the convolution would run on Eigen (inside
# minikeras' programs), 3x3 where it would run on YNNPACK (plain jax.jit, eager ops).
CONV_MAX_TAPS_EIGEN = 25
CONV_MAX_TAPS_YNNPACK = 9
# On YNNPACK, from this many input channels and FLOPs on, explicit zero padding ('prepadded',
# run on both cores) beats the convolution's own padding (one core) in wall time; it costs
# 10-30% more CPU time, so only big layers get it.
CONV_PREPAD_CHANNELS = 16
CONV_PREPAD_FLOPS = 1e9
# The 'chunked' filter gradient builds its im2col patches per batch chunk of about this many
# bytes, so that they stay in cache and the program's temporaries stay small.
CONV_CHUNK_BYTES = 3 << 20
# The 'split' filter gradient on Eigen sums the plain filter gradient over batch chunks of
# about this many bytes of x and dy (about half a core's L2): 1.3-1.7x faster than over the
# whole batch on the MNIST and CIFAR layers with >= 16x16 outputs.
CONV_SPLIT_BYTES = 2 << 20

# -- xla_cpu.depthwise ---------------------------------------------------------------------------
# Depthwise convolutions and both their gradients as sums of shifted slices ('taps'), fused by
# XLA into elementwise loops and reductions, rather than XLA's grouped convolution: faster on every
# one of MobileNetV2's ten depthwise shapes at 224x224 (Eigen, as in minikeras' programs; batch 8
# forward, batch 4 forward + both gradients; jax 0.10.2, a 2-vCPU Zen 4 (AVX-512) loaded by
# other work, 2026-11-28): forward 16-60x, the three together 21-128x, the input gradient
# 13-160x, the filter gradient 3.9x (112x112x32) to 153x (7x7x960); on YNNPACK (``--eager``:
# eager ops, plain jax.jit) forward 4.5-18x, all three 6.3-93x. No shape kept the grouped
# convolution, so there is no threshold. False: the grouped convolution (and jax's transposes of
# it) everywhere.
#     python benchmarks/depthwise_conv.py --parts
DEPTHWISE_TAPS = True
# The filter gradient's fused reduction sums groups of up to this many consecutive rows (batch *
# output rows; the largest divisor of their number), then the groups in a second, small sum: XLA's
# reduction loop over all rows at once (the leading axis) was 3-5x slower on MobileNetV2's largest
# layers (112x112x32, 112x112x96 stride 2, 56x56x144; batch 16, the same Zen 4, loaded); groups
# of 8 to 28 rows measured alike within the noise.
#     python benchmarks/depthwise_conv.py --parts
DEPTHWISE_FILTER_ROW_GROUP = 16
# On inputs at most this wide the filter gradient's fused reduction sums each group's columns as
# well as its rows (then a sum over the groups): MobileNetV2's 14-wide and 7-wide layers (batch 16)
# 1.2-1.9x (14x14x384 1.9x, 14x14x576 1.8x, its stride 2 1.2x, 7x7x960 1.9x); the 28-wide at
# stride 2 (a 14-wide output) 0.87x, so the input's width decides. All ten depthwise shapes weighted
# by their layer count: 1.23x (interleaved in one process, the same Zen 4, loaded).
#     python benchmarks/depthwise_revisions.py <the revision before>
DEPTHWISE_FILTER_SUM_COLUMNS_WIDTH = 14

# -- native kernels (conv_native, matmul_native; built on first use by native_build) ---------------
# Where they apply and could be built, convolutions and Dense weight gradients run on minikeras'
# own kernels: the MNIST CNN's 32 -> 64 layer 1.16x (forward) and 1.4-1.6x (gradients) Eigen's
# speed, CIFAR-style layers 1.1-3.7x (benchmarks/conv.py). False: XLA's formulations only.
NATIVE_KERNELS = True
# BatchNormalization's training statistics and its gradient's two sums (batch_moments_native):
# read once, in parts of this many floats (64 KiB: one 32x32 image at 16 channels) whose two
# passes run from cache; with threads from this many floats on. False: XLA's passes. ResNet-20's
# tape step 1.08-1.10x CPU time at batch 32, 1.07x at 128, 1.05x at 256 (two runs, loaded
# machine): `python benchmarks/tuning_ab.py --switch BATCH_MOMENTS_NATIVE --model resnet`.
BATCH_MOMENTS_NATIVE = True
BATCH_MOMENTS_PART_FLOATS = 16384
BATCH_MOMENTS_THREAD_FLOATS = 1 << 18
# Native forward passes (vectorized over output channels: a multiple of 16) only for output rows
# at least this wide; on narrower rows the register tiles are too small (8x8 outputs, 128 ->
# 128 channels: 380-386 GFLOP/s native, 439-442 Eigen; 10 wide, 64 -> 64: 500 against 376;
# 11 wide, 32 -> 64, the simple convnet's second layer: 412-427 against 389-391).
CONV_NATIVE_FORWARD_MIN_WIDTH = 10
# Narrower output rows, from this width on, take the native forward pass where the layer has at
# most this many output channels: ResNet-20's 8x8 stage (3x3, 64 -> 64), forward alone, native
# against XLA's convolution in one process, interleaved (loaded 2-vCPU Zen 4, jax 0.10.2): CPU time
# 1.20 / 1.09 / 1.08x at batch 32 / 128 / 256, 9x9 1.21-1.31x; but 8x8 64 -> 128 0.92x, and 128 ->
# 128 lost above. The whole ResNet-20 tape step: CPU time 1.020x (batch 32), 1.022x (128), 0.998x
# (256). 7 wide stays on XLA (ResNet50's last stage).
CONV_NATIVE_NARROW_FORWARD_MIN_WIDTH = 8
CONV_NATIVE_NARROW_FORWARD_MAX_CHANNELS = 64
# Native convolutions share their work with XLA's other thread only from this many FLOPs on.
CONV_NATIVE_THREAD_FLOPS = 2e7
# A strided forward pass (wide rows, as above) on the native kernel, its windows stepping over the
# padded input in the kernel's loads; the gradients stay stride 1 (strided ones run as phases).
# Alone, XLA's time / native, 7-9 alternating rounds, two runs, on an AVX-512 CPU: ResNet50's 7x7
# stride-2 stem on 3 channels 1.33-1.44x, 3x3 stride 2 at 56 -> 28 wide 1.25x, 28 -> 14 1.10-1.13x,
# ResNet-20's 32 -> 16 wide 1.08-1.19x; 8 and 7 wide lost (0.83-0.96x), hence wide rows only for
# strides. ResNet50 predict, batch 32: 1.026x wall. False: XLA's strided convolution.
#     python benchmarks/strided_forward.py; ResNet50: a predict A/B of the switch (benchmarks/LOG.md)
CONV_NATIVE_STRIDED_FORWARD = True
# 3x3 stride-1 float32 convolutions as Winograd's F(2x2, 3x3) (xla_cpu.winograd: 2.25x fewer
# multiply-adds): the forward pass and the input gradient on the native kernel
# (winograd_native.cc, channels in multiples of 16 up to WINOGRAD_NATIVE_MAX_CHANNELS) from
# CONV_WINOGRAD_NATIVE_MIN_CHANNELS input and output channels, elsewhere in jax ops from
# CONV_WINOGRAD_MIN_CHANNELS; the filter gradient in jax ops from CONV_WINOGRAD_MIN_CHANNELS where
# the native gradient kernel does not take the filter (CONV_NATIVE_GRAD_MAX_FILTER_BYTES). Alone,
# inside a program with the BatchNormalization and ReLU around it, the direct formulation's time
# over Winograd's, on an AVX-512 CPU: native forward 1.18x at 32 channels (16 wide, batch 128),
# 1.49-1.73x at 64, 1.68-1.84x at 128, 1.97-2.08x at 256, 0.73-1.15x at 512 (the jax ops: 1.26-2.11x);
# native input gradient 0.86x at 16 channels, 1.23x at 32, 1.41-1.64x at 64, 1.32-1.98x at 128,
# 1.69-2.04x at 256; jax ops at 64 channels 0.63-1.07x; the jax filter gradient 1.18-2.29x where
# the native gradient does not apply, 0.27-1.01x where it does. False: the direct convolutions.
#     python benchmarks/winograd.py [--kind input_grad|filter_grad]
CONV_WINOGRAD = True
CONV_WINOGRAD_MIN_CHANNELS = 128
CONV_WINOGRAD_NATIVE_MIN_CHANNELS = 32
# Winograd's convolution on the native kernel where it applies; False: in jax ops.
WINOGRAD_NATIVE = True
WINOGRAD_NATIVE_MAX_CHANNELS = 256
WINOGRAD_NATIVE_FILTER_GRAD_MAX_CHANNELS = 128
# The native Winograd kernel's blocks: tiles whose transformed input (16 x tiles x C_in floats)
# fits in this many bytes, a share of one core's L2. Alone, 64 / 128 / 256 / 512 KiB: within 1-2%
# of each other at 64-256 channels but 128 x 16 x 16 x 32 (2.29 / 2.27 / 2.58 / 2.65 ms).
WINOGRAD_BLOCK_BYTES = 128 * 1024
# Native gradient kernels only for filters of at most this many bytes (about one core's L2 on
# Zen 4): the input gradient streams the whole filter through the cache once per row of output
# pixels, the filter gradient its accumulators once per block of rows of each image, so a larger
# filter makes them memory-bound. ResNet50's 7x7-pixel stage (224x224 input, batch 16, in
# minikeras' programs, loaded 2-vCPU Zen 4): 3x3 512 -> 512 (9.4 MB) input gradient 9 GFLOP/s
# native against 23-28 on Eigen, filter gradient 10 against 27-37; 1x1 512 -> 2048 (4 MB) 7-9
# against 31-32. Filters up to 1 MiB kept their gain (3x3 128 -> 128 at 28x28: 43 against 30;
# ResNet-20's 3x3 64 -> 64 at 8x8, batch 128: 60 against 44 and 40 against 33).
#     python benchmarks/conv.py --resnet50
CONV_NATIVE_GRAD_MAX_FILTER_BYTES = 1 << 20
# A stride-1 1x1 convolution without padding (ResNet50's bottleneck convolutions) is one matrix
# product: its forward pass runs on XLA's own convolution (Eigen's GEMM) rather than the native
# forward kernel, and its filter gradient ``x^T @ dy`` on ``matmul_native``'s kernel. ResNet50's
# 1x1 layers at 224x224 (56 to 14 pixels wide, 64 to 1024 channels; loaded 2-vCPU Zen 4): forward
# 1.1-1.7x the native kernel's speed, filter gradient 1.1-1.5x the native kernel's and 1.0-3.4x
# Eigen's. False: they take the formulations of other convolutions.
#     python benchmarks/conv.py --resnet50
CONV_POINTWISE_AS_MATMUL = True
# MultiHeadAttention's two products with their operands ordered for XLA:CPU's layouts (the query-key
# product's gradients with the cotangent last, the combination with the values first; the same sums):
# XLA then no longer transposes the query and the key's gradient across their last two axes (it moves
# whole rows of key_dim between [batch, seq, heads, dim] and [batch, heads, seq, dim] instead). The
# keras.io ViT's fit (batch 64; loaded 2-vCPU Zen 4, three runs, 7-9 rounds interleaved in one process):
# CPU time 1.13x, 1.045x, 1.04x, wall 1.05-1.58x; the miniature GPT's (batch 32, attention a small part
# of it) 1.007x; quiet, two runs of 9 rounds: wall 1.062x / 1.056x, CPU 1.045x / 1.021x. False: Keras's
# operand order.
#     python benchmarks/vit_attention_ab.py [--model gpt --batch-size 32]
ATTENTION_OPERAND_ORDER = True
# Two-operand einsums that are batches of matrix products (MultiHeadAttention's probabilities
# times values, and two of its gradient products) on the strided batched kernel
# (``xla_cpu.strided_matmul``): the operands read in place, the products shared among the threads,
# where XLA:CPU copied the operands to [batch, heads, ...] order and ran the batched dot on one
# thread. The ViT's products alone (256 products of 144 x 144 by 144 x 64), wall time XLA/kernel:
# 2.5x (A^T B), 1.9x (A B) on an AVX-512 CPU (benchmarks/LOG.md, eighteenth session). Each sum in
# order of k, as XLA's. False: XLA's dot.
STRIDED_MATMUL_NATIVE = True
# ... from this many FLOPs on (all the products of one call together): below, a call's thread
# hand-off costs more than the second thread saves (not measured finely: the attention products
# of the keras.io examples are 10-1000x above it).
STRIDED_MATMUL_FLOPS = 4e6
# ... on CPUs with AVX-512 only, as MATMUL_NN_NATIVE_NEEDS_AVX512: no CPU without it was at hand.
STRIDED_MATMUL_NEEDS_AVX512 = True
# ``x.T @ g`` (a Dense weight gradient) on the native kernel from this many FLOPs on: it was
# faster at every size timed (0.2 MFLOP: 37 against 12 GFLOP/s; the MNIST CNN's 9216 -> 128
# layer: 424 against 176), but below this a call costs more than it can save. For ``g`` of
# ``matmul_native.MAX_COLUMNS`` columns or more (a vocabulary head, ResNet50's widest 1x1 filter
# gradients) XLA's dot takes the product at any size (benchmarks/LOG.md, sixteenth session).
MATMUL_NATIVE_FLOPS = 1e6
# ``a @ b`` (a recurrent layer's backward step, dz @ U.T, U.T made before its reverse loop) on the
# native kernel from this many FLOPs on, the smallest size timed: loops of 100 such products with
# a tanh, CPU time XLA/native on a Zen 4 (AVX-512; jax 0.10.2; loaded machine, two runs), as
# (batch, units, gates): (32, 32, 4) 1.17-1.51x, (16, 64, 4) 1.10-1.41x, (64, 128, 4) (LSTM(128))
# 1.34-1.37x, (64, 128, 3) (GRU(128)) 1.04-1.09x, (256, 128, 4) 1.15-1.16x, (64, 256, 3) 1.26-1.28x.
# One thread: a step's product is tens of microseconds. The forward step's ``h @ U`` stays on
# XLA's dot (1.02-1.25x native, 0.87-1.04x built for AVX2).  python benchmarks/rnn_products.py --avx2
MATMUL_NN_NATIVE_FLOPS = 2.5e5
# ... on CPUs with AVX-512 only: built without it (-mno-avx512f) and run on the same Zen 4 against
# XLA's AVX-512 dot the kernel ran 0.87x (GRU(128)) to 1.25x (LSTM(128)); no CPU without AVX-512
# was at hand to time XLA's own AVX2 dot against it. False: on every CPU.
MATMUL_NN_NATIVE_NEEDS_AVX512 = True
# A recurrent step's product (forward h @ U and backward dz @ U.T) on two threads, the calling
# one and a helper of its own (``xla_cpu.rnn_step_native``), from this many FLOPs on, where the
# process may use two CPUs: True, False, or "measure": a loop of the shape's products timed on
# one and two threads at first use, two taken where they were this much faster in wall time. On
# a loaded Zen 4 (load 4-10 on its 2 vCPUs) the pair lost (the products alone 0.6-0.9x XLA's wall
# time, the one-thread kernel 1.0-1.4x). Quiet, the tape step two threads against one, two runs:
# LSTM(128) wall 0.89x / 1.01x, GRU(128) 1.09x / 1.09x, Bidirectional(LSTM(128)) 1.12x / 1.12x, at
# 1.2-1.5x the CPU time: below the gain asked for, so "measure" keeps one thread for these.
#     python benchmarks/rnn_products.py --sizes 64x128x4 --pair --both; python benchmarks/rnn_two_threads.py
RNN_STEP_TWO_THREADS = "measure"
RNN_STEP_TWO_THREADS_FLOPS = 2.5e5
RNN_STEP_TWO_THREADS_MIN_GAIN = 1.15
# An LSTM's whole forward and reverse loops on native kernels (``xla_cpu.rnn_loops_native``: a step is
# one task per thread, its units' gate columns of the product and their gate math), Keras's
# default activations, units a multiple of 16. LSTM(128), length 100, batch 64, the tape step,
# off / on in one process (15 rounds of 3 steps, four runs, an AVX-512 CPU): CPU time 1.10-1.15x
# (medians of the rounds' ratios), wall 1.03-1.08x; the loops alone: forward 8.6 ms against
# XLA's ~10-11, reverse ~10 against ~10, the weight gradients without a concatenated copy 6.4
# against 9.1. Inference (no values saved): even.
#     python benchmarks/tuning_ab.py --switch LSTM_NATIVE --model lstm
LSTM_NATIVE = True
# A GRU's (reset_after=True, Keras's default) likewise. GRU(128), the same step, two runs: CPU
# time 1.07x / 1.10x, wall 1.07x / 1.08x.
#     python benchmarks/tuning_ab.py --switch GRU_NATIVE --model gru
GRU_NATIVE = True
# ... on CPUs with AVX-512 only: the forward's gate math is AVX-512 code (elsewhere a scalar loop,
# slower than XLA's vectorized fusions); no CPU without it was at hand to measure.
RNN_LOOPS_NATIVE_NEEDS_AVX512 = True
# -- bfloat16 products (xla_cpu.low_precision) -------------------------------------------------
# A bfloat16 matmul runs as XLA's bfloat16 dot (float32 accumulation) on CPUs with AVX512_BF16 or
# AMX: on a Zen 4 (2 vCPUs, avx512_bf16), 2048^3 368 GFLOP/s against float32's 182, the Dense
# 9216 -> 128 product 379 against 184 (2.0x). False: widened to float32 everywhere.
#     python benchmarks/bf16_xla.py
BF16_DOT_ON_XLA = True
# XLA's bfloat16 convolutions gain nothing there (the MNIST CNN's 32 -> 64 layer, b128: forward
# 0.98x, input gradient 0.96x, filter gradient 1.04x float32's, same command), and minikeras's
# float32 native kernels are faster than both: a bfloat16 convolution is widened to float32.
BF16_CONV_ON_XLA = False
# Nor does an im2col formulation on XLA's bfloat16 dot (the same layer at b64: 0.5x the float32
# native kernels forward, 0.3-0.6x for the gradients). minikeras's own bfloat16 kernels
# (conv_bf16_native: vdpbf16ps, float32 sums) run that layer 2.0x (forward), 2.6x (input
# gradient) and 1.9x (filter gradient) the float32 native kernels, b64, on a loaded 2-vCPU Zen 4
# (avx512_bf16). True: a bfloat16 convolution they take runs on them where the CPU has
# AVX512_BF16; others are widened to float32. False: always widened.
#     python benchmarks/bf16_xla.py
BF16_CONV_NATIVE = True
# ... on the CPUs of these vendors only: on an Intel Xeon with AVX512_BF16 and AMX (16 cores,
# given 2 with taskset, quiet, jax 0.11.2) the kernels ran 0.56x (forward), 0.58x (input
# gradient) and 0.62x (filter gradient) the float32 native kernels, and the classic CNN's mixed
# step 0.64-0.73x the float32 step with them, 0.95-0.98x with convolutions widened: there they
# stay widened (AMX tiles would be the fast path there; not written).
BF16_CONV_NATIVE_VENDORS = ("AuthenticAMD",)
# A bfloat16 Dense layer's input gradient g @ W.T on matmul_bf16_native.matmul_nt (W read as it
# lies) instead of XLA's bfloat16 dot on a row-major copy of W.T: measured in benchmarks/LOG.md
# (sixteenth session, bfloat16 CNN step: `python benchmarks/tuning_ab.py --switch
# BF16_MATMUL_NT_NATIVE --policy mixed_bfloat16`, the classic CNN step 1.03x CPU time, loaded).
BF16_MATMUL_NT_NATIVE = True
# A bfloat16 Dense weight gradient x.T @ g written by its kernel widened to float32 (the float32
# weight's gradient is that, widened right after; XLA:CPU made the widening a pass of its own),
# the bfloat16 array converted from it where something reads it. Measured as the switch above.
BF16_WEIGHT_GRADIENT_WIDENED = True
# A bfloat16 Conv2D(relu)'s bias gradient summed by the filter-gradient kernel while it reads the
# masked cotangent (conv_bf16_native.filter_grad_and_bias) instead of a YNNPACK reduction reading
# it again. Measured as the switches above.
BF16_CONV_BIAS_SUMS_IN_KERNEL = True
# The bfloat16 filter gradient broadcasts one input channel per step: with fewer than this many
# (an MNIST CNN's first layer, 1 channel) the widened float32 kernel, vectorized over its taps,
# was faster (b128: 1.1 ms with the casts against 2.1 ms; same command, loaded machine).
BF16_CONV_NATIVE_FILTER_MIN_CHANNELS = 8
# The native Adam step (adam_native) shares a variable's update with XLA's other thread from this
# many elements on (a memory-bound pass over four arrays).
ADAM_NATIVE_THREAD_ELEMENTS = 1 << 18
# The native dropout mask (random_native: 20 threefry rounds per element, compute-bound) shares
# a mask with XLA's other thread from this many elements on.
DROPOUT_NATIVE_THREAD_ELEMENTS = 1 << 15
# A classifier's head on native kernels (head_native, one thread: softmax, sparse categorical
# cross-entropy, their gradients) for arrays of fewer than this many elements in rows of fewer
# than HEAD_NATIVE_MAX_CLASSES: there they give XLA's bits (beyond, XLA sums or splits the work
# otherwise) and the work is microseconds, where XLA's ten loop kernels cost ~0.4 s to compile;
# bigger heads are worth XLA's vectorized loops.
HEAD_NATIVE_MAX_ELEMENTS = 4096
HEAD_NATIVE_MAX_CLASSES = 32
# Sparse categorical cross-entropy of logits and its gradient on native kernels
# (logits_crossentropy_native) from this many classes on. Both together, 1024 rows, on an AVX-512
# CPU the kernels were faster at every width measured (64 to 4096 classes, and 20,000); below 256
# the jax formulas stay all the same, so that a classifier's few classes keep XLA's bits. The
# keras.io miniature GPT's fit 1.03x wall (figures: benchmarks/LOG.md, nineteenth session):
#     python benchmarks/logits_crossentropy.py
#     python benchmarks/tuning_ab.py --switch LOGITS_CROSSENTROPY_NATIVE --model gpt
LOGITS_CROSSENTROPY_NATIVE = True
LOGITS_CROSSENTROPY_NATIVE_MIN_CLASSES = 256
# ... on CPUs with AVX-512 only: the kernels' vector code is written for it (elsewhere they run
# scalar, several times slower than XLA's loops).
LOGITS_CROSSENTROPY_NATIVE_NEEDS_AVX512 = True

# -- xla_cpu.host_memory ----------------------------------------------------------------------------
# The default free heap glibc keeps for reuse (``mk.config.reuse_freed_host_memory``; None: all
# of it). MNIST main job, one epoch on 12,800 images: peak RSS 0.87 GB without the setting, 0.97
# GB with 1 GiB (one malloc arena); with per-thread arenas it was 1.44 GB, and 128 MiB kept only
# about half of the step speed-up. With 1 GiB, the ResNet-20 step at batch 256 still page-faulted
# through ~0.8 GB on two steps of three, and ResNet50's train step at batch 16 through ~2.6 GB on
# every step (mallopt takes no finite threshold above 2 GiB - 1); keeping all of it stops both
# after the first steps, at the same peak RSS (benchmarks/LOG.md).
HOST_MEMORY_RETAIN_BYTES = None

# -- trainers.multi_step: the ``steps_per_execution`` scan ------------------------------------------
# XLA:CPU's while loop costs about a microsecond per trip, as much as a whole tiny step (a linear
# regression on 1000 points): steps that read and write at most SCAN_TINY_STEP elements (summed
# over their operations) are unrolled SCAN_UNROLL times. A bigger step would gain nothing and
# take SCAN_UNROLL times longer to compile.
SCAN_UNROLL = 8
SCAN_TINY_STEP = 1 << 17
