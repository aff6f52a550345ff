// Protects the xb emitted for examples/argmax.py ((4, 1000), float32): the ops, their order and types after the passes.
// CHECK-LABEL: func.func @argmax_kernel
// CHECK: "xb.program_id"() {axis = 0 : i32} : () -> i32
// CHECK: "xb.arange"() {end = 1024 : i32, start = 0 : i32} : () -> tensor<1024xi32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (!xb.ptr<f32>, i32) -> !xb.ptr<f32>
// CHECK: "xb.splat"({{.*}}) : (!xb.ptr<f32>) -> tensor<1024x!xb.ptr<f32>>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (tensor<1024x!xb.ptr<f32>>, tensor<1024xi32>) -> tensor<1024x!xb.ptr<f32>>
// CHECK: "xb.splat"({{.*}}) : (i32) -> tensor<1024xi32>
// CHECK: "xb.load"({{.*}}, {{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>, volatile = false} : (tensor<1024x!xb.ptr<f32>>, tensor<1024xi1>, tensor<1024xf32>) -> tensor<1024xf32>
// CHECK: "xb.addptr"({{.*}}, {{.*}}) : (!xb.ptr<i32>, i32) -> !xb.ptr<i32>
// CHECK: "xb.reduce"({{.*}}) ({
// CHECK: }) {axis = 0 : i32, kind = "argmax", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<1024xf32>) -> i32
// CHECK: "xb.store"({{.*}}, {{.*}}) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!xb.ptr<i32>, i32) -> ()
