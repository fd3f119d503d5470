// Three modules in one file, for --split-input-file.
func.func @one(%a: i32) -> i32 {
  return %a : i32
}

// -----

func.func @two(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %a : tensor<4x8xf32>
}

// -----

func.func private @ext(i32) -> i32
