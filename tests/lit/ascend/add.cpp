// Protects the shape of the simplest AscendC kernel: entry, TPipe, double-buffered VECIN/VECOUT
// queues, the grid loop over pid, masked tiles as DataCopyPad with byte lengths, one count-form Add.
// CHECK: #include "kernel_operator.h"
// CHECK: extern "C" __global__ __aicore__ void add_kernel(GM_ADDR x_ptr, GM_ADDR y_ptr, GM_ADDR out_ptr, AddKernelTilingData tiling)
// CHECK: TPipe pipe;
// CHECK: xGm.SetGlobalBuffer((__gm__ float *)x_ptr);
// CHECK: const int32_t n = tiling.n;
// The inputs each program reads its own part of, once, bypass L2 when the launch moves more than it holds
// (plan/streaming.py): numPrograms x 12288 B (x, y, out) against 192 MB; the output keeps L2.
// CHECK: if ({{.*}}(numPrograms * 12288) > 201326592){{.*}}) {
// CHECK-NEXT: xGm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
// CHECK-NEXT: yGm.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
// CHECK-NEXT: }
// CHECK: TQue<TPosition::VECIN, 1> inQueueX;
// CHECK-NEXT: pipe.InitBuffer(inQueueX, 2, 4096);
// CHECK: TQue<TPosition::VECOUT, 1> outQueueOut;
// CHECK-NEXT: pipe.InitBuffer(outQueueOut, 2, 4096);
// CHECK: for (int64_t pid = GetBlockIdx(); pid < numPrograms; pid += GetBlockNum()) {
// CHECK: // add.py:14: x = xl.load(x_ptr + offs, mask=mask)
// CHECK-NEXT: LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
// The GM offset carries the kernel's name for it (`offs`), wrapped to int32 as Triton's int32 offsets wrap; the byte length its role (`rowBytes`).
// CHECK: const int64_t offs = static_cast<int64_t>(static_cast<int32_t>(({{.*}} * 1024)));
// CHECK: const int64_t cols = ({{.*}} < 1024 ? {{.*}} : 1024);
// CHECK: DataCopyPad(xLocal, xGm[[[OFF:offs]]], DataCopyExtParams(1, [[LEN:rowBytes]], 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0));
// CHECK-NEXT: inQueueX.EnQue(xLocal);
// CHECK-NEXT: LocalTensor<float> x = inQueueX.DeQue<float>();
// CHECK: LocalTensor<float> y = inQueueY.DeQue<float>();
// CHECK: // add.py:16: xl.store(out_ptr + offs, x + y, mask=mask)
// CHECK-NEXT: LocalTensor<float> outLocal = outQueueOut.AllocTensor<float>();
// CHECK-NEXT: Add(outLocal, x, y, 1024);
// CHECK-NEXT: inQueueX.FreeTensor(x);
// CHECK-NEXT: inQueueY.FreeTensor(y);
// CHECK-NEXT: outQueueOut.EnQue(outLocal);
// CHECK-NEXT: LocalTensor<float> [[OUT:[a-z_0-9]+]] = outQueueOut.DeQue<float>();
// CHECK-NEXT: DataCopyPad(outGm[[[OFF]]], [[OUT]], DataCopyExtParams(1, [[LEN]], 0, 0, 0));
// CHECK-NEXT: outQueueOut.FreeTensor([[OUT]]);
