// Protects the row scan: a blocked vector scan with no scalar access (scan.py, `_blocked`), per row
// of the R rows a program instance computes (programs coarsened: the rows move in one DataCopyPad
// each way). Each 1024-element row is a 64 x 16 matrix, transposed (TransDataTo5HD), scanned down its
// 16 rows, transposed back; the carries into each 16-lane segment come from a chain down 64 rows of
// 16 and one more transpose, are added to each of the 16 rows, a last transpose writes the row of the
// VECOUT tile, and the row's first segment (no carry) is copied from the segment scan.
// CHECK: extern "C" __global__ __aicore__ void cumsum_kernel(
// CHECK: DataCopyPad(xLocal, xGm[x], DataCopyExtParams(rows,
// CHECK-NOT: GetValue
// CHECK: for (int64_t [[R:i_[0-9]+]] = 0; [[R]] < 4; [[R]]++) {
// CHECK: TransDataTo5HD<float>(dstList, srcList, TransDataTo5HDParams(false, false, 2, 64, 1));
// CHECK: for (int64_t [[W:i_[0-9]+]] = 1; [[W]] < 16; [[W]]++) {
// CHECK: Add(tmp[
// CHECK: TransDataTo5HD<float>(
// CHECK: DataCopy(tmp_2[16], tmp_1, 16);
// CHECK: for (int64_t [[B:i_[0-9]+]] = 2; [[B]] < 64; [[B]]++) {
// CHECK: Add(tmp_2[
// CHECK: TransDataTo5HD<float>(
// CHECK: Add(tmp[{{.*}}], tmp_3[960], tmp[{{.*}}], 64);
// CHECK: TransDataTo5HD<float>(dstList_3, srcList_3, TransDataTo5HDParams(false, false, 8, 16, 1));
// CHECK: DataCopy(outLocal[{{.*}}], tmp_1, 16);
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[{{.*}}], local, DataCopyExtParams(rows,
