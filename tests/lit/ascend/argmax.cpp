// Protects the row argmax: masked lanes padded with -inf, ReduceMax with the index requested,
// a V->S sync before the scalar read of the index, and the int32 result stored through UB with a
// one-element DataCopyPad (never a GM SetValue: cores share 64-byte cache lines of `out`).
// CHECK: extern "C" __global__ __aicore__ void argmax_kernel(
// CHECK-NEXT: {
// CHECK-NEXT: KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
// CHECK-NEXT: TPipe pipe;
// CHECK: DataCopyPadExtParams<half>(true, 0, {{.*}}, static_cast<half>(-__builtin_inff()))
// CHECK: ReduceMax({{.*}}, x, {{.*}}, 1024, true);
// CHECK: SetFlag<HardEvent::V_S>(evtVS);
// CHECK-NEXT: WaitFlag<HardEvent::V_S>(evtVS);
// CHECK: GetValue(1);
// CHECK: [[S:tmp_[0-9]+]].SetValue(0, static_cast<int32_t>(
// CHECK: SetFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK-NEXT: WaitFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK-NEXT: DataCopyPad(outGm[pidx64], [[S]], DataCopyExtParams(1, 4, 0, 0, 0));
// CHECK-NOT: outGm[{{.*}}].SetValue
