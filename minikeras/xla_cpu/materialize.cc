// An identity that XLA:CPU cannot fuse into its consumers: the operand is computed into a buffer
// of its own first. The output aliases the operand (minikeras/xla_cpu/materialize.py asks XLA for
// that), so the call itself copies nothing unless XLA gave it two buffers after all.
//
// Why: XLA:CPU removes optimization barriers before it fuses, and it fuses a cheap-looking
// producer into a consumer that reads each of its elements several times, computing it again
// for every read (a max-pool gradient reads each window's cotangent once per window element).
#include <cstring>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

ffi::Error MaterializeImpl(ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  if (x.untyped_data() != y->untyped_data()) std::memcpy(y->untyped_data(), x.untyped_data(), x.size_bytes());
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MinikerasMaterialize, MaterializeImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
