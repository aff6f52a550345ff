// Protects the cpu lowering of the tiled matmul: 2-D pointer blocks carried through the K loop
// stay contiguous along their rows (axis info across scf.for), so tiles load with masked vector
// loads; xb.dot is a register tile of 8 rows x 2 chunks of FMAs on fp32 accumulators.
// CHECK-LABEL: func.func private @xb_program
// CHECK-NOT: masked.gather
// CHECK: scf.for {{.*}} : i32
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xf16>
// CHECK: llvm.intr.masked.load {{.*}} -> vector<16xf16>
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: arith.extf {{.*}} : vector<16xf16> to vector<16xf32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.truncf{{.*}}vector<16xf32>{{.*}}vector<16xf16>
// CHECK: llvm.intr.masked.store {{.*}} : vector<16xf16>, vector<16xi1> into !llvm.ptr
