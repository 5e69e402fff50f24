//===- CublasLtGemm.cpp - Scaled FP8 and high-precision GEMMs via cuBLASLt ===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// msamp_rt_gemm on the device, after Transformer Engine's
// common/gemm/cublaslt_gemm.cu (docs/Numerics.md 3.2):
//   * compute type CUBLAS_COMPUTE_32F, scale type f32 (no TF32: an f32 GEMM
//     stays an f32 GEMM, like the CPU's sgemm);
//   * FP8 operands (E4M3 x E4M3, E5M2 x E4M3, E4M3 x E5M2) are used directly,
//     with CUBLASLT_MATMUL_DESC_A_SCALE_POINTER / B_SCALE_POINTER set to the
//     operands' *inverse* scales (dequantization multipliers, device
//     pointers), so D = a_scale_inv * b_scale_inv * sum, as on the CPU;
//     alpha = 1 and beta = 0 are host scalars;
//   * CUBLASLT_MATMUL_DESC_FAST_ACCUM comes from flag bit 2 (MS-AMP turns it
//     on for fprop only; the caller decides);
//   * high-precision operands cannot take scale pointers, so their alpha =
//     fl(a_scale_inv * b_scale_inv) is computed on the device and passed in
//     CUBLASLT_POINTER_MODE_DEVICE, never read back to the host;
//   * the layout is canonicalized to TN and padded to multiples of 16 for
//     FP8 (GemmPlan.h: packMatrix kernel), and the output is unpadded,
//     rounded and its amax taken by the epilogue kernel where needed;
//   * the out_amax of flag bit 3 is computed by our own integer-atomic amax
//     (of the f32 result, before rounding, NaN-propagating), because
//     cuBLASLt's AMAX_D_POINTER is supported only for FP8 outputs, which
//     the ABI does not have;
//   * a per-backend cache of matmul plans (descriptor, layouts and the
//     heuristic's algorithm) keyed by shapes, dtypes, transposes, batch and
//     alignment, so the heuristic runs once per shape.
//
// Dimensions that are not multiples of 16 are padded, never rejected. The
// only shape rejected is a batch above INT32_MAX (cuBLASLt's batch count).
//
//===----------------------------------------------------------------------===//

#include "CublasLtGemm.h"

#include "../../DType.h"
#include "../../Status.h"
#include "../Kernels.h"
#include "../common/CudaCheck.h"
#include "GemmPlan.h"

#include <cstdio>
#include <functional>

namespace msamp::runtime::cuda {
namespace {

/// Plans kept per backend before the cache is flushed; a model has a few
/// dozen distinct GEMM shapes, so this bound is only a leak guard.
constexpr size_t kMaxPlans = 512;

cudaDataType_t ltType(int32_t dtype) {
  switch (dtype) {
  case MSAMP_RT_F8E4M3FN:
    return CUDA_R_8F_E4M3;
  case MSAMP_RT_F8E5M2:
    return CUDA_R_8F_E5M2;
  case MSAMP_RT_BF16:
    return CUDA_R_16BF;
  case MSAMP_RT_F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

uint32_t clampAlignment(uint64_t alignment) {
  return static_cast<uint32_t>(alignment < 256 ? alignment : 256);
}

msamp_rt_status makeLayout(const LtMatrix &m, int32_t batch,
                           cublasLtMatrixLayout_t *layout) {
  MSAMP_CUBLAS_TRY_CTX(
      cublasLtMatrixLayoutCreate(layout, ltType(m.dtype), m.rows, m.cols, m.ld),
      "%s %llu x %llu, ld %lld", dtypeName(m.dtype),
      static_cast<unsigned long long>(m.rows),
      static_cast<unsigned long long>(m.cols), static_cast<long long>(m.ld));
  if (batch > 1) {
    MSAMP_CUBLAS_TRY_CTX(
        cublasLtMatrixLayoutSetAttribute(
            *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
        "batch=%d", batch);
    const int64_t stride = m.batchStride;
    MSAMP_CUBLAS_TRY_CTX(cublasLtMatrixLayoutSetAttribute(
                             *layout,
                             CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                             &stride, sizeof(stride)),
                         "stride=%lld", static_cast<long long>(stride));
  }
  return MSAMP_RT_OK;
}

template <typename T>
msamp_rt_status setDescAttribute(cublasLtMatmulDesc_t desc,
                                 cublasLtMatmulDescAttributes_t attribute,
                                 const T &value, const char *what) {
  MSAMP_CUBLAS_TRY_CTX(
      cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)),
      "%s", what);
  return MSAMP_RT_OK;
}

/// "f8E4M3FN [128 x 64, ld 128]^T" for messages.
void describe(const LtMatrix &m, char *buf, size_t size) {
  std::snprintf(buf, size, "%s [%llu x %llu, ld %lld]%s", dtypeName(m.dtype),
                static_cast<unsigned long long>(m.rows),
                static_cast<unsigned long long>(m.cols),
                static_cast<long long>(m.ld), m.transposed ? "^T" : "");
}

/// Runs one operand's PackStep into staging scratch and points `data` at the
/// packed copy (a fresh device allocation: 256-byte aligned).
msamp_rt_status packOperand(const char *name, const PackStep &step,
                            int32_t dtype, int64_t batch, Staging &staging,
                            cudaStream_t stream, const void *&data,
                            uint64_t &alignment) {
  const int64_t size = gemmDTypeSize(dtype);
  void *packed = nullptr;
  MSAMP_RT_RETURN_IF_ERROR(
      staging.scratch(batch * step.dstRows * step.dstCols * size, &packed));
  MSAMP_CUDA_TRY_CTX(launchPackMatrix(data, static_cast<int>(size), batch,
                                      step.srcRows, step.srcCols,
                                      step.transpose, packed, step.dstRows,
                                      step.dstCols, stream),
                     "%s [%lld x %lld] -> [%lld x %lld]%s", name,
                     static_cast<long long>(step.srcRows),
                     static_cast<long long>(step.srcCols),
                     static_cast<long long>(step.dstRows),
                     static_cast<long long>(step.dstCols),
                     step.transpose ? " transposed" : "");
  data = packed;
  alignment = 256;
  return MSAMP_RT_OK;
}

} // namespace

struct CublasLtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    if (d)
      cublasLtMatrixLayoutDestroy(d);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (desc)
      cublasLtMatmulDescDestroy(desc);
  }
};

bool CublasLtGemm::PlanKey::operator==(const PlanKey &o) const {
  return aType == o.aType && bType == o.bType && dType == o.dType &&
         aRows == o.aRows && aCols == o.aCols && bRows == o.bRows &&
         bCols == o.bCols && dRows == o.dRows && dCols == o.dCols &&
         lda == o.lda && ldb == o.ldb && ldd == o.ldd && strideA == o.strideA &&
         strideB == o.strideB && strideD == o.strideD && batch == o.batch &&
         transA == o.transA && transB == o.transB && fp8 == o.fp8 &&
         fastAccum == o.fastAccum && alignA == o.alignA && alignB == o.alignB &&
         alignD == o.alignD;
}

size_t CublasLtGemm::PlanKeyHash::operator()(const PlanKey &k) const {
  size_t h = 0;
  auto mix = [&h](uint64_t v) {
    h ^= std::hash<uint64_t>()(v) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  };
  mix(static_cast<uint64_t>(k.aType) | static_cast<uint64_t>(k.bType) << 8 |
      static_cast<uint64_t>(k.dType) << 16 |
      static_cast<uint64_t>(k.transA) << 24 |
      static_cast<uint64_t>(k.transB) << 25 |
      static_cast<uint64_t>(k.fp8) << 26 |
      static_cast<uint64_t>(k.fastAccum) << 27);
  mix(k.aRows);
  mix(k.aCols);
  mix(k.bRows);
  mix(k.bCols);
  mix(k.dRows);
  mix(k.dCols);
  mix(static_cast<uint64_t>(k.lda));
  mix(static_cast<uint64_t>(k.ldb));
  mix(static_cast<uint64_t>(k.ldd));
  mix(static_cast<uint64_t>(k.strideA));
  mix(static_cast<uint64_t>(k.strideB));
  mix(static_cast<uint64_t>(k.strideD));
  mix(static_cast<uint64_t>(k.batch));
  mix(static_cast<uint64_t>(k.alignA) | static_cast<uint64_t>(k.alignB) << 16 |
      static_cast<uint64_t>(k.alignD) << 32);
  return h;
}

CublasLtGemm::CublasLtGemm() = default;

CublasLtGemm::~CublasLtGemm() {
  plans.clear();
  if (workspace)
    cudaFree(workspace);
  if (handle)
    cublasLtDestroy(handle);
}

msamp_rt_status CublasLtGemm::init(const DeviceContext &context) {
  ctx = &context;
  MSAMP_CUBLAS_TRY_CTX(cublasLtCreate(&handle), "device %d", context.device);
  workspaceSize = (context.ccMajor >= 9 ? 32u : 4u) << 20;
  MSAMP_CUDA_TRY_CTX(cudaMalloc(&workspace, workspaceSize),
                     "bytes=%zu (the cuBLASLt workspace)", workspaceSize);
  return MSAMP_RT_OK;
}

msamp_rt_status CublasLtGemm::getPlan(const PlanKey &key, Plan *&out) {
  out = nullptr;
  if (auto it = plans.find(key); it != plans.end()) {
    out = it->second.get();
    return MSAMP_RT_OK;
  }
  if (plans.size() >= kMaxPlans)
    plans.clear();

  auto plan = std::make_unique<Plan>();
  MSAMP_CUBLAS_TRY_CTX(
      cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
      "compute 32F, scale 32F");
  const cublasOperation_t transA = key.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t transB = key.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  MSAMP_RT_RETURN_IF_ERROR(setDescAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, transA, "TRANSA"));
  MSAMP_RT_RETURN_IF_ERROR(setDescAttribute(
      plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, transB, "TRANSB"));
  if (key.fp8) {
    const int8_t fastAccum = key.fastAccum ? 1 : 0;
    MSAMP_RT_RETURN_IF_ERROR(setDescAttribute(
        plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fastAccum, "FAST_ACCUM"));
    // Placeholders so that the heuristic sees a scaled FP8 problem; run()
    // sets the real inverse-scale pointers before every matmul.
    static float placeholderScale = 1.0f;
    const void *scale = &placeholderScale;
    MSAMP_RT_RETURN_IF_ERROR(
        setDescAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                         scale, "A_SCALE_POINTER"));
    MSAMP_RT_RETURN_IF_ERROR(
        setDescAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                         scale, "B_SCALE_POINTER"));
  } else {
    const int32_t mode = CUBLASLT_POINTER_MODE_DEVICE;
    MSAMP_RT_RETURN_IF_ERROR(setDescAttribute(
        plan->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, mode, "POINTER_MODE"));
  }

  const LtMatrix a{key.aType, key.aRows,   key.aCols,
                   key.lda,   key.strideA, key.transA};
  const LtMatrix b{key.bType, key.bRows,   key.bCols,
                   key.ldb,   key.strideB, key.transB};
  const LtMatrix d{key.dType, key.dRows,   key.dCols,
                   key.ldd,   key.strideD, false};
  MSAMP_RT_RETURN_IF_ERROR(makeLayout(a, key.batch, &plan->a));
  MSAMP_RT_RETURN_IF_ERROR(makeLayout(b, key.batch, &plan->b));
  MSAMP_RT_RETURN_IF_ERROR(makeLayout(d, key.batch, &plan->d));

  cublasLtMatmulPreference_t preference = nullptr;
  MSAMP_CUBLAS_TRY_CTX(cublasLtMatmulPreferenceCreate(&preference), "%s",
                       "preference");
  struct PreferenceGuard {
    cublasLtMatmulPreference_t p;
    ~PreferenceGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  const uint64_t maxWorkspace = workspaceSize;
  MSAMP_CUBLAS_TRY_CTX(cublasLtMatmulPreferenceSetAttribute(
                           preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                           &maxWorkspace, sizeof(maxWorkspace)),
                       "workspace=%llu",
                       static_cast<unsigned long long>(maxWorkspace));
  // The default assumes 256-byte aligned matrices; say what they are, or the
  // heuristic may pick a kernel that faults on a less aligned user buffer.
  const uint32_t alignments[4] = {key.alignA, key.alignB, key.alignD,
                                  key.alignD};
  const cublasLtMatmulPreferenceAttributes_t alignmentAttrs[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i)
    MSAMP_CUBLAS_TRY_CTX(cublasLtMatmulPreferenceSetAttribute(
                             preference, alignmentAttrs[i], &alignments[i],
                             sizeof(alignments[i])),
                         "alignment=%u", alignments[i]);

  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle, plan->desc, plan->a, plan->b, plan->d, plan->d, preference, 1,
      &result, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    char da[96], db[96], dd[96];
    describe(a, da, sizeof(da));
    describe(b, db, sizeof(db));
    describe(d, dd, sizeof(dd));
    return recordError(
        status == CUBLAS_STATUS_SUCCESS || status == CUBLAS_STATUS_NOT_SUPPORTED
            ? MSAMP_RT_ERROR_UNSUPPORTED_DTYPE
            : MSAMP_RT_ERROR_INTERNAL,
        "%s (cuda): cuBLASLt has no algorithm for A %s x B %s -> D %s, batch "
        "%d, fast_accum %d, on sm_%d%d (cublasLtMatmulAlgoGetHeuristic: %s, "
        "%d found)",
        currentOp(), da, db, dd, key.batch, key.fastAccum ? 1 : 0, ctx->ccMajor,
        ctx->ccMinor, cublasStatusName(status), found);
  }
  plan->algo = result.algo;
  out = plan.get();
  plans.emplace(key, std::move(plan));
  return MSAMP_RT_OK;
}

msamp_rt_status CublasLtGemm::run(const GemmParams &p, Staging &staging) {
  const cudaStream_t stream = ctx->stream;
  GemmProblem problem;
  problem.aType = p.aType;
  problem.bType = p.bType;
  problem.outType = p.outType;
  problem.batch = p.batch;
  problem.m = p.m;
  problem.n = p.n;
  problem.k = p.k;
  problem.transA = p.transA;
  problem.transB = p.transB;
  problem.wantAmax = p.outAmax != nullptr;
  problem.alignA = pointerAlignment(p.a);
  problem.alignB = pointerAlignment(p.b);
  problem.alignOut = pointerAlignment(p.out);
  GemmPlan plan;
  const char *reason = nullptr;
  if (!planGemm(problem, plan, reason))
    return recordError(MSAMP_RT_ERROR_INVALID_ARGUMENT,
                       "%s (cuda): cannot run the GEMM %s%s x %s%s -> %s with "
                       "batch=%lld M=%lld N=%lld K=%lld: %s",
                       currentOp(), dtypeName(p.aType), p.transA ? "^T" : "",
                       dtypeName(p.bType), p.transB ? "^T" : "",
                       dtypeName(p.outType), static_cast<long long>(p.batch),
                       static_cast<long long>(p.m), static_cast<long long>(p.n),
                       static_cast<long long>(p.k), reason);

  const int64_t batch = p.batch;
  const void *aData = p.a, *bData = p.b;
  int32_t aType = p.aType, bType = p.bType;
  uint64_t alignA = problem.alignA, alignB = problem.alignB;
  if (plan.widenOperands) {
    // Mixed high-precision types: cuBLASLt wants one A/B type. Widening to
    // f32 is exact, so the GEMM is the CPU's f32 GEMM on the same values.
    void *aWide = nullptr, *bWide = nullptr;
    const int64_t aCount = batch * p.m * p.k, bCount = batch * p.k * p.n;
    MSAMP_RT_RETURN_IF_ERROR(staging.scratch(aCount * 4, &aWide));
    MSAMP_RT_RETURN_IF_ERROR(staging.scratch(bCount * 4, &bWide));
    MSAMP_CUDA_TRY_CTX(launchConvert(p.a, p.aType, aWide, MSAMP_RT_F32, nullptr,
                                     aCount, stream),
                       "a: %s, %lld elements", dtypeName(p.aType),
                       static_cast<long long>(aCount));
    MSAMP_CUDA_TRY_CTX(launchConvert(p.b, p.bType, bWide, MSAMP_RT_F32, nullptr,
                                     bCount, stream),
                       "b: %s, %lld elements", dtypeName(p.bType),
                       static_cast<long long>(bCount));
    aData = aWide;
    bData = bWide;
    aType = bType = MSAMP_RT_F32;
    alignA = alignB = 256;
  }
  if (plan.packA.needed)
    MSAMP_RT_RETURN_IF_ERROR(packOperand("a", plan.packA, aType, batch, staging,
                                         stream, aData, alignA));
  if (plan.packB.needed)
    MSAMP_RT_RETURN_IF_ERROR(packOperand("b", plan.packB, bType, batch, staging,
                                         stream, bData, alignB));

  void *dData = p.out;
  uint64_t alignD = problem.alignOut;
  if (!plan.dDirect) {
    MSAMP_RT_RETURN_IF_ERROR(
        staging.scratch(batch * plan.mPad * plan.nPad * 4, &dData));
    alignD = 256;
  }

  // alpha/beta: host 1/0 with the FP8 scale pointers; for high precision a
  // device alpha = fl(a_scale_inv * b_scale_inv), as the CPU's sgemm alpha.
  static const float hostAlphaBeta[2] = {1.0f, 0.0f};
  const float *alpha = &hostAlphaBeta[0], *beta = &hostAlphaBeta[1];
  if (!plan.fp8) {
    void *deviceAlphaBeta = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(
        staging.scratch(2 * sizeof(float), &deviceAlphaBeta));
    MSAMP_CUDA_TRY(launchAlphaBeta(p.aScaleInv, p.bScaleInv,
                                   static_cast<float *>(deviceAlphaBeta),
                                   stream));
    alpha = static_cast<const float *>(deviceAlphaBeta);
    beta = alpha + 1;
  }

  // cuBLASLt's A is the b side and its B the a side (GemmPlan.h).
  PlanKey key{};
  key.aType = plan.a.dtype;
  key.bType = plan.b.dtype;
  key.dType = plan.d.dtype;
  key.aRows = plan.a.rows;
  key.aCols = plan.a.cols;
  key.bRows = plan.b.rows;
  key.bCols = plan.b.cols;
  key.dRows = plan.d.rows;
  key.dCols = plan.d.cols;
  key.lda = plan.a.ld;
  key.ldb = plan.b.ld;
  key.ldd = plan.d.ld;
  key.strideA = plan.a.batchStride;
  key.strideB = plan.b.batchStride;
  key.strideD = plan.d.batchStride;
  key.batch = static_cast<int32_t>(batch);
  key.transA = plan.a.transposed;
  key.transB = plan.b.transposed;
  key.fp8 = plan.fp8;
  key.fastAccum = plan.fp8 && p.fastAccum;
  key.alignA = clampAlignment(alignB); // cuBLASLt A = b side
  key.alignB = clampAlignment(alignA);
  key.alignD = clampAlignment(alignD);

  {
    std::lock_guard<std::mutex> lock(mutex);
    Plan *lt = nullptr;
    MSAMP_RT_RETURN_IF_ERROR(getPlan(key, lt));
    if (plan.fp8) {
      // The inverse scales: cuBLASLt A (b side) is scaled by b_scale_inv.
      const void *aScale = p.bScaleInv, *bScale = p.aScaleInv;
      MSAMP_RT_RETURN_IF_ERROR(
          setDescAttribute(lt->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                           aScale, "A_SCALE_POINTER = b_scale_inv"));
      MSAMP_RT_RETURN_IF_ERROR(
          setDescAttribute(lt->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                           bScale, "B_SCALE_POINTER = a_scale_inv"));
    }
    MSAMP_CUBLAS_TRY_CTX(
        cublasLtMatmul(handle, lt->desc, alpha, bData, lt->a, aData, lt->b,
                       beta, dData, lt->d, dData, lt->d, &lt->algo, workspace,
                       workspaceSize, stream),
        "%s%s x %s%s -> %s, batch=%lld M=%lld N=%lld K=%lld (padded %lld x "
        "%lld x %lld), fast_accum=%d",
        dtypeName(p.aType), p.transA ? "^T" : "", dtypeName(p.bType),
        p.transB ? "^T" : "", dtypeName(p.outType),
        static_cast<long long>(batch), static_cast<long long>(p.m),
        static_cast<long long>(p.n), static_cast<long long>(p.k),
        static_cast<long long>(plan.mPad), static_cast<long long>(plan.nPad),
        static_cast<long long>(plan.kPad), key.fastAccum ? 1 : 0);
  }

  if (!plan.dDirect || plan.amaxOverOutput) {
    unsigned *amaxBits = nullptr;
    if (p.outAmax)
      MSAMP_RT_RETURN_IF_ERROR(staging.amaxAccumulator(&amaxBits));
    if (!plan.dDirect)
      MSAMP_CUDA_TRY_CTX(
          launchGemmEpilogue(static_cast<const float *>(dData), batch,
                             plan.mPad, plan.nPad, p.out, p.outType, p.m, p.n,
                             amaxBits, stream),
          "[%lld x %lld] window of [%lld x %lld] -> %s",
          static_cast<long long>(p.m), static_cast<long long>(p.n),
          static_cast<long long>(plan.mPad), static_cast<long long>(plan.nPad),
          dtypeName(p.outType));
    else
      MSAMP_CUDA_TRY(
          launchAmax(p.out, MSAMP_RT_F32, batch * p.m * p.n, amaxBits, stream));
    if (amaxBits)
      MSAMP_CUDA_TRY(launchFinalizeAmax(amaxBits, p.outAmax, stream));
  }
  return MSAMP_RT_OK;
}

} // namespace msamp::runtime::cuda
