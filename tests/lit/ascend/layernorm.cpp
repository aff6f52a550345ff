// Protects loops with a block accumulator (one scratch tile updated in place) over R rows per
// program instance (the rows move in one DataCopyPad), bf16 loads cast to float with CAST_NONE and
// stored back with CAST_RINT, a mask used as data (CompareScalar on an index tile built once before
// the grid loop with vector instructions: 8 SetValues, doubling Adds, DataCopys of the period; then
// Select; no CANN version switch), per-row sums reduced for all rows into a vector and broadcast back
// with Brcb (no GetValue), and the per-row scalars (mean, rstd) stored through UB with one
// DataCopyPad for the rows, never a GM SetValue. The row is read from GM once: the first loop
// keeps its tiles in a UB buffer that the two others copy from (the GM copy is their fallback past
// the buffer's slots), and w and b are kept per core across programs (row_cache.py).
// CHECK: extern "C" __global__ __aicore__ void layernorm_kernel(
// CHECK: LocalTensor<bfloat16_t> xCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: LocalTensor<float> [[I:iota1_[0-9]+]] = calcBuf.GetWithOffset<float>(4096, {{[0-9]+}});
// CHECK-NEXT: [[I]].SetValue(0, 0.0f);
// CHECK: SetFlag<HardEvent::S_V>(
// CHECK: Adds([[I]][8], [[I]], 8.0f, 8);
// CHECK: Adds([[I]][512], [[I]], 512.0f, 512);
// CHECK: DataCopy([[I]][({{.*}} * 1024)], [[I]], 1024);
// CHECK: LocalTensor<bfloat16_t> wCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: LocalTensor<bfloat16_t> bCache = calcBuf.GetWithOffset<bfloat16_t>({{[0-9]+}}, {{[0-9]+}});
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK-NOT: GetValue
// CHECK: LocalTensor<float> acc = calcBuf.GetWithOffset<float>(4096, {{[0-9]+}});
// CHECK-NEXT: Duplicate(acc{{.*}}, 0.0f, 4096);
// CHECK-NEXT: for (int32_t off = 0; off < N; off += 1024) {
// CHECK: DataCopyExtParams(rows,
// CHECK-SAME: DataCopyPadExtParams<bfloat16_t>(true, 0, {{.*}}, static_cast<bfloat16_t>(0.0f))
// CHECK: DataCopy(xCache[{{.*}}], {{.*}}, 4096);
// CHECK: Cast([[T:tmp[_0-9]*]], {{.*}}, RoundMode::CAST_NONE, 4096);
// CHECK: Add(acc, acc, [[T]], 4096);
// CHECK: WholeReduceSum(
// CHECK: DataCopyPad({{.*}}, xGm[
// CHECK: DataCopy({{.*}}, xCache[{{.*}}], 4096);
// CHECK-NEXT: } else {
// CHECK: // layernorm.py:28: x = xl.where(cols < N, x - mean, 0.0)
// CHECK: Brcb({{.*}}, mean, 1, BrcbRepeatParams(1, 8));
// CHECK-NOT: #if
// CHECK: CompareScalar([[B:tmp_[0-9]+]], [[I]], static_cast<float>({{.*}}), CMPMODE::LT, 4096);
// CHECK: Select({{.*}}, [[B]], {{.*}}, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 4096);
// CHECK: DataCopy(meanLocal, mean, 64);
// CHECK: DataCopyPad(meanGm[{{.*}}], {{.*}}, DataCopyExtParams(1, {{.*}}, 0, 0, 0));
// CHECK: for (int32_t off_{{[0-9]+}} = 0; off_{{[0-9]+}} < N; off_{{[0-9]+}} += 1024) {
// CHECK: (pid == GetBlockIdx())
// CHECK: DataCopy(w, wCache[{{.*}}], 1024);
// CHECK: DataCopy(wCache[{{.*}}], w, 1024);
// CHECK: DataCopy(b, bCache[{{.*}}], 1024);
// CHECK: DataCopy(bCache[{{.*}}], b, 1024);
// CHECK: DataCopy({{.*}}, xCache[{{.*}}], 4096);
// CHECK: Cast(yLocal, {{.*}}, RoundMode::CAST_RINT, 4096);
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(yGm[{{.*}}], {{.*}}, DataCopyExtParams({{.*}},
