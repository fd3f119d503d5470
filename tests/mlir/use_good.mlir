// Declares what def.mlir defines, with the same types.
func.func private @ext(i32) -> i32
func.func private @scale(tensor<4x8xf32>, f32) -> tensor<4x8xf32>

func.func @main(%x: i32) -> i32 {
  %r = func.call @ext(%x) : (i32) -> i32
  return %r : i32
}

func.func private @local_helper(%a: i64) -> i64 {
  return %a : i64
}
