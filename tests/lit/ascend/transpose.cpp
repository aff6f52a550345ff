// Protects the tiled transpose: a strided 2-D DataCopyPad in (rows x cols with source stride), the
// transpose as a scalar GetValue/SetValue loop (no transpose API in the reference subset), and a
// strided 2-D DataCopyPad out with the roles of rows and cols swapped.
// CHECK: extern "C" __global__ __aicore__ void transpose_kernel(
// CHECK: DataCopyPad(tileLocal, xGm[tile], DataCopyExtParams(static_cast<uint16_t>(rows)
// CHECK: for (int64_t i_1 = 0; i_1 < 32; i_1++) {
// CHECK-NEXT: for (int64_t i_2 = 0; i_2 < 32; i_2++) {
// CHECK-NEXT: const float val = tile_1.GetValue((i_1 + (i_2 * 32)));
// CHECK-NEXT: outLocal.SetValue(((i_1 * 32) + i_2), val);
// CHECK: DataCopyPad(outGm[out_ptrs], {{.*}}, DataCopyExtParams(static_cast<uint16_t>(cols)
