//===- LinAttnBase.td - linattn dialect definition ---------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_IR_LINATTNBASE_TD
#define TTT_DIALECT_LINATTN_IR_LINATTNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def LinAttn_Dialect : Dialect {
  let name = "linattn";
  let cppNamespace = "::mlir::linattn";
  let summary = "Linear attention and chunk-level state scans";
  let description = [{
    The `linattn` dialect is what a TTT layer becomes once it is proven to be
    linear attention (`docs/Theory.md` sections 3-4): feature maps that make
    q^ and k^, the one-op form

        o = q^ (S0 + sum over mask(t) of decay * k^^T v^)

    with token-causal, chunk-strict, chunk-inclusive or full masks, and its
    chunked decomposition into per-chunk state contributions, chunk-state
    scans (additive, scalar-decayed, affine), per-chunk state transforms
    (Newton-Schulz) and per-chunk applies.

    Layout: one stream per (batch, head); tokens `[B, H, T, D]`, per-chunk
    states `[B, H, N, F, Dv]` with `N = ceil(T / chunk_size)`, initial states
    `[H, F, Dv]` (shared over the batch) or `[B, H, F, Dv]`.
  }];
}

class LinAttn_Op<string mnemonic, list<Trait> traits = []>
    : Op<LinAttn_Dialect, mnemonic, traits>;

#endif // TTT_DIALECT_LINATTN_IR_LINATTNBASE_TD
