// Protects the 2-D strided tile copy (DataCopyExtParams with a block count of rows and a source
// stride), the column reduction of the tile, and the atomic-add copy path bracketed by
// SetAtomicAdd / SetAtomicNone (declared by every CANN from 8.0 to 9.1; no version switch).
// CHECK: extern "C" __global__ __aicore__ void colsum_kernel(
// CHECK: DataCopyPad(tileLocal, xGm[tile], DataCopyExtParams(rows, rowBytes
// CHECK: Cast({{.*}}, RoundMode::CAST_NONE, 4096);
// CHECK: SetAtomicAdd<float>();
// CHECK: DataCopyPad(outGm[offs_n],
// CHECK-NEXT: SetAtomicNone();
