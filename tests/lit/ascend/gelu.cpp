// Protects elementwise lowering in fp32 of an fp16 kernel: DataCopyPad of the masked tail, a Cast to
// float (CAST_NONE) before the math, count-form vector ops (Muls/Mul/Add/Exp/Div), CompareScalar +
// Select for `where` (the name every CANN from 8.0 to 9.1 declares, no version switch), a CAST_RINT
// back to half, and the store of only the valid bytes.
// CHECK: extern "C" __global__ __aicore__ void gelu_kernel(
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: DataCopyPad(local, xGm[offs], DataCopyExtParams(1, rowBytes
// CHECK: Cast(x, {{.*}}, RoundMode::CAST_NONE, 1024);
// CHECK: Exp(e, {{.*}}, 1024);
// CHECK: Div(
// CHECK-NOT: #if
// CHECK: CompareScalar({{.*}}, u, 0.0f, CMPMODE::GE, 1024);
// CHECK: Select({{.*}}, SELMODE::VSEL_TENSOR_TENSOR_MODE, 1024);
// CHECK: Cast(outLocal, y, RoundMode::CAST_RINT, 1024);
// CHECK: DataCopyPad(outGm[offs], {{.*}}, DataCopyExtParams(1, rowBytes, 0, 0, 0));
