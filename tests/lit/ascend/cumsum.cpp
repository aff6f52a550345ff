// Protects the row scan: a blocked vector scan with no scalar access. The 1024-element row is a
// 64 x 16 matrix, transposed (TransDataTo5HD), scanned down its 16 rows, transposed back; the row
// totals' exclusive prefix comes from a scan down 64 rows of 16 and one more transpose, is added to
// each of the 16 rows, and a last transpose writes the VECOUT tile.
// CHECK: extern "C" __global__ __aicore__ void cumsum_kernel(
// CHECK: DataCopyPad(xLocal, xGm[
// CHECK-NOT: GetValue
// CHECK: TransDataTo5HD<float>(dstList, srcList, TransDataTo5HDParams(false, false, 2, 64, 1));
// CHECK: for (int64_t [[W:i_[0-9]+]] = 1; [[W]] < 16; [[W]]++) {
// CHECK: Add(tmp[
// CHECK: TransDataTo5HD<float>(
// CHECK: Duplicate(tmp_2, 0.0f, 16);
// CHECK: for (int64_t [[B:i_[0-9]+]] = 1; [[B]] < 64; [[B]]++) {
// CHECK: Add(tmp_2[
// CHECK: TransDataTo5HD<float>(
// CHECK: Add(tmp[{{.*}}], tmp[{{.*}}], tmp_3[960], 64);
// CHECK: TransDataTo5HD<float>(dstList_3, srcList_3, TransDataTo5HDParams(false, false, 8, 16, 1));
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[
