// The values of types.mlir spelled otherwise: the same printed forms, so
// the same handles.
!T48 = tensor<4x8xf32>
!S = !llvm.struct<(i32, f64)>
#M = affine_map<(d0, d1) -> (d1, d0 + 1)>

"func.func"() <{function_type = (!T48, i32) -> (!T48, i32), sym_name = "aliased"}> ({
^bb0(%a: !T48, %b: i32):
  "func.return"(%a, %b) : (!T48, i32) -> ()
}) : () -> ()

func.func @consts2() -> (i32, f32, f32) {
  %0 = arith.constant 0x2A : i32
  %1 = arith.constant 0x3F800000 : f32
  %2 = arith.constant 1.000000e+00 : f32
  return %0, %1, %2 : i32, f32, f32
}

func.func @attrs2() attributes {a_map = #M, a_dict = {y = 1.5 : f64, x = "s"},
                                a_type = !T48, a_list = [1 : i32, 2 : i32, "two"]} {
  return
}

llvm.func @llvm_alias(%s: !S) -> !S {
  llvm.return %s : !S
}
