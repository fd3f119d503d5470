// Types and attributes of many kinds, for the keys: each appears again in
// types_alias.mlir spelled another way (aliases, the generic form, other
// float spellings), and beside values that look alike but differ.
func.func @shapes(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<?x8xf32>,
                  %d: tensor<*xf32>, %e: memref<4xf32>, %f: memref<4xf32, 1>,
                  %g: memref<4x4xf32, strided<[8, 1]>>, %h: vector<4xf32>,
                  %i: vector<[4]xf32>, %j: complex<f64>, %k: tuple<i32, f32>,
                  %l: i32, %m: si32, %n: ui32, %o: i1, %p: index, %q: f16,
                  %r: bf16, %s: tf32, %t: none) -> (tensor<4x8xf32>, i32) {
  return %a, %l : tensor<4x8xf32>, i32
}

func.func @consts() -> (i32, f32, tensor<2xf32>, index) {
  %0 = arith.constant 42 : i32
  %1 = arith.constant 1.0 : f32
  %2 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %3 = arith.constant 3 : index
  return %0, %1, %2, %3 : i32, f32, tensor<2xf32>, index
}

func.func @attrs() attributes {
    a_list = [1 : i32, 2 : i32, "two"], a_dict = {x = "s", y = 1.5 : f64},
    a_map = affine_map<(d0, d1) -> (d1, d0 + 1)>, a_set = affine_set<(d0) : (d0 - 2 >= 0)>,
    a_unit, a_sym = @consts, a_nested = @consts::@inner, a_arr = array<i32: 1, 2, 3>,
    a_bool = true, a_type = tensor<4x8xf32>, a_str = "line\nbreak",
    a_nan = 0x7FC00000 : f32, a_big = 123456789012345678901234567890 : i128,
    a_llvm = #llvm.linkage<internal>, a_dense = dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>,
    a_splat = dense<0.5> : vector<4xf32>, a_sparse = sparse<[[0, 0]], [5]> : tensor<2x2xi32>} {
  return
}

llvm.func @llvm_types(%p: !llvm.ptr, %q: !llvm.ptr<1>, %s: !llvm.struct<(i32, f64)>,
                      %t: !llvm.struct<"named", (i32, ptr)>, %a: !llvm.array<4 x i8>,
                      %v: vector<2xi64>) -> !llvm.struct<(i32, f64)> {
  llvm.return %s : !llvm.struct<(i32, f64)>
}
