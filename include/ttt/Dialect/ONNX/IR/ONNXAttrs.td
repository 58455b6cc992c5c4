//===- ONNXAttrs.td - onnx attributes ----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXATTRS_TD
#define TTT_DIALECT_ONNX_IR_ONNXATTRS_TD

include "ttt/Dialect/ONNX/IR/ONNXBase.td"

def ONNX_OpsetAttr : ONNX_Attr<"Opset", "opset"> {
  let summary = "One opset import of a model: a domain and its version";
  let description = [{
    An entry of `ModelProto.opset_import`. The default domain is spelled as
    in the model, usually `""` (sometimes `"ai.onnx"`).

    ```mlir
    module attributes {onnx.opset_import = [#onnx.opset<"", 17>,
                                            #onnx.opset<"com.example", 1>]}
    ```
  }];
  let parameters = (ins StringRefParameter<"the operator set domain">:$domain,
                        "int64_t":$version);
  let assemblyFormat = "`<` $domain `,` $version `>`";
  let genVerifyDecl = 1;
}

def ONNX_GraphAttr : ONNX_Attr<"Graph", "graph"> {
  let summary = "A graph-valued node attribute, held in a region of the node";
  let description = [{
    Attributes cannot hold regions, so a `GRAPH` attribute of an ONNX node
    (the body of `Loop` or `Scan`, the branches of `If`) is the node's region
    number `region`; this attribute names the attribute's graph and its
    inputs (the region's block arguments, in order) and outputs (the
    operands of its `onnx.yield`, in order). A `GRAPHS` attribute is an
    array of these.

    ```mlir
    %y = onnx.node "If"(%c)
        attrs {else_branch = #onnx.graph<region = 1, name = "else",
                                         inputs = [], outputs = ["b"]>,
               then_branch = #onnx.graph<region = 0, name = "then",
                                         inputs = [], outputs = ["a"]>}
        {outputs = ["y"]} : (tensor<i1>) -> tensor<2xf32> graphs {
      %a = onnx.node "Constant"() attrs {value = dense<1.0> : tensor<2xf32>}
          {outputs = ["a"]} : () -> tensor<2xf32>
      onnx.yield %a : tensor<2xf32>
    }, {
      %b = onnx.node "Constant"() attrs {value = dense<2.0> : tensor<2xf32>}
          {outputs = ["b"]} : () -> tensor<2xf32>
      onnx.yield %b : tensor<2xf32>
    }
    ```
  }];
  let parameters = (ins "unsigned":$region,
                        "::mlir::StringAttr":$name,
                        "::mlir::ArrayAttr":$inputs,
                        "::mlir::ArrayAttr":$outputs);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def ONNX_FunctionAttr : ONNX_Attr<"Function", "function"> {
  let summary = "A model-local function, kept as the model stores it";
  let description = [{
    An entry of `ModelProto.functions` (IR version 8 and later): the
    function's domain and name, by which nodes call it, and the serialized
    `FunctionProto`, kept byte for byte. ttt neither reads nor changes
    function bodies; the module attribute `onnx.functions` lists them so that
    the writer puts them back.

    ```mlir
    module attributes {onnx.functions = [
        #onnx.function<"com.local", "Gelu", "\0A\04Gelu\12...">]}
    ```
  }];
  let parameters = (ins StringRefParameter<"the function's domain">:$domain,
                        StringRefParameter<"the function's name">:$name,
                        StringRefParameter<"the serialized FunctionProto">:$proto);
  let assemblyFormat = "`<` $domain `,` $name `,` $proto `>`";
}

#endif // TTT_DIALECT_ONNX_IR_ONNXATTRS_TD
