// Protects the tiled transpose: a strided 2-D DataCopyPad in (rows x cols with source stride), the
// transpose as TransDataTo5HD (one call per 16 source rows, repeating over blocks of 8 columns; no
// scalar access), and a
// strided 2-D DataCopyPad out with the roles of rows and cols swapped.
// CHECK: extern "C" __global__ __aicore__ void transpose_kernel(
// CHECK: DataCopyPad(tileLocal, xGm[tile], DataCopyExtParams(rows
// CHECK: for (int64_t i_1 = 0; i_1 < 2; i_1++) {
// CHECK: LocalTensor<float> dstList[16];
// CHECK-NEXT: LocalTensor<float> srcList[16];
// CHECK-NEXT: for (int32_t i_2 = 0; i_2 < 16; i_2++) {
// CHECK-NEXT: srcList[i_2] = tile_1[(i_1 * 512)][i_2 * 32];
// CHECK-NEXT: dstList[i_2] = outLocal[(i_1 * 16)][(i_2 / 2) * 32 + (i_2 % 2) * 8];
// CHECK: TransDataTo5HD<float>(dstList, srcList, TransDataTo5HDParams(false, false, 4, 32, 1));
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[out_ptrs], {{.*}}, DataCopyExtParams(cols
