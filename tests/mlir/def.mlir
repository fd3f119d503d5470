// The definitions: @ext takes and gives an i32; @scale works on tensors.
// Other modules declare them (use_good.mlir agrees, use_bad.mlir does not).
func.func @ext(%a: i32) -> i32 {
  %c = arith.constant 7 : i32
  %r = arith.muli %a, %c : i32
  return %r : i32
}

func.func @scale(%t: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf32> {
  return %t : tensor<4x8xf32>
}

// Local to this module: another module may have its own.
func.func private @local_helper(%a: i32) -> i32 {
  return %a : i32
}
