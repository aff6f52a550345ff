// Protects the cpu lowering of a row softmax: a contiguous masked row load, a max reduction with
// one vector accumulator and a horizontal maxnumf, exp as the inline fp32 polynomial (no libm
// call per lane), a sum reduction, and a masked row store, all on 16-lane chunks.
// CHECK-LABEL: func.func private @xb_program
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>)
// CHECK: arith.maxnumf {{.*}} : vector<16xf32>
// CHECK: vector.reduction <maxnumf>, {{.*}} : vector<16xf32> into f32
// CHECK: math.floor {{.*}} : vector<16xf32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.shli {{.*}} : vector<16xi32>
// CHECK-NOT: math.exp
// CHECK: vector.reduction <add>, {{.*}} : vector<16xf32> into f32
// CHECK: arith.divf
// CHECK: llvm.intr.masked.store {{.*}} : vector<16xf32>, vector<16xi1> into !llvm.ptr
