// Protects the cpu lowering of a masked 1-D stream: blocks are legalized to 16-lane chunks, the
// contiguous pointer blocks (axis info) become vector loads/stores fused into the store's loop
// (no stack buffer, no gathers), with a full-block fast path: when the whole mask is true the
// loop runs with plain loads and stores, otherwise with masked ones. Whether the mask is all true
// comes from scalars (pid * BLOCK + BLOCK - 1 < n, axis_info.mask_bounds), not from a pass over it.
// CHECK-LABEL: func.func private @xb_program
// CHECK-NOT: memref.alloca
// CHECK-NOT: masked.gather
// CHECK-NOT: vector.reduction
// CHECK: arith.cmpi slt, {{.*}} : i64
// CHECK-NEXT: arith.andi {{.*}} : i1
// CHECK-NEXT: scf.if
// CHECK-NEXT: scf.for
// CHECK-NOT: masked
// CHECK: llvm.load {{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK: llvm.load {{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK: arith.addf{{.*}}vector<16xf32>
// CHECK: llvm.store {{.*}} : vector<16xf32>, !llvm.ptr
// CHECK: } else {
// CHECK: llvm.intr.masked.load {{.*}} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xf32>
// CHECK: arith.addf{{.*}}vector<16xf32>
// CHECK: llvm.intr.masked.store {{.*}} : vector<16xf32>, vector<16xi1> into !llvm.ptr
// CHECK-NOT: masked.scatter
// CHECK-LABEL: func.func @xb_launch
// CHECK: func.call @xb_program
