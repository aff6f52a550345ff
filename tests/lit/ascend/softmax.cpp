// Protects the row softmax with R rows per program instance (programs coarsened, about 16 KB per
// copy): the rows move in one DataCopyPad (blockCount = rows), masked lanes padded with `other`
// (-inf) by DataCopyPad and Duplicates, each row's max and sum reduced into its own 32-byte slot and
// gathered by one WholeReduceMax/WholeReduceSum, the per-row values broadcast along the rows with
// Brcb and a stride-0 Copy: no scalar read-back anywhere.
// CHECK: extern "C" __global__ __aicore__ void softmax_kernel(
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: // softmax.py:19: x = xl.load(
// CHECK: const int64_t rows = ({{.*}} < 4 ? {{.*}} : 4);
// CHECK: DataCopyPad(xLocal, xGm[x], DataCopyExtParams(rows, {{.*}}, DataCopyPadExtParams<float>(true, 0, {{.*}}, -__builtin_inff()));
// CHECK: Duplicate(x_1[{{.*}}], -__builtin_inff(),
// CHECK: // softmax.py:20: num = xl.exp(x - xl.max(x, axis=0))
// CHECK-NOT: GetValue
// CHECK: ReduceMax({{.*}}, x_1[({{.*}} * 1024)], {{.*}}, 1024);
// CHECK: WholeReduceMax([[M:tmp[_0-9]*]], {{.*}}, 1, 4, 1, 1, 1, ReduceOrder::ORDER_ONLY_VALUE);
// CHECK: Brcb([[B:tmp_[0-9]+]], [[M]], 1, BrcbRepeatParams(1, 8));
// CHECK: Copy({{.*}}, [[B]][({{.*}} * 8)], 64, 16, CopyRepeatParams(1, 0, 8, 0));
// CHECK: Sub({{.*}}, x_1, {{.*}}, 4096);
// CHECK: Exp(num, {{.*}}, 4096);
// CHECK: ReduceSum(
// CHECK: WholeReduceSum(
// CHECK: Brcb(
// CHECK: Div(outLocal, num, {{.*}}, 4096);
// CHECK: // softmax.py:22: xl.store(
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[{{.*}}], local, DataCopyExtParams(rows, {{.*}}));
