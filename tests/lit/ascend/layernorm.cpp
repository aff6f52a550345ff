// Protects loops with a block accumulator (one scratch tile updated in place), bf16 loads cast to
// float with CAST_NONE and stored back with CAST_RINT, a mask used as data (CompareScalar on an
// index tile built once before the grid loop, then Select; Compares under CANN 9), and the per-row scalars
// (mean, rstd) stored through UB with a one-element DataCopyPad, never a GM SetValue.
// CHECK: extern "C" __global__ __aicore__ void layernorm_kernel(
// CHECK: LocalTensor<float> iota0_1024 = calcBuf.GetWithOffset<float>(1024, {{[0-9]+}});
// CHECK-NEXT: for (int64_t i = 0; i < 1024; i++) {
// CHECK-NEXT: iota0_1024.SetValue(i, static_cast<float>(i));
// CHECK: SetFlag<HardEvent::S_V>(
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: LocalTensor<float> acc = calcBuf.GetWithOffset<float>(1024, {{[0-9]+}});
// CHECK-NEXT: Duplicate(acc{{.*}}, 0.0f, 1024);
// CHECK-NEXT: for (int32_t off = 0; off < N; off += 1024) {
// CHECK: DataCopyPadExtParams<bfloat16_t>(true, 0, {{.*}}, static_cast<bfloat16_t>(0.0f))
// CHECK: Cast([[T:tmp[_0-9]*]], {{.*}}, RoundMode::CAST_NONE, 1024);
// CHECK: Add(acc, acc, [[T]], 1024);
// CHECK: // layernorm.py:28: x = xl.where(cols < N, x - mean, 0.0)
// CHECK: #if XBLOCK_CANN_API >= 9
// CHECK-NEXT: Compares([[B:tmp_[0-9]+]], iota0_1024, static_cast<float>({{.*}}), CMPMODE::LT, 1024);
// CHECK-NEXT: #else
// CHECK-NEXT: CompareScalar([[B]], iota0_1024, static_cast<float>({{.*}}), CMPMODE::LT, 1024);
// CHECK-NEXT: #endif
// CHECK: Select({{.*}}, [[B]], {{.*}}, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 1024);
// CHECK: [[M:tmp_[0-9]+]].SetValue(0, mean);
// CHECK: DataCopyPad(meanGm[{{.*}}], [[M]], DataCopyExtParams(1, 4, 0, 0, 0));
// CHECK: for (int32_t off_{{[0-9]+}} = 0; off_{{[0-9]+}} < N; off_{{[0-9]+}} += 1024) {
// CHECK: Cast(yLocal, {{.*}}, RoundMode::CAST_RINT, 1024);
// CHECK: DataCopyPad(yGm[{{.*}}], {{.*}}, DataCopyExtParams(1, {{.*}}, 0, 0, 0));
