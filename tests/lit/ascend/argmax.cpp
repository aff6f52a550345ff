// Protects the row argmax: masked lanes padded with -inf, ReduceMax with the index requested,
// a V->S sync before the scalar read of the index, and a scalar store of the int32 result.
// CHECK: extern "C" __global__ __aicore__ void argmax_kernel(
// CHECK: DataCopyPadExtParams<half>(true, 0, {{.*}}, static_cast<half>(-__builtin_inff()))
// CHECK: ReduceMax({{.*}}, x, {{.*}}, 1024, true);
// CHECK: SetFlag<HardEvent::V_S>(evtVS);
// CHECK-NEXT: WaitFlag<HardEvent::V_S>(evtVS);
// CHECK: GetValue(1);
// CHECK: outGm[pidx64].SetValue(0, static_cast<int32_t>(
