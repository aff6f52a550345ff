// One row per program instance: w and b are read in a loop, the same in every program, so the
// planner does not coarsen the kernel (plan/planner.py coarsen_rows: each instance would broadcast
// them over its rows) and w and b are kept per core across programs (row_cache.py). Protects loops
// with a block accumulator (one scratch tile updated in place), bf16 loads cast to float with
// CAST_NONE and stored back with CAST_RINT, a mask used as data (CompareScalar on an index tile built
// once before the grid loop with vector instructions: 8 SetValues, doubling Adds; then Select; no
// CANN version switch), each row's sum folded on the vector unit and read once as a scalar after a
// V -> S flag (mean and rstd are scalars: Adds/Muls), and the per-row scalars stored through UB with
// one DataCopyPad, never a GM SetValue. The row is read from GM once: the first loop keeps its tiles
// in a UB buffer that the two others copy from (the GM copy is their fallback past the buffer's slots).
// CHECK: extern "C" __global__ __aicore__ void layernorm_kernel(
// CHECK: LocalTensor<bfloat16_t> xCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: LocalTensor<float> [[I:iota0_[0-9]+]] = calcBuf.GetWithOffset<float>(1024, {{[0-9]+}});
// CHECK-NEXT: [[I]].SetValue(0, 0.0f);
// CHECK: SetFlag<HardEvent::S_V>(
// CHECK: Adds([[I]][8], [[I]], 8.0f, 8);
// CHECK: Adds([[I]][512], [[I]], 512.0f, 512);
// CHECK: LocalTensor<bfloat16_t> wCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: LocalTensor<bfloat16_t> bCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: LocalTensor<float> acc = calcBuf.GetWithOffset<float>(1024, {{[0-9]+}});
// CHECK-NEXT: Duplicate(acc{{.*}}, 0.0f, 1024);
// CHECK-NEXT: for (int32_t off = 0; off < N; off += 1024) {
// CHECK: DataCopyExtParams(1, rowBytes, 0, 0, 0), DataCopyPadExtParams<bfloat16_t>(true, 0, {{.*}}, static_cast<bfloat16_t>(0.0f))
// CHECK: DataCopy(xCache[{{.*}}], {{.*}}, 1024);
// CHECK: Cast([[T:tmp[_0-9]*]], {{.*}}, RoundMode::CAST_NONE, 1024);
// CHECK: Add(acc, acc, [[T]], 1024);
// CHECK: // layernorm.py:23: mean = xl.sum(acc, axis=0) / N
// CHECK: ReduceSum(
// CHECK: SetFlag<HardEvent::V_S>(
// CHECK: const float mean = (
// CHECK: DataCopyPad({{.*}}, xGm[
// CHECK: DataCopy({{.*}}, xCache[{{.*}}], 1024);
// CHECK-NEXT: } else {
// CHECK: // layernorm.py:28: x = xl.where(cols < N, x - mean, 0.0)
// CHECK: Adds({{.*}}, (-mean), 1024);
// CHECK-NOT: #if
// CHECK: CompareScalar([[B:tmp_[0-9]+]], [[I]], static_cast<float>({{.*}}), CMPMODE::LT, 1024);
// CHECK: Select({{.*}}, [[B]], {{.*}}, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 1024);
// CHECK: DataCopyPad(meanGm[{{.*}}], {{.*}}, DataCopyExtParams(1, 4, 0, 0, 0));
// CHECK: for (int32_t off_{{[0-9]+}} = 0; off_{{[0-9]+}} < N; off_{{[0-9]+}} += 1024) {
// CHECK: (pid == GetBlockIdx())
// CHECK: DataCopy(w, wCache[{{.*}}], 1024);
// CHECK: DataCopy(wCache[{{.*}}], w, 1024);
// CHECK: DataCopy(b, bCache[{{.*}}], 1024);
// CHECK: DataCopy(bCache[{{.*}}], b, 1024);
// CHECK: DataCopy({{.*}}, xCache[{{.*}}], 1024);
// CHECK: Muls({{.*}}, rstd, 1024);
// CHECK: Cast(yLocal, {{.*}}, RoundMode::CAST_RINT, 1024);
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(yGm[{{.*}}], {{.*}}, DataCopyExtParams(1,
