//===- ONNXTypes.td - onnx value types ---------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ONNX tensors are builtin tensor types; these are the ONNX value types that
// builtin MLIR has no counterpart for.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXTYPES_TD
#define TTT_DIALECT_ONNX_IR_ONNXTYPES_TD

include "ttt/Dialect/ONNX/IR/ONNXBase.td"

def ONNX_UnknownType : ONNX_Type<"Unknown", "unknown"> {
  let summary = "An ONNX value whose type is not known";
  let description = [{
    The type of a value that neither the model nor ONNX shape inference
    gives a type to, typically an output of an op from a custom domain. It
    is compatible with every other type (see `onnx.yield`).

    ```mlir
    %y = onnx.node "MyOp"(%x) domain "com.example" {outputs = ["y"]}
        : (tensor<4xf32>) -> !onnx.unknown
    ```
  }];
}

def ONNX_SequenceType : ONNX_Type<"Sequence", "seq"> {
  let summary = "An ONNX sequence of values of one type";
  let description = [{
    `!onnx.seq<T>` is ONNX's `sequence(T)`, e.g. the result of
    `SplitToSequence`: `!onnx.seq<tensor<*xf32>>`.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

def ONNX_OptionalType : ONNX_Type<"Optional", "opt"> {
  let summary = "An ONNX optional value";
  let description = [{
    `!onnx.opt<T>` is ONNX's `optional(T)` (opset 15 and later), e.g. the
    result of `Optional`: `!onnx.opt<tensor<2xf32>>`.
  }];
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}

#endif // TTT_DIALECT_ONNX_IR_ONNXTYPES_TD
