// Protects the row argmax with R rows per program instance (programs coarsened): the rows move in
// one DataCopyPad (blockCount = rows), masked lanes padded with -inf, ReduceMax with the index per
// row, a V->S sync before the scalar read of the index, the int32 results set in the output tile
// (S->MTE3 before its copy) and stored through UB with one DataCopyPad for the rows (never a GM
// SetValue: cores share 64-byte cache lines of `out`).
// CHECK: extern "C" __global__ __aicore__ void argmax_kernel(
// CHECK-NEXT: {
// CHECK-NEXT: KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
// CHECK-NEXT: TPipe pipe;
// CHECK: const int64_t rows = ({{.*}} < 8 ? {{.*}} : 8);
// CHECK: DataCopyPad(xLocal, xGm[x], DataCopyExtParams(rows, {{.*}}, DataCopyPadExtParams<half>(true, 0, {{.*}}, static_cast<half>(-__builtin_inff())));
// CHECK: ReduceMax({{.*}}, x_1[({{.*}} * 1024)], {{.*}}, 1024, true);
// CHECK: SetFlag<HardEvent::V_S>(evtVS);
// CHECK-NEXT: WaitFlag<HardEvent::V_S>(evtVS);
// CHECK-NEXT: const int16_t [[I:val[_0-9]*]] = {{.*}}GetValue(1);
// CHECK-NEXT: outLocal.SetValue({{.*}}, static_cast<int32_t>(static_cast<uint16_t>([[I]])));
// CHECK: SetFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK-NEXT: WaitFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK: DataCopyPad(outGm[{{.*}}], local, DataCopyExtParams(1, {{.*}}, 0, 0, 0));
// CHECK-NOT: outGm[{{.*}}].SetValue
