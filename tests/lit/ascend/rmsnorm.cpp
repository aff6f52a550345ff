// Protects rmsnorm in fp16 with fp32 math, R rows per program instance: the weight copied once per
// core before the grid loop into a resident tile (only on a core that has programs), the rows in
// one DataCopyPad, both Cast to float, x*x folded over the rows at once with mask/repeat-form Adds
// and two BlockReduceSums, Rsqrt on the per-row values in a vector, broadcast back along the rows with
// Brcb and read by the Mul with source block stride 0 (no GetValue anywhere), Mul by w, and a
// CAST_RINT back to half before the store of the rows.
// CHECK: extern "C" __global__ __aicore__ void rmsnorm_kernel(
// CHECK: LocalTensor<half> wResident = calcBuf.GetWithOffset<half>(
// CHECK-NEXT: if ((GetBlockIdx() < numPrograms)) {
// CHECK: DataCopyPad(wResident, wGm[0],
// CHECK: SetFlag<HardEvent::MTE2_V>(
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK-NOT: GetValue
// CHECK: DataCopyPad({{.*}}, xGm[x], DataCopyExtParams(rows,
// CHECK: Cast(x_1, {{.*}}, RoundMode::CAST_NONE, 8192);
// CHECK: Cast(w, wResident, RoundMode::CAST_NONE, 1024);
// CHECK: Mul([[S:tmp[_0-9]*]], x_1, x_1, 8192);
// CHECK: Add([[F:tmp_[0-9]+]], [[S]], [[S]][64], 64, 8, BinaryRepeatParams(1, 1, 1, 8, 128, 128));
// CHECK: BlockReduceSum([[P:tmp_[0-9]+]], [[F]], 8, 64, 1, 1, 8);
// CHECK: BlockReduceSum({{.*}}, [[P]], 1, 64, 1, 1, 8);
// CHECK: Rsqrt(rstd, {{.*}}, 8);
// CHECK: Brcb({{.*}}, rstd, 1, BrcbRepeatParams(1, 8));
// CHECK: Mul({{.*}}, x_1[{{.*}}], {{.*}}, 64, 8, BinaryRepeatParams(1, 1, 0, 128, 128, 1));
// CHECK: Mul(y, {{.*}}, 8192);
// CHECK: Cast(outLocal, y, RoundMode::CAST_RINT, 8192);
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[{{.*}}], {{.*}}, DataCopyExtParams(rows,
