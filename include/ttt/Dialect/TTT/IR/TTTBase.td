//===- TTTBase.td - ttt dialect definition -----------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTBASE_TD
#define TTT_DIALECT_TTT_IR_TTTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def TTT_Dialect : Dialect {
  let name = "ttt";
  let cppNamespace = "::mlir::ttt";
  let summary = "Whole test-time-training layers with key-value binding";
  let description = [{
    The `ttt` dialect represents a test-time-training layer with key-value
    binding (TTT-KVB: LaCT, ViT^3, TTT-Linear/MLP, plain linear or MLP fast
    weights) as one op whose attributes read like the paper's description of
    the layer: which fast-weight network, which weights are trained, which
    inner loss, how the update is post-processed (momentum, Muon, weight
    normalization, clipping, ascent) and how the sequence is scheduled
    (chunk size, update/apply order, inner steps).

    Analyses read these attributes to decide whether a layer is secretly
    linear attention; `ttt-lower-recurrent` gives every verified op its exact
    reference semantics, which `docs/Semantics.md` states in full.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes; lives next to their storage classes.
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

class TTT_Op<string mnemonic, list<Trait> traits = []>
    : Op<TTT_Dialect, mnemonic, traits>;

class TTT_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TTT_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Attribute parameters shared by the ttt attributes.
//===----------------------------------------------------------------------===//

// A double printed in MLIR's round-trippable float syntax.
class TTT_F64Parameter<string desc, string default>
    : APFloatParameter<desc> {
  let parser = [{ ::mlir::ttt::parseF64Param($_parser) }];
  let printer = [{ ::mlir::ttt::printF64Param($_printer, $_self) }];
  let defaultValue = "::llvm::APFloat(" # default # ")";
}

// A square-bracketed list of doubles: `[1.0, -2.5]`.
class TTT_F64ListParameter<string desc>
    : AttrParameter<"::mlir::DenseF64ArrayAttr", desc> {
  let parser = [{ ::mlir::ttt::parseF64ListParam($_parser) }];
  let printer = [{ ::mlir::ttt::printF64ListParam($_printer, $_self) }];
}

// A square-bracketed list of integers: `[0, 1, 2]`.
class TTT_I64ListParameter<string desc>
    : ArrayRefParameter<"int64_t", desc> {
  let parser = [{ ::mlir::ttt::parseI64ListParam($_parser) }];
  let printer = [{ ::mlir::ttt::printI64ListParam($_printer, $_self) }];
}

// An enum parameter that may be omitted, taking `default`.
class TTT_DefaultEnumParameter<EnumInfo enumInfo, string default>
    : EnumParameter<enumInfo> {
  let defaultValue = default;
}

#endif // TTT_DIALECT_TTT_IR_TTTBASE_TD
