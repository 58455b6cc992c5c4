//===- ONNXBase.td - onnx dialect definition ---------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_ONNX_IR_ONNXBASE_TD
#define TTT_DIALECT_ONNX_IR_ONNXBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::mlir::ttt::onnx";
  let summary = "An ONNX model, node for node, as MLIR";
  let description = [{
    The `onnx` dialect holds an imported ONNX model faithfully enough to
    write it back unchanged: every node (known or not) is one generic
    `onnx.node` that keeps its op type, domain, name, output names and
    attributes; subgraph attributes (`Loop`, `Scan`, `If` bodies) are regions
    of the node; initializers are `onnx.initializer` ops; the main graph is an
    `onnx.graph` whose arguments and results carry the ONNX input and output
    names; model metadata (IR version, opset imports, producer, doc string,
    metadata properties) and model-local functions (kept verbatim, see
    `#onnx.function`) are `onnx.*` attributes of the module.

    SSA values have the types ONNX shape inference found: ranked tensors
    where the rank is known (`?` for unknown or symbolic dimensions), unranked
    tensors where only the element type is known, `!onnx.unknown` otherwise.

    ```mlir
    module attributes {onnx.ir_version = 8 : i64,
                       onnx.opset_import = [#onnx.opset<"", 17>]} {
      onnx.graph @mlp(%X: tensor<?x4xf32> {onnx.name = "X",
                                           onnx.dim_params = ["batch", ""]})
          -> (tensor<?x8xf32> {onnx.name = "Y", onnx.dim_params = ["batch", ""]}) {
        %W = onnx.initializer "W" dense<0.5> : tensor<4x8xf32>
        %h = onnx.node "MatMul"(%X, %W) {node_name = "mm", outputs = ["h"]}
            : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
        %Y = onnx.node "Relu"(%h) {node_name = "relu", outputs = ["Y"]}
            : (tensor<?x8xf32>) -> tensor<?x8xf32>
        onnx.yield %Y : tensor<?x8xf32>
      }
    }
    ```

    The reader and writer (`lib/Target/ONNX`) translate between this dialect
    and `ModelProto`; the dialect itself knows nothing of protobuf.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes and types; they live in their own files.
    void registerAttributes();
    void registerTypes();

    // Names of the discardable attributes the dialect gives meaning to.
    static constexpr ::llvm::StringLiteral kIrVersion = "onnx.ir_version";
    static constexpr ::llvm::StringLiteral kOpsetImport = "onnx.opset_import";
    static constexpr ::llvm::StringLiteral kProducerName = "onnx.producer_name";
    static constexpr ::llvm::StringLiteral kProducerVersion =
        "onnx.producer_version";
    static constexpr ::llvm::StringLiteral kModelDomain = "onnx.domain";
    static constexpr ::llvm::StringLiteral kModelVersion = "onnx.model_version";
    static constexpr ::llvm::StringLiteral kDocString = "onnx.doc_string";
    static constexpr ::llvm::StringLiteral kMetadataProps =
        "onnx.metadata_props";
    static constexpr ::llvm::StringLiteral kFunctions = "onnx.functions";
    static constexpr ::llvm::StringLiteral kName = "onnx.name";
    static constexpr ::llvm::StringLiteral kDimParams = "onnx.dim_params";
    static constexpr ::llvm::StringLiteral kDefault = "onnx.default";
  }];
}

class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, traits>;

class ONNX_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<ONNX_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class ONNX_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<ONNX_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // TTT_DIALECT_ONNX_IR_ONNXBASE_TD
