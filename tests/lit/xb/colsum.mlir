// Protects the xb emitted for examples/colsum.py ((64, 64), float32): the ops, their order and types after the passes.
// CHECK-LABEL: func.func @colsum_kernel
// CHECK: "xb.program_id"() {axis = 0 : i32} : () -> i32
// CHECK: "xb.arange"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<64xi32>
// CHECK: "xb.program_id"() {axis = 1 : i32} : () -> i32
// CHECK: "xb.arange"() {end = 64 : i32, start = 0 : i32} : () -> tensor<64xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<64xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<64xi32>) -> tensor<64x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<64x1xi32>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<64xi32>) -> tensor<1x64xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1x64xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<64x1xi1>) -> tensor<64x64xi1>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x64xi1>) -> tensor<64x64xi1>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 1 : i32} : (tensor<64xi32>) -> tensor<64x1xi32>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<64x1xi32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f32>) -> tensor<64x1x!xb.ptr<f32>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<64x1x!xb.ptr<f32>>, tensor<64x1xi32>) -> tensor<64x1x!xb.ptr<f32>>
// CHECK: "xb.expand_dims"({{.*}}) {axis = 0 : i32} : (tensor<64xi32>) -> tensor<1x64xi32>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<64x1x!xb.ptr<f32>>) -> tensor<64x64x!xb.ptr<f32>>
// CHECK: "xb.broadcast"({{.*}}) : (tensor<1x64xi32>) -> tensor<64x64xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<64x64x!xb.ptr<f32>>, tensor<64x64xi32>) -> tensor<64x64x!xb.ptr<f32>>
// CHECK: "xb.load"({{.*}}, {{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<64x64x!xb.ptr<f32>>, tensor<64x64xi1>, tensor<64x64xf32>) -> tensor<64x64xf32>
// CHECK: "xb.reduce"({{.*}}) ({
// CHECK: }) {axis = 0 : i32, kind = "sum", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64x64xf32>) -> tensor<64xf32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f32>) -> tensor<64x!xb.ptr<f32>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<64x!xb.ptr<f32>>, tensor<64xi32>) -> tensor<64x!xb.ptr<f32>>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<64xi32>
// CHECK: "xb.atomic_rmw"({{.*}}, {{.*}}, {{.*}}) {kind = "fadd", operandSegmentSizes = array<i32: 1, 1, 1>, scope = "gpu", sem = "acq_rel"} : (tensor<64x!xb.ptr<f32>>, tensor<64xf32>, tensor<64xi1>) -> tensor<64xf32>
