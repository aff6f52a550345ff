// Protects the row softmax with R rows per program instance (programs coarsened, about 16 KB per
// copy): the rows move in one DataCopyPad (blockCount = rows), masked lanes padded with `other`
// (-inf) by DataCopyPad and Duplicates, each row's max and sum reduced into its own 32-byte slot and
// gathered by one WholeReduceMax/WholeReduceSum, the per-row values broadcast along the rows with
// Brcb and read by the Sub and the Div with source block stride 0, in a loop over 64-lane column
// chunks whose repeats run over the rows: no broadcast tile, no scalar read-back anywhere.
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
// CHECK: for (int64_t [[I:i_[0-9]+]] = 0; [[I]] < 16; [[I]]++) {
// CHECK: Sub({{.*}}, x_1[{{.*}}], [[B]], 64, 4, BinaryRepeatParams(1, 1, 0, 128, 128, 1));
// CHECK: Exp(num, {{.*}}, 4096);
// CHECK: ReduceSum(
// CHECK: WholeReduceSum(
// CHECK: Brcb(
// CHECK: Div(outLocal[{{.*}}], num[{{.*}}], {{.*}}, 64, 4, BinaryRepeatParams(1, 1, 0, 128, 128, 1));
// CHECK: // softmax.py:22: xl.store(
// CHECK-NOT: GetValue
// CHECK: DataCopyPad(outGm[{{.*}}], local, DataCopyExtParams(rows, {{.*}}));
