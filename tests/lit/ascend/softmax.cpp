// Protects the row-reduction idioms: masked lanes padded with `other` (-inf) by DataCopyPad and a
// Duplicate, max and sum folded to one 256-byte repeat then ReduceMax/ReduceSum, V->S sync before
// reading the scalar, and the per-row scalars applied with Adds/Muls.
// CHECK: extern "C" __global__ __aicore__ void softmax_kernel(
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: // softmax.py:19: x = xl.load(
// CHECK: DataCopyPad(xLocal, xGm[{{.*}}x_row_stride{{.*}}], DataCopyExtParams(1, {{.*}}), DataCopyPadExtParams<float>(true, 0, {{.*}}, -__builtin_inff()));
// CHECK: LocalTensor<float> x = inQueueX.DeQue<float>();
// CHECK-NEXT: const int64_t [[AL:t_[0-9]+]] = ([[R:t_[0-9]+]] < 1024 ? [[R]] : 1024);
// CHECK-NEXT: Duplicate(x[[[AL]]], -__builtin_inff(), static_cast<int32_t>((1024 - [[AL]])));
// CHECK: // softmax.py:20: num = xl.exp(x - xl.max(x, axis=0))
// CHECK: Max([[W:tmp[_0-9]*]], x, x[512], 512);
// CHECK-NEXT: Max([[W]], [[W]], [[W]][256], 256);
// CHECK-NEXT: Max([[W]], [[W]], [[W]][128], 128);
// CHECK-NEXT: Max([[W]], [[W]], [[W]][64], 64);
// CHECK: ReduceMax([[M:tmp_[0-9]+]], [[W]], {{.*}}, 64);
// CHECK-NEXT: event_t [[E:evtVS[_0-9]*]] = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
// CHECK-NEXT: SetFlag<HardEvent::V_S>([[E]]);
// CHECK-NEXT: WaitFlag<HardEvent::V_S>([[E]]);
// CHECK-NEXT: const float [[MAX:val[_0-9]*]] = [[M]].GetValue(0);
// CHECK: Adds({{.*}}, x, (-[[MAX]]), 1024);
// CHECK: Exp(num, {{.*}}, 1024);
// CHECK: ReduceSum(
// CHECK: Muls(outLocal, num, (1.0f / {{.*}}), 1024);
// CHECK: // softmax.py:22: xl.store(
// CHECK: DataCopyPad(outGm[{{.*}}out_row_stride{{.*}}], {{.*}}, DataCopyExtParams(1, {{.*}}, 0, 0, 0));
