// Protects rmsnorm in fp16 with fp32 math: both fp16 rows Cast to float, x*x summed with ReduceSum,
// Rsqrt on the per-row scalar, read back with GetValue, then Muls by the scalar and Mul by w, and a
// CAST_RINT back to half before the store.
// CHECK: extern "C" __global__ __aicore__ void rmsnorm_kernel(
// CHECK: DataCopyPad({{.*}}, xGm[
// CHECK: Cast(x, {{.*}}, RoundMode::CAST_NONE, 1024);
// CHECK: DataCopyPad({{.*}}, wGm[0],
// CHECK: Cast(w, {{.*}}, RoundMode::CAST_NONE, 1024);
// CHECK: Mul({{.*}}, x, x, 1024);
// CHECK: ReduceSum(
// CHECK: Rsqrt(
// CHECK: const float rstd = {{.*}}.GetValue(0);
// CHECK: Muls({{.*}}, x, rstd, 1024);
// CHECK: Mul(y, {{.*}}, w, 1024);
// CHECK: Cast(outLocal, y, RoundMode::CAST_RINT, 1024);
// CHECK: DataCopyPad(outGm[
