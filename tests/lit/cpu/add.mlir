// Protects the cpu lowering of a masked 1-D stream: blocks are legalized to 16-lane chunks, the
// contiguous pointer blocks (axis info) become masked vector loads/stores, and both loads are
// fused into the store's single chunk loop (no stack buffer, no gathers).
// CHECK-LABEL: func.func private @xb_program
// CHECK-NOT: memref.alloca
// CHECK-NOT: masked.gather
// CHECK: scf.for {{.*}} step
// CHECK: llvm.intr.masked.load {{.*}} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xf32>
// CHECK: arith.addf{{.*}}vector<16xf32>
// CHECK: llvm.intr.masked.store {{.*}} : vector<16xf32>, vector<16xi1> into !llvm.ptr
// CHECK-NEXT: }
// CHECK-NOT: masked.scatter
// CHECK-LABEL: func.func @xb_launch
// CHECK: func.call @xb_program
