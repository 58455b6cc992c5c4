//===- Passes.td - linattn dialect passes ------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_TD
#define TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LinAttnDecompose : Pass<"linattn-decompose"> {
  let summary = "Rewrite linattn.attention into the chunk ops";
  let description = [{
    Every back end lowers the same small set of ops: `feature_map`,
    `chunk_reduce`, `chunk_mean`, `scan`, `state_transform` and
    `chunk_apply`. This pass rewrites the general one-op form,
    `linattn.attention`, into them:

    - `chunk_strict` / `chunk_inclusive` with chunk size C: `chunk_reduce`
      over chunks of C tokens, an `additive` (or, with a decay, `decayed`)
      `scan` that is `exclusive` / `inclusive`, and `chunk_apply`;
    - `token_causal` without decay: 64-token tiles, an exclusive additive
      scan of the tile states, and `chunk_apply` with the intra-tile term,
      which keeps the token mask exact; with a per-token decay, one token
      per chunk and a decayed inclusive scan;
    - `full`: one `chunk_reduce` and one `chunk_apply` without a chunk size
      (the whole sequence is one chunk), the initial state added by a
      one-chunk inclusive scan.

    `linattn-to-linalg` and `linattn-to-onnx` include these patterns, so
    running this pass first only makes the step visible. The rewrite is
    exact: each form computes the same sums in another order.

    ```mlir
    %o = linattn.attention %q, %k, %v mask = chunk_strict chunk_size = 64
        : tensor<?x4x?x32xf32>, tensor<?x4x?x32xf32>, tensor<?x4x?x16xf32>
        -> tensor<?x4x?x16xf32>
    // becomes
    %g = linattn.chunk_reduce %k, %v chunk_size = 64 : ... -> tensor<?x4x?x32x16xf32>
    %s = linattn.scan %g kind = additive mode = exclusive : ...
    %o = linattn.chunk_apply %q, %s chunk_size = 64 : ... -> tensor<?x4x?x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linattn::LinAttnDialect"];
}

#endif // TTT_DIALECT_LINATTN_TRANSFORMS_PASSES_TD
