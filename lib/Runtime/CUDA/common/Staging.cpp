//===- Staging.cpp - The CUDA backend's device, stream and memory policy --===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Staging.h"

#include "../../Status.h"
#include "CudaCheck.h"

#include <cstring>

namespace msamp::runtime::cuda {

msamp_rt_status DeviceContext::makeCurrent() const {
  MSAMP_CUDA_TRY_CTX(cudaSetDevice(device), "device=%d", device);
  return MSAMP_RT_OK;
}

msamp_rt_status DeviceContext::allocate(size_t bytes, void **ptr) const {
  *ptr = nullptr;
  if (bytes == 0)
    bytes = 1; // a distinct, freeable pointer
  if (memoryPools)
    MSAMP_CUDA_TRY_CTX(cudaMallocAsync(ptr, bytes, stream),
                       "bytes=%zu, device %d", bytes, device);
  else
    MSAMP_CUDA_TRY_CTX(cudaMalloc(ptr, bytes), "bytes=%zu, device %d", bytes,
                       device);
  return MSAMP_RT_OK;
}

void DeviceContext::release(void *ptr) const {
  if (!ptr)
    return;
  // Stream-ordered: the memory returns to the pool after the work already
  // enqueued on `stream` that uses it. A failure here (a poisoned context)
  // has already been reported by the call that poisoned it.
  if (memoryPools)
    (void)cudaFreeAsync(ptr, stream);
  else
    (void)cudaFree(ptr);
}

msamp_rt_status classifyPointer(const DeviceContext &ctx, const void *ptr,
                                MemoryKind &kind) {
  kind = MemoryKind::Host;
  cudaPointerAttributes attr;
  const cudaError_t error = cudaPointerGetAttributes(&attr, ptr);
  if (error == cudaErrorInvalidValue) {
    // Drivers before CUDA 11 reported unregistered host memory this way.
    (void)cudaGetLastError();
    return MSAMP_RT_OK;
  }
  MSAMP_CUDA_TRY_CTX(error, "ptr=%p", ptr);
  switch (attr.type) {
  case cudaMemoryTypeDevice:
    if (attr.device != ctx.device)
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "%s (cuda): pointer %p is memory of device %d, but "
                         "the cuda backend runs on device %d",
                         currentOp(), ptr, attr.device, ctx.device);
    kind = MemoryKind::Device;
    return MSAMP_RT_OK;
  case cudaMemoryTypeManaged:
    kind = MemoryKind::Managed;
    return MSAMP_RT_OK;
  default: // unregistered or pinned host memory: staged
    return MSAMP_RT_OK;
  }
}

Staging::~Staging() {
  for (void *buffer : buffers)
    ctx.release(buffer);
}

msamp_rt_status Staging::resolve(const void *ptr, size_t bytes, bool read,
                                 bool write, void **device) {
  *device = const_cast<void *>(ptr);
  if (!ptr || bytes == 0)
    return MSAMP_RT_OK;
  MemoryKind kind;
  MSAMP_RT_RETURN_IF_ERROR(classifyPointer(ctx, ptr, kind));
  if (kind != MemoryKind::Host)
    return MSAMP_RT_OK;

  char *host = static_cast<char *>(const_cast<void *>(ptr));
  for (Entry &e : entries) {
    if (e.host == host && e.bytes == bytes) {
      // The same buffer again (in-place update): share the device copy. If
      // it was first seen as an output only, upload it now; every upload
      // is enqueued before the call's first kernel.
      if (read && !e.uploaded) {
        MSAMP_CUDA_TRY_CTX(cudaMemcpyAsync(e.device, host, bytes,
                                           cudaMemcpyHostToDevice, ctx.stream),
                           "dst=%p, src=%p, bytes=%zu",
                           static_cast<void *>(e.device),
                           static_cast<void *>(host), bytes);
        e.uploaded = true;
      }
      e.copyBack |= write;
      *device = e.device;
      return MSAMP_RT_OK;
    }
    if (host < e.host + e.bytes && e.host < host + bytes)
      return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                         "%s (cuda): host buffers [%p, +%zu) and [%p, +%zu) "
                         "overlap without being the same buffer",
                         currentOp(), static_cast<void *>(host), bytes,
                         static_cast<void *>(e.host), e.bytes);
  }

  void *buffer = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(ctx.allocate(bytes, &buffer));
  buffers.push_back(buffer);
  if (read)
    MSAMP_CUDA_TRY_CTX(cudaMemcpyAsync(buffer, host, bytes,
                                       cudaMemcpyHostToDevice, ctx.stream),
                       "dst=%p, src=%p, bytes=%zu", buffer,
                       static_cast<void *>(host), bytes);
  entries.push_back(
      Entry{host, bytes, static_cast<char *>(buffer), read, write});
  *device = buffer;
  return MSAMP_RT_OK;
}

msamp_rt_status Staging::input(const void *ptr, size_t bytes,
                               const void **device) {
  void *d = nullptr;
  const msamp_rt_status s = resolve(ptr, bytes, true, false, &d);
  *device = d;
  return s;
}

msamp_rt_status Staging::output(void *ptr, size_t bytes, void **device) {
  return resolve(ptr, bytes, false, true, device);
}

msamp_rt_status Staging::scratch(size_t bytes, void **device) {
  *device = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(ctx.allocate(bytes, device));
  buffers.push_back(*device);
  return MSAMP_RT_OK;
}

msamp_rt_status Staging::amaxAccumulator(unsigned **device) {
  void *buffer = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(scratch(sizeof(unsigned), &buffer));
  MSAMP_CUDA_TRY(cudaMemsetAsync(buffer, 0, sizeof(unsigned), ctx.stream));
  *device = static_cast<unsigned *>(buffer);
  return MSAMP_RT_OK;
}

msamp_rt_status Staging::copyToHost(void *dst, const void *src, size_t bytes) {
  MSAMP_CUDA_TRY_CTX(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx.stream),
      "dst=%p, src=%p, bytes=%zu", dst, src, bytes);
  hostCopies = true;
  return MSAMP_RT_OK;
}

msamp_rt_status Staging::finish() {
  for (const Entry &e : entries)
    if (e.copyBack)
      MSAMP_CUDA_TRY_CTX(cudaMemcpyAsync(e.host, e.device, e.bytes,
                                         cudaMemcpyDeviceToHost, ctx.stream),
                         "dst=%p, src=%p, bytes=%zu",
                         static_cast<void *>(e.host),
                         static_cast<void *>(e.device), e.bytes);
  if (entries.empty() && !hostCopies) {
    // Device and managed memory only: nothing for the host to wait for
    // (Staging.h). A launch error that a launcher did not return is
    // reported here; a fault while a kernel runs, by the next
    // synchronization.
    MSAMP_CUDA_TRY(cudaGetLastError());
    return MSAMP_RT_OK;
  }
  // Host bytes are read (outputs) or may be reused (inputs) once the call
  // returns; also where an asynchronous kernel fault surfaces.
  MSAMP_CUDA_TRY(cudaStreamSynchronize(ctx.stream));
  entries.clear();
  hostCopies = false;
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime::cuda
