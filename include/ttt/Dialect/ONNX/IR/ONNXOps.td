//===- ONNXOps.td - onnx graph, node and initializer ops ---*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXOPS_TD
#define TTT_DIALECT_ONNX_IR_ONNXOPS_TD

include "ttt/Dialect/ONNX/IR/ONNXBase.td"
include "ttt/Dialect/ONNX/IR/ONNXAttrs.td"
include "ttt/Dialect/ONNX/IR/ONNXTypes.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// onnx.graph
//===----------------------------------------------------------------------===//

def ONNX_GraphOp : ONNX_Op<"graph", [
    FunctionOpInterface, IsolatedFromAbove, SingleBlock,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>
  ]> {
  let summary = "The main graph of an ONNX model";
  let description = [{
    The model's `GraphProto`: its arguments are the graph inputs, its results
    the graph outputs (yielded by the `onnx.yield` that ends the body), in
    ONNX order. Each argument and result carries its ONNX name as
    `onnx.name`, and, where the model declares symbolic dimensions, their
    names as `onnx.dim_params` (one string per dimension, `""` for a dimension
    that is not symbolic). An input that also has an initializer (an input
    with a default value) carries the initializer as `onnx.default`.

    The declared types are kept as they are in the model: a result type may
    be less precise than the type of the value yielded for it.

    ```mlir
    onnx.graph @main_graph(%X: tensor<?x4xf32> {onnx.name = "X",
                                                onnx.dim_params = ["N", ""]})
        -> (tensor<?x4xf32> {onnx.name = "Y"}) {
      %Y = onnx.node "Relu"(%X) {outputs = ["Y"]}
          : (tensor<?x4xf32>) -> tensor<?x4xf32>
      onnx.yield %Y : tensor<?x4xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       OptionalAttr<StrAttr>:$doc_string);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }

    /// The ONNX name of input `index` (empty if it has none).
    ::llvm::StringRef getInputName(unsigned index);
    /// The ONNX name of output `index` (empty if it has none).
    ::llvm::StringRef getOutputName(unsigned index);
  }];
}

//===----------------------------------------------------------------------===//
// onnx.node
//===----------------------------------------------------------------------===//

def ONNX_NodeOp : ONNX_Op<"node", [
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmResultNames", "getAsmBlockArgumentNames"]>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>
  ]> {
  let summary = "One ONNX node, of any op type and domain";
  let description = [{
    A `NodeProto`, kept whole: `op_type` and `domain` (`""` is the default
    ONNX domain), the node name (`node_name`), the names of its outputs
    (`outputs`, one per result; `""` for an omitted optional output, whose
    result has type `none`), the `doc_string`, and its attributes (`attrs`).
    An omitted optional input is an operand defined by `onnx.none`.

    Attributes map one-to-one to ONNX attribute kinds: `INT` is an `i64`
    integer, `FLOAT` an `f32` float, `STRING` a string, `TENSOR` an elements
    attribute (`dense<...>` or `dense_resource<...>`), `INTS`
    `array<i64: ...>`, `FLOATS` `array<f32: ...>`, `STRINGS` an array of
    strings, `TENSORS` an array of elements attributes, `GRAPH` a
    `#onnx.graph` that refers to one of the node's regions and `GRAPHS` an
    array of them. Every region is referred to by exactly one `#onnx.graph`.
    A region may use values defined outside of it, as an ONNX subgraph may
    use names of its enclosing graphs.

    For the control-flow ops of the default domain the verifier checks the
    subgraph signatures: a `Loop` body takes the iteration number, the
    condition and the loop-carried values and yields the condition, the
    loop-carried values and the scan outputs; a `Scan` body takes the state
    and scan inputs and yields the state and scan outputs; both `If`
    branches yield one value per result.

    ```mlir
    %h = onnx.node "Gemm"(%x, %w, %b) attrs {transB = 1 : i64}
        {node_name = "fc1", outputs = ["h"]}
        : (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %y = onnx.node "Scale"(%h) domain "com.example"
        attrs {factor = 2.000000e+00 : f32} {outputs = ["y"]}
        : (tensor<?x8xf32>) -> !onnx.unknown
    ```
  }];
  let arguments = (ins StrAttr:$op_type,
                       DefaultValuedStrAttr<StrAttr, "">:$domain,
                       OptionalAttr<DictionaryAttr>:$attrs,
                       OptionalAttr<StrAttr>:$node_name,
                       OptionalAttr<StrArrayAttr>:$outputs,
                       OptionalAttr<StrAttr>:$doc_string,
                       Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$subgraphs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` (`domain` $domain^)? (`attrs` $attrs^)?
    attr-dict `:` functional-type($inputs, $results)
    (`graphs` $subgraphs^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// True for the default ONNX domain ("" or "ai.onnx").
    bool isDefaultDomain();
    /// The ONNX name of result `index` (empty if it has none).
    ::llvm::StringRef getOutputName(unsigned index);
    /// The attribute named `name`, or null.
    ::mlir::Attribute getONNXAttr(::llvm::StringRef name);
    /// The `#onnx.graph` of region `index`, or null.
    ::mlir::ttt::onnx::GraphAttr getGraphAttrOfRegion(unsigned index);
    /// Checks the subgraph signatures of Loop, Scan and If; returns why they
    /// do not match the node, or an empty string. The importer reports the
    /// same reason in its own words around it.
    std::string getSubgraphSignatureError();
  }];
}

//===----------------------------------------------------------------------===//
// onnx.initializer
//===----------------------------------------------------------------------===//

def ONNX_InitializerOp : ONNX_Op<"initializer", [
    Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
    TypesMatchWith<"the result type is the type of the value",
                   "value", "result",
                   "$_self">
  ]> {
  let summary = "A named constant tensor of a graph";
  let description = [{
    A `TensorProto` of `GraphProto.initializer`, with its name. Small values
    are `dense<...>` attributes; large ones are `dense_resource<...>` blobs
    (printed in hex at the end of the module, or kept as a file mapping when
    they came from ONNX external data). `external_data` records that the
    model stored the tensor outside the `.onnx` file, so that the writer
    does the same.

    ```mlir
    %W = onnx.initializer "W" dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %E = onnx.initializer "E" dense_resource<E> : tensor<1024x1024xf32>
        {external_data}
    ```
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value,
                       UnitAttr:$external_data);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$name $value attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// onnx.none
//===----------------------------------------------------------------------===//

def ONNX_NoneOp : ONNX_Op<"none", [
    Pure, DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>
  ]> {
  let summary = "An omitted optional input";
  let description = [{
    Stands for the empty name `""` that ONNX writes for an optional input
    that is not given, so that later inputs keep their positions.

    ```mlir
    %none = onnx.none
    %y = onnx.node "Resize"(%x, %none, %scales) {outputs = ["y"]}
        : (tensor<1x1x2x2xf32>, none, tensor<4xf32>) -> tensor<1x1x4x4xf32>
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// onnx.yield
//===----------------------------------------------------------------------===//

def ONNX_YieldOp : ONNX_Op<"yield", [
    Pure, Terminator, ReturnLike, ParentOneOf<["GraphOp", "NodeOp"]>
  ]> {
  let summary = "The outputs of a graph or subgraph";
  let description = [{
    Ends an `onnx.graph` (its operands are the graph outputs, one per result
    of the graph, each of a type compatible with the declared one) or a
    subgraph region of an `onnx.node` (one operand per output named by the
    region's `#onnx.graph`). Types are compatible when they are equal, when
    either is `!onnx.unknown`, or when both are tensors of one element type
    whose shapes do not contradict each other.

    ```mlir
    onnx.yield %cond, %state : tensor<i1>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

#endif // TTT_DIALECT_ONNX_IR_ONNXOPS_TD
