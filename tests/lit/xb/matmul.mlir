// Protects the xb emitted for examples/matmul.py ((64, 64, 64), float16): the ops, their order and types after the passes.
// CHECK-LABEL: func.func @matmul_kernel
// CHECK: "xb.program_id"() {axis = 0 : i32} : () -> i32
// CHECK: "xb.arange"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32xi32>
// CHECK: "xb.arange"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32xi32>
// CHECK: "xb.arange"() {end = 32 : i32, start = 0 : i32} : () -> tensor<32xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f16>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x1x!xb.ptr<f16>>, tensor<32x1xi32>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1x!xb.ptr<f16>>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi32>) -> tensor<32x32xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi32>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f16>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x1x!xb.ptr<f16>>, tensor<32x1xi32>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1x!xb.ptr<f16>>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi32>) -> tensor<32x32xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi32>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: scf.for {{.*}} = {{.*}} to {{.*}} step {{.*}} iter_args({{.*}} = {{.*}}, {{.*}} = {{.*}}, {{.*}} = {{.*}}) -> (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xf32>, tensor<32x32x!xb.ptr<f16>>)  : i32 {
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1xi1>) -> tensor<32x32xi1>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi1>) -> tensor<32x32xi1>
// CHECK: "xb.load"({{.*}}, {{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi1>, tensor<32x32xf16>) -> tensor<32x32xf16>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1xi1>) -> tensor<32x32xi1>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi1>) -> tensor<32x32xi1>
// CHECK: "xb.load"({{.*}}, {{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi1>, tensor<32x32xf16>) -> tensor<32x32xf16>
// CHECK: "xb.dot"({{.*}}, {{.*}}, {{.*}}) {input_precision = "ieee", out_dtype = f32} : (tensor<32x32xf16>, tensor<32x32xf16>, tensor<32x32xf32>) -> tensor<32x32xf32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x32xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi32>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x32xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi32>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: scf.yield {{.*}}, {{.*}}, {{.*}} : tensor<32x32x!xb.ptr<f16>>, tensor<32x32xf32>, tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.splat"({{.*}}) : (f32) -> tensor<32x32xf32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f16>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x1x!xb.ptr<f16>>, tensor<32x1xi32>) -> tensor<32x1x!xb.ptr<f16>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1x!xb.ptr<f16>>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi32>) -> tensor<32x32xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xi32>) -> tensor<32x32x!xb.ptr<f16>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<32xi32>) -> tensor<32x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<32x1xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<32xi32>) -> tensor<1x32xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x32xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<32x1xi1>) -> tensor<32x32xi1>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x32xi1>) -> tensor<32x32xi1>
// CHECK: "xb.store"({{.*}}, {{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<32x32x!xb.ptr<f16>>, tensor<32x32xf16>, tensor<32x32xi1>) -> ()
