// Declares @count with an i32 length: llvm_def.mlir defines it with i64.
llvm.func @count(!llvm.ptr, i32) -> i32

llvm.func @caller(%p: !llvm.ptr) -> i32 {
  %n = llvm.mlir.constant(16 : i32) : i32
  %r = llvm.call @count(%p, %n) : (!llvm.ptr, i32) -> i32
  llvm.return %r : i32
}

// An internal function of the same name as one in llvm_def.mlir, another type.
llvm.func internal @private_count(%n: i32) -> i32 {
  llvm.return %n : i32
}
