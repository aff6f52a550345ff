// Protects the row scan: no scan API in the reference subset, so a scalar loop over the row with
// the MTE2->S and V->S syncs before GetValue, and S->V / S->MTE3 syncs before the vector unit and
// the copy-out touch the scanned values.
// CHECK: extern "C" __global__ __aicore__ void cumsum_kernel(
// CHECK: DataCopyPad(xLocal, xGm[
// CHECK: SetFlag<HardEvent::MTE2_S>(evtMTE2S);
// CHECK: for (int64_t i_1 = 0; i_1 < 1024; i_1++) {
// CHECK: x.GetValue(
// CHECK: outLocal.SetValue(
// CHECK: SetFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK-NEXT: WaitFlag<HardEvent::S_MTE3>(evtSMTE3);
// CHECK: DataCopyPad(outGm[
