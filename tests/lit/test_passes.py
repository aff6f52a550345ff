"""One golden test per xb pass: a small input module, the pass, FileCheck on the result."""

import textwrap

from mlir import ir

from xblock.dialects import xb
from xblock.passes import (
    canonicalize,
    combine_dot_add,
    dce,
    fold_constants,
    inline_calls,
    record_values,
    strip_mine,
    verify,
)

from .golden import filecheck, strip_locs


def run_pass(src: str, fn) -> str:
    with xb.context(), ir.Location.unknown():
        m = ir.Module.parse(textwrap.dedent(src))
        fn(m)
        verify(m, "test")
        return strip_locs(str(m))


def check(tmp_path, checks: str, text: str):
    f = tmp_path / "check.mlir"
    f.write_text(textwrap.dedent(checks))
    filecheck(f, text)


def test_xb_inline_calls(tmp_path):
    # protects: helper calls are inlined (also inside scf regions) and private helpers removed
    out = run_pass("""
        func.func private @helper(%a: tensor<16xf32>) -> tensor<16xf32> {
          %0 = arith.addf %a, %a : tensor<16xf32>
          return %0 : tensor<16xf32>
        }
        func.func @k(%p: !xb.ptr<f32>, %c: i1) attributes {xb.kernel} {
          %r = "xb.arange"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
          %s = "xb.splat"(%p) : (!xb.ptr<f32>) -> tensor<16x!xb.ptr<f32>>
          %q = "xb.addptr"(%s, %r) : (tensor<16x!xb.ptr<f32>>, tensor<16xi32>) -> tensor<16x!xb.ptr<f32>>
          %v = "xb.load"(%q) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!xb.ptr<f32>>) -> tensor<16xf32>
          %w = scf.if %c -> (tensor<16xf32>) {
            %x = func.call @helper(%v) : (tensor<16xf32>) -> tensor<16xf32>
            scf.yield %x : tensor<16xf32>
          } else {
            scf.yield %v : tensor<16xf32>
          }
          "xb.store"(%q, %w) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!xb.ptr<f32>>, tensor<16xf32>) -> ()
          return
        }
    """, inline_calls.run)
    check(tmp_path, """
        // CHECK-NOT: func.func private @helper
        // CHECK-LABEL: func.func @k
        // CHECK: scf.if
        // CHECK-NEXT: arith.addf
        // CHECK-NOT: func.call
    """, out)


def test_xb_fold_constants(tmp_path):
    # protects: splat of a constant becomes a dense constant; an all-true mask is dropped
    out = run_pass("""
        func.func @k(%p: !xb.ptr<f32>) attributes {xb.kernel} {
          %c = arith.constant 2.0 : f32
          %t = arith.constant true
          %v = "xb.splat"(%c) : (f32) -> tensor<16xf32>
          %m = "xb.splat"(%t) : (i1) -> tensor<16xi1>
          %r = "xb.arange"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
          %s = "xb.splat"(%p) : (!xb.ptr<f32>) -> tensor<16x!xb.ptr<f32>>
          %q = "xb.addptr"(%s, %r) : (tensor<16x!xb.ptr<f32>>, tensor<16xi32>) -> tensor<16x!xb.ptr<f32>>
          "xb.store"(%q, %v, %m) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x!xb.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> ()
          return
        }
    """, fold_constants.run)
    check(tmp_path, """
        // CHECK: arith.constant dense<2.000000e+00> : tensor<16xf32>
        // CHECK: "xb.store"
        // CHECK-SAME: array<i32: 1, 1, 0>
    """, out)


def test_xb_canonicalize(tmp_path):
    # protects: upstream folds and CSE apply to arith inside kernels; xb ops are kept
    out = run_pass("""
        func.func @k(%p: !xb.ptr<i32>) attributes {xb.kernel} {
          %a = arith.constant 3 : i32
          %b = arith.constant 4 : i32
          %c = arith.addi %a, %b : i32
          %pid = "xb.program_id"() {axis = 0 : i32} : () -> i32
          %d = arith.addi %pid, %c : i32
          %e = arith.addi %pid, %c : i32
          %f = arith.muli %d, %e : i32
          "xb.store"(%p, %f) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!xb.ptr<i32>, i32) -> ()
          return
        }
    """, canonicalize.run)
    check(tmp_path, """
        // CHECK: arith.constant 7 : i32
        // CHECK: "xb.program_id"
        // CHECK: arith.addi
        // CHECK-NOT: arith.addi
        // CHECK: arith.muli
    """, out)


def test_xb_dce(tmp_path):
    # protects: unused pure xb ops and non-volatile loads are erased; stores stay
    out = run_pass("""
        func.func @k(%p: !xb.ptr<f32>) attributes {xb.kernel} {
          %pid = "xb.program_id"() {axis = 0 : i32} : () -> i32
          %unused = "xb.arange"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32>
          %v = "xb.load"(%p) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (!xb.ptr<f32>) -> f32
          %w = "xb.load"(%p) {cache = "", evict = "", volatile = true, operandSegmentSizes = array<i32: 1, 0, 0>} : (!xb.ptr<f32>) -> f32
          %c = arith.constant 1.0 : f32
          "xb.store"(%p, %c) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (!xb.ptr<f32>, f32) -> ()
          return
        }
    """, dce.run)
    check(tmp_path, """
        // CHECK-NOT: xb.program_id
        // CHECK-NOT: xb.arange
        // CHECK: "xb.load"
        // CHECK-SAME: volatile = true
        // CHECK: "xb.store"
    """, out)
    assert out.count('"xb.load"') == 1


def test_xb_record_values(tmp_path):
    # protects: an extra f32 buffer argument, a store of each line's value, the record layout
    md = {"arg_names": ["p"], "arg_types": ["*fp32"]}
    out = run_pass("""
        #l = loc("k.py":3:1)
        func.func @k(%p: !xb.ptr<f32>) attributes {xb.kernel, xb.arg_names = ["p"]} {
          %r = "xb.arange"() {start = 0 : i32, end = 16 : i32} : () -> tensor<16xi32> loc(#l)
          %s = "xb.splat"(%p) : (!xb.ptr<f32>) -> tensor<16x!xb.ptr<f32>> loc(#l)
          %q = "xb.addptr"(%s, %r) : (tensor<16x!xb.ptr<f32>>, tensor<16xi32>) -> tensor<16x!xb.ptr<f32>> loc(#l)
          %v = "xb.load"(%q) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<16x!xb.ptr<f32>>) -> tensor<16xf32> loc("k.py":4:5)
          %e = math.exp %v : tensor<16xf32> loc("k.py":5:5)
          "xb.store"(%q, %e) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<16x!xb.ptr<f32>>, tensor<16xf32>) -> () loc("k.py":6:5)
          return
        }
    """, lambda m: record_values.run(m, md))
    check(tmp_path, """
        // CHECK: func.func @k({{.*}}: !xb.ptr<f32>, {{.*}}: !xb.ptr<f32>)
        // CHECK: "xb.num_programs"
        // CHECK: "xb.load"
        // CHECK: "xb.store"
        // CHECK: math.exp
        // CHECK: "xb.store"
    """, out)
    assert [r["line"] for r in md["records"]] == [4, 5]
    assert md["record_size"] == 32 and md["arg_types"][-1] == "*fp32"


def test_xb_strip_mine(tmp_path):
    # protects: a 64-wide block in 4 chunks of 16: the max in a loop carrying a scalar, then the
    # store in a second loop that reloads its chunk; `arange` becomes arange(0, 16) + chunk * 16
    out = run_pass("""
        func.func @k(%p: !xb.ptr<f32>, %o: !xb.ptr<f32>) attributes {xb.kernel, xb.arg_names = ["p", "o"]} {
          %r = "xb.arange"() {start = 0 : i32, end = 64 : i32} : () -> tensor<64xi32>
          %s = "xb.splat"(%p) : (!xb.ptr<f32>) -> tensor<64x!xb.ptr<f32>>
          %q = "xb.addptr"(%s, %r) : (tensor<64x!xb.ptr<f32>>, tensor<64xi32>) -> tensor<64x!xb.ptr<f32>>
          %v = "xb.load"(%q) {cache = "", evict = "", volatile = false, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<64x!xb.ptr<f32>>) -> tensor<64xf32>
          %m = "xb.reduce"(%v) ({
          }) {axis = 0 : i32, kind = "max", operandSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0, 0, 0, 0, 0>} : (tensor<64xf32>) -> f32
          %b = "xb.splat"(%m) : (f32) -> tensor<64xf32>
          %d = arith.subf %v, %b : tensor<64xf32>
          %t = "xb.splat"(%o) : (!xb.ptr<f32>) -> tensor<64x!xb.ptr<f32>>
          %u = "xb.addptr"(%t, %r) : (tensor<64x!xb.ptr<f32>>, tensor<64xi32>) -> tensor<64x!xb.ptr<f32>>
          "xb.store"(%u, %d) {cache = "", evict = "", operandSegmentSizes = array<i32: 1, 1, 0>} : (tensor<64x!xb.ptr<f32>>, tensor<64xf32>) -> ()
          return
        }
    """, lambda m: strip_mine.run(m, 4))
    check(tmp_path, """
        // CHECK-NOT: tensor<64x
        // CHECK: %[[MAX:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = {{.*}}) -> (f32)
        // CHECK: arith.muli %[[K]], %c16_i32
        // CHECK: "xb.arange"() {end = 16 : i32, start = 0 : i32}
        // CHECK: "xb.load"{{.*}} -> tensor<16xf32>
        // CHECK: "xb.reduce"
        // CHECK-NEXT: kind = "max"
        // CHECK: scf.yield
        // CHECK: scf.for
        // CHECK: "xb.load"{{.*}} -> tensor<16xf32>
        // CHECK: "xb.splat"(%[[MAX]]) : (f32) -> tensor<16xf32>
        // CHECK: "xb.store"
        // CHECK-NOT: tensor<64x
    """, out)


def test_xb_combine_dot_add(tmp_path):
    # protects: `acc += dot(a, b)` of a loop-carried acc is `dot(a, b, acc)` (Triton's combine); a sum with
    # anything else (`dot(a, b) + 1.0`) stays an add
    out = run_pass("""
        func.func @k(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %n: i32) -> (tensor<16x16xf32>,
                     tensor<16x16xf32>) attributes {xb.kernel} {
          %z = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
          %one = arith.constant dense<1.000000e+00> : tensor<16x16xf32>
          %c0 = arith.constant 0 : i32
          %c1 = arith.constant 1 : i32
          %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<16x16xf32>) : i32 {
            %d = "xb.dot"(%a, %b, %z) {input_precision = "ieee", out_dtype = f32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
            %s = arith.addf %acc, %d : tensor<16x16xf32>
            scf.yield %s : tensor<16x16xf32>
          }
          %e = "xb.dot"(%a, %b, %z) {input_precision = "ieee", out_dtype = f32} : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf32>) -> tensor<16x16xf32>
          %t = arith.addf %e, %one : tensor<16x16xf32>
          return %r, %t : tensor<16x16xf32>, tensor<16x16xf32>
        }
    """, combine_dot_add.run)
    check(tmp_path, """
        // CHECK-LABEL: func.func @k
        // CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
        // CHECK-NEXT: %[[D:.*]] = "xb.dot"(%arg0, %arg1, %[[ACC]])
        // CHECK-NEXT: scf.yield %[[D]]
        // CHECK: "xb.dot"
        // CHECK-NEXT: arith.addf
    """, out)
