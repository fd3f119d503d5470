// Declares @ext with an i64 where def.mlir defines it with an i32: each
// module verifies alone, and nothing between them is checked.
func.func private @ext(i64) -> i64
func.func private @scale(tensor<4x8xf32>, f32) -> tensor<4x8xf32>

func.func @run(%x: i64) -> i64 {
  %r = func.call @ext(%x) : (i64) -> i64
  return %r : i64
}
