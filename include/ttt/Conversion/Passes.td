//===- Passes.td - ttt conversion passes -------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_PASSES_TD
#define TTT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TTTLowerRecurrent : Pass<"ttt-lower-recurrent"> {
  let summary = "Lower every ttt layer to its exact sequential reference loop";
  let description = [{
    Replaces each `ttt.kvb_layer` and `ttt.dwconv_layer` with upstream
    linalg/scf/tensor/arith/math ops that compute exactly what
    `docs/Semantics.md` specifies, the way the reference models do: for each
    (batch, head) stream (an `scf.forall`), a sequential `scf.for` over
    chunks that applies the fast weights to the chunk's queries, takes the
    hand-derived loss gradient of every trained weight on the chunk's keys and
    values, and updates the weights (clipping, sign, momentum, Newton-Schulz,
    weight normalization, inner steps). The `causal` order is lowered in its
    dual form (per-token weights from chunk-start gradients). A trailing
    partial chunk is handled; batch, heads and sequence length may be dynamic.
    16-bit layers are computed in f32 and rounded at the end.

    This lowering is the semantic oracle of every rewrite and the baseline of
    every benchmark; it makes no attempt to be parallel over chunks.

    Example:

    ```mlir
    %o = ttt.kvb_layer %q, %k, %v : ... weights(%w : tensor<2x16x16xf32>)
        model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
        schedule = #ttt.schedule<kind = chunked, size = 64> -> tensor<?x2x?x16xf32>
    ```

    becomes

    ```mlir
    %r = scf.forall (%b, %h) in (%B, 2) shared_outs(%out = %init) -> (...) {
      %o = scf.for %c = %c0 to %chunks step %c1 iter_args(%w0 = %w, %acc = %o0) {
        ... linalg.generic (apply, gradient, update) ...
      }
      scf.forall.in_parallel { tensor.parallel_insert_slice ... }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LinAttnToLinalg : Pass<"linattn-to-linalg"> {
  let summary = "Lower linattn ops to linalg on tensors (chunk-parallel form)";
  let description = [{
    Lowers every linattn op to linalg/tensor/scf ops over whole
    `[B, H, ...]` tensors: feature maps and applies are batched contractions
    over all tokens, per-chunk contributions and Newton-Schulz are batched
    over all chunks, and the chunk-state scan is a loop over chunks that is
    vectorized over streams and state entries. `linattn.attention` is first
    decomposed into chunk ops (a token-causal mask is kept exactly with
    64-token tiles and the intra-tile term).

    With `scan=parallel` (the default) additive and decayed scans run as a
    Hillis-Steele scan over chunks (log2 N batched rounds combining pairs
    `(a, b)`; decays are multiplied, never divided); `scan=sequential` and
    affine scans loop over chunks. `scan=per-entry` writes additive and
    decayed scans as one `scf.forall` over (batch, head, row, column) whose
    body loops over the chunks with the entry's state in a scalar: the
    sequential loop's arithmetic, and on a GPU one kernel with a thread per
    state entry (ttt-to-gpu's choice).

    Example (`scan=per-entry`, an additive inclusive scan):
    ```mlir
    %s = linattn.scan %g {kind = #linattn<scan_kind additive>,
                          mode = #linattn<scan_mode inclusive>} : ...
    // becomes
    %r = scf.forall (%b, %h, %i, %j) in (%B, %H, %F, %E)
        shared_outs(%out = %empty) -> (tensor<?x?x?x?x?xf32>) {
      %col = tensor.extract_slice %out[%b, %h, 0, %i, %j] [1, 1, %N, 1, 1] [1, 1, 1, 1, 1]
      %last:2 = scf.for %n = %c0 to %N step %c1
          iter_args(%acc = %zero, %c = %col) -> (f32, tensor<?xf32>) {
        %x = tensor.extract %g[%b, %h, %n, %i, %j] : tensor<?x?x?x?x?xf32>
        %next = arith.addf %acc, %x : f32
        %c2 = tensor.insert %next into %c[%n] : tensor<?xf32>
        scf.yield %next, %c2 : f32, tensor<?xf32>
      }
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %last#1 into %out[%b, %h, 0, %i, %j] [1, 1, %N, 1, 1] [1, 1, 1, 1, 1]
      }
    }
    ```
  }];
  let options = [
    Option<"scan", "scan", "std::string", /*default=*/"\"parallel\"",
           "How to scan chunk states: parallel (log-depth), sequential, or "
           "per-entry (a loop over chunks per state entry)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TTTFuseElementwise : Pass<"ttt-fuse-elementwise"> {
  let summary = "Fuse chains of elementwise linalg ops, never into a contraction";
  let description = [{
    Upstream's elementwise fusion (`linalg-fuse-elementwise-ops`) restricted
    to consumers without reduction loops, and to producers with one user:
    each chain of maps becomes one loop nest with no temporaries between
    its ops, while every contraction keeps its plain `acc + a * b` body and
    stays a GEMM for `ttt-contractions-to-blas`. A negated operand of a
    zero-initialized contraction moves to the contraction's result when the
    result is the smaller tensor (`k^T (-v)` over a chunk of tokens becomes
    `-(k^T v)`, a state-sized negation that then fuses into the update).
    Fusion reorders no arithmetic and negation is exact, so results do not
    change.

    Example: `ttt-opt f.mlir --convert-elementwise-to-linalg
    --ttt-fuse-elementwise`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TTTDuplicateFills : Pass<"ttt-duplicate-fills"> {
  let summary = "Give every user of a filled empty tensor a fill of its own";
  let description = [{
    CSE merges equal `linalg.fill`s of `tensor.empty` (the zero
    accumulators of contractions, say) into one value with many users;
    bufferization then copies one shared buffer of zeros into each user's.
    This pass clones the fill (and its empty tensor) for every user but the
    first, so every init is written in place, and a GEMM call can replace
    its fill (`ttt-contractions-to-blas`). Run right before bufferization.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TTTVectorizableMath : Pass<"ttt-vectorizable-math"> {
  let summary = "Compute f32 exp, expm1 and tanh by MLIR's polynomial approximations";
  let description = [{
    `math.exp` and its kin lower to calls of libm's scalar functions, and a
    loop with a call in it is not vectorized: the SiLU of every hidden unit
    of a LaCT layer (`x / (1 + exp(-x))`) was a tenth of its time in scalar
    `expf`. This pass rewrites f32 `math.exp`, `math.expm1` and `math.tanh`
    into MLIR's polynomial approximations (range reduction and a polynomial
    in plain arith ops, the ones IREE's CPU code generation uses), which
    LLVM vectorizes with the rest of the loop. They agree with libm to a few
    units in the last place (`test_vectorizable_math.py` measures the
    largest difference over the f32 range that does not overflow). Other
    element types and other functions are left to libm.

    Example:

    ```mlir
    %e = math.exp %x : f32
    ```

    becomes a `math.fma` chain, `arith` bit operations on the exponent and
    an `arith.select` for the out-of-range arguments.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def TTTDropSelfCopies : Pass<"ttt-drop-self-copies"> {
  let summary = "Erase memref.copy ops whose source is their target";
  let description = [{
    After bufferization, a chunk's output written in place in the stream's
    buffer is still copied onto its own view, and a loop's result onto the
    buffer it already is; once canonicalization and CSE make source and
    target one value, `memref.copy %a, %a` changes nothing and this pass
    erases it (a memmove of a whole stream per layer call otherwise).

    Example:

    ```mlir
    %v = memref.subview %buf[%i, 0] [512, 128] [1, 1] : ...
    memref.copy %v, %v : memref<512x128xf32, strided<[128, 1], offset: ?>> to ...
    ```

    loses the copy and keeps the subview.
  }];
}

def TTTExpandRunTimeReshapes : Pass<"ttt-expand-run-time-reshapes"> {
  let summary = "Write memref.expand_shape ops that split a run-time dimension "
                "into several run-time dimensions as reinterpret casts";
  let description = [{
    `expand-strided-metadata` derives an expanded dimension of run-time size
    from the source's size divided by the group's other sizes, which it
    cannot do when a group has two or more run-time sizes (MLIR 22 then
    crashes). The sizes are known: they are the op's `output_shape`. This
    pass writes such an expand as the view it is: the source's base buffer
    and offset, the sizes of `output_shape`, and in each group the source
    dimension's stride for the innermost dimension, multiplied outwards by
    the sizes inside it. Every other expand is left to
    `expand-strided-metadata`.

    Example:

    ```mlir
    %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %h, 8]
        : memref<?x8xf32> into memref<?x?x8xf32>
    ```

    becomes

    ```mlir
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %a
        : memref<?x8xf32> -> memref<f32>, index, index, index, index, index
    %s0 = arith.muli %h, %c8 : index
    %e = memref.reinterpret_cast %base to offset: [0],
        sizes: [%b, %h, 8], strides: [%s0, 8, 1]
        : memref<f32> to memref<?x?x8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TTTStridedCopiesToLinalg : Pass<"ttt-strided-copies-to-linalg"> {
  let summary = "Turn memref.copy ops that would not lower to a memcpy into linalg.copy";
  let description = [{
    LLVM lowering turns `memref.copy` into a memcpy only when both buffers
    are contiguous with a static shape (or have an identity layout); every
    other copy becomes a call of the runner utilities' `memrefCopy`, which
    moves one element at a time through a generic index walk. This pass
    makes those copies `linalg.copy` ops, whose loops (from
    `convert-linalg-to-loops`) LLVM vectorizes along the innermost,
    unit-stride dimension. Copies that lower to a memcpy are kept.

    Example: a chunk state written into its slot of the stacked states,

    ```mlir
    %slot = memref.subview %states[0, 0, %c, 0, 0] [1, 4, 1, 128, 128] [1, 1, 1, 1, 1]
        : memref<1x4x16x128x128xf32> to memref<1x4x128x128xf32, strided<[262144, 65536, 128, 1], offset: ?>>
    memref.copy %state, %slot : memref<1x4x128x128xf32> to memref<1x4x128x128xf32, strided<[262144, 65536, 128, 1], offset: ?>>
    ```

    becomes `linalg.copy ins(%state : ...) outs(%slot : ...)`.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TTTContractionsToBLAS : Pass<"ttt-contractions-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call a BLAS GEMM for every fp32 contraction on buffers";
  let description = [{
    Rewrites each `linalg.generic` on f32 memrefs that computes
    `C += A * B` (one reduction loop k, body `acc + a * b`, C indexed by
    every other loop) into calls of `ttt_sgemm`, one per point of the batch
    loops (the loops that are neither a row of A, a column of B, nor k),
    which run as an `scf.parallel`. The calls sit in an `scf.if` on
    `ttt_blas_available()`; the other branch keeps the original op, so a
    program runs its own loops on a machine without a BLAS library.
    Operands are passed as addresses, offsets and strides; the runtime
    (`libttt_cpu_runtime`, linked into ttt-run and the Python package) calls
    `cblas_sgemm` for row- or column-major views and loops otherwise; a
    product `C = A A^T` of a matrix with its own transpose (B reads A's
    memory transposed) that overwrites a row-major C runs as `cblas_ssyrk`,
    one triangle at about half the work, copied to the other. It loads
    Debian's OpenBLAS on first use, or `$TTT_BLAS_LIBRARY` (empty: none).

    Named contractions (`linalg.matmul`, `linalg.batch_matmul`, ...) are
    generalized first. A `linalg.fill` of C with zero right before the op
    (only pure ops in between) moves into the fallback branch, and the GEMM
    overwrites C instead of adding to it.

    Example:
    ```mlir
    linalg.generic {indexing_maps = [(i, k, j) -> (i, k), (i, k, j) -> (k, j),
                                     (i, k, j) -> (i, j)], ...}
        ins(%a, %b : memref<64x32xf32>, memref<32x16xf32>)
        outs(%c : memref<64x16xf32>) { acc + a * b }
    // becomes
    %ok = func.call @ttt_blas_available() : () -> i32
    scf.if (%ok != 0) {
      func.call @ttt_sgemm(%c64, %c16, %c32, %a_ptr, %a_offset, %c32, %c1,
                           ...) : (index, ...) -> ()
    } else {
      linalg.generic ... (as before)
    }
    ```

    With `threads=N` (ttt-to-cpu passes its OpenMP thread count), a GEMM
    whose calls would leave cores idle is cut into blocks: one that no
    `scf.parallel` or `scf.forall` encloses (a layer of one stream, whose
    loop over streams folded away), with fewer batch points than N, static
    sizes and at least 2^21 multiply-adds gets its longer side (m, else n)
    cut into up to N / points blocks of at least 64, each block's call a
    point of the parallel loop. Each output element is still one BLAS
    call's dot product; inside a parallel loop the calls already share the
    cores and nothing is cut.

    With `library=cublas` (ttt-to-gpu's `contractions=cublas`) the calls
    are `ttt_cublas_available` and `ttt_cublas_sgemm` of
    `libttt_cuda_runtime`, on device-accessible buffers: cuBLAS computes each
    GEMM on the GPU, and the batch loops are `scf.for` loops of the host (a
    parallel loop there would become a kernel). The fallback branch's op
    becomes a kernel as every other. `library=cublas-tf32` calls
    `ttt_cublas_sgemm_tf32`, the same GEMM on TF32 tensor cores.
  }];
  let options = [
    Option<"library", "library", "std::string", /*default=*/"\"blas\"",
           "Whose GEMM: blas (ttt_sgemm, a CBLAS on the CPU), cublas "
           "(ttt_cublas_sgemm, cuBLAS on the GPU, called by the host) or "
           "cublas-tf32 (the same on TF32 tensor cores)">,
    Option<"threads", "threads", "unsigned", /*default=*/"1",
           "Cores the calls of a GEMM that no parallel loop encloses may "
           "share: with fewer batch points than this, a GEMM of at least "
           "2^21 multiply-adds and static sizes is cut into blocks of at "
           "least 64 rows (or columns, whichever is longer), one call "
           "each, as another dimension of its parallel loop (blas only)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def TTTSerializeNestedParallel : Pass<"ttt-serialize-nested-parallel"> {
  let summary = "Turn every scf.parallel nested in another into scf.for loops";
  let description = [{
    Keeps one level of parallelism: the outermost `scf.parallel` loops
    (per stream, per batch of GEMMs, per elementwise op) stay parallel,
    and the parallel loops inside them become sequential `scf.for` nests.
    Run before `convert-scf-to-openmp`, so that no OpenMP region opens
    inside another (which would cost one region per outer iteration).
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

//===----------------------------------------------------------------------===//
// GPU: the project's own steps of ttt-to-gpu (lib/Conversion/LinalgToGPU)
//===----------------------------------------------------------------------===//
//
// They run between upstream passes, in the order `ttt-to-gpu` runs them
// (lib/Pipelines/Pipelines.cpp); they are registered so that tests and
// debugging can run them alone.

def TTTGPUBf16Operands : Pass<"ttt-gpu-bf16-operands"> {
  let summary = "Round the f32 operands of products in contractions to bf16 "
                "(fp32 accumulation)";
  let description = [{
    On tensors or buffers: in every `linalg.generic` with a reduction
    iterator (a contraction), rounds each f32 input operand of an
    `arith.mulf` to bf16 and back (`arith.truncf` + `arith.extf`, once per
    input at the top of the body), so products see bf16 operands while sums
    stay f32. `ttt-to-gpu{precision=bf16}` runs it after
    `linalg-generalize-named-ops`.

    Example:

    ```mlir
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    ```

    becomes

    ```mlir
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %a16 = arith.truncf %a : f32 to bf16
      %a32 = arith.extf %a16 : bf16 to f32
      %b16 = arith.truncf %b : f32 to bf16
      %b32 = arith.extf %b16 : bf16 to f32
      %p = arith.mulf %a32, %b32 : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TTTGPUPrepareLinalg : Pass<"ttt-gpu-prepare-linalg", "::mlir::ModuleOp"> {
  let summary = "Make every copy and linalg op on buffers a linalg.generic "
                "whose parallel loops come first, ready to become one kernel "
                "each";
  let description = [{
    On buffers, for ops on the host (not in a `gpu.module` or `gpu.launch`):
    `memref.copy` becomes `linalg.copy` (copies run as kernels too, not on
    the host), named linalg ops become `linalg.generic`, and every generic's
    loops are interchanged so that its parallel loops come first (then
    `convert-linalg-to-parallel-loops` makes one `scf.parallel` of them,
    which becomes one kernel; a reduction in front would otherwise stay a
    host loop launching a kernel per step). A full reduction, which has no
    parallel loop to map, is put in a one-iteration `scf.parallel`, so one
    thread runs it on the device rather than the host.

    Example:

    ```mlir
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                     affine_map<(i, j) -> (j)>],
                    iterator_types = ["reduction", "parallel"]}
        ins(%a : memref<?x?xf32>) outs(%s : memref<?xf32>) { ... }
    ```

    becomes

    ```mlir
    linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>,
                                     affine_map<(j, i) -> (j)>],
                    iterator_types = ["parallel", "reduction"]}
        ins(%a : memref<?x?xf32>) outs(%s : memref<?xf32>) { ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def TTTGPUMapParallelLoops
    : Pass<"ttt-gpu-map-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Map outermost scf.parallel loops onto GPU blocks and threads "
                "(gpu.launch)";
  let description = [{
    On buffers: every outermost `scf.parallel` without reductions that is
    not already on the device becomes a `gpu.launch`. For a nest of n
    parallel dims d0..d(n-1):
    - thread x <- d(n-1) within a tile of `tile-x`, thread y <- d(n-2)
      within a tile of `tile-y` (n == 1: `tile-x * tile-y` threads along
      d0);
    - block x <- the linearized (d0, ..., d(n-3), tile of d(n-2), tile of
      d(n-1)), last fastest: for the linattn lowering that is batch x heads
      x chunks (x rows) x tiles. A grid-stride loop covers grids larger than
      the hardware's limit; guards cover partial tiles;
    - loops inside the nest (reductions, `scf.for`) run sequentially in each
      thread.
    Sizes may all be dynamic: the launch sizes are computed on the host from
    the loop bounds. `tile-x * tile-y` must be 1 to 1024.

    It also registers what the rest of `ttt-to-gpu` needs from the context
    (the NVVM target, the LLVM IR translations, GPU offloading), so that any
    tool (ttt-opt, the mlir-opt plug-in, ttt-run) can run the pipeline.

    Example:

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      ... body(%i, %j) ...
    }
    ```

    becomes (the host computes `%tj` = ceil(n / 32) and `%ti` =
    ceil(m / 8) tiles, `%blocks` = `%tj * %ti`, and `%grid` = `%blocks`
    clamped to [1, 2^31 - 1])

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %grid, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c8, %sz = %c1) {
      scf.for %b = %bx to %blocks step %gx {
        %tile_j = arith.remui %b, %tj : index
        %rest = arith.divui %b, %tj : index
        %tile_i = arith.remui %rest, %ti : index
        %j = (%tile_j * 32 + %tx), %i = (%tile_i * 8 + %ty)
        scf.if (%j < %n and %i < %m) { ... body(%i, %j) ... }
      }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"tileX", "tile-x", "unsigned", /*default=*/"32",
           "Threads per block along the innermost parallel dimension">,
    Option<"tileY", "tile-y", "unsigned", /*default=*/"8",
           "Threads per block along the second innermost parallel dimension">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def TTTGPUHostBoundary : Pass<"ttt-gpu-host-boundary", "::mlir::ModuleOp"> {
  let summary = "Copy the memref arguments and globals of public functions "
                "into fresh (device-accessible) buffers at entry";
  let description = [{
    On buffers, after bufferization and deallocation: every public function
    copies its memref arguments, and every function the globals
    (`memref.get_global`) it uses, into fresh buffers at entry, so that
    kernels never see host-only memory once `memref.alloc` means
    device-accessible managed memory. The copies are freed before returning;
    arguments the program may write to are copied back first. Arguments of
    public functions must have the identity layout.

    Example:

    ```mlir
    func.func @f(%a: memref<?x4xf32>, %out: memref<?x4xf32>) {
      %t = memref.get_global @table : memref<4xf32>
      ... reads %a and %t, writes %out ...
      return
    }
    ```

    becomes

    ```mlir
    func.func @f(%a: memref<?x4xf32>, %out: memref<?x4xf32>) {
      %ca = memref.alloc(%d0) : memref<?x4xf32>
      memref.copy %a, %ca : memref<?x4xf32> to memref<?x4xf32>
      %cout = memref.alloc(%d1) : memref<?x4xf32>
      memref.copy %out, %cout : memref<?x4xf32> to memref<?x4xf32>
      %t = memref.get_global @table : memref<4xf32>
      %ct = memref.alloc() : memref<4xf32>
      memref.copy %t, %ct : memref<4xf32> to memref<4xf32>
      ... reads %ca and %ct, writes %cout ...
      memref.copy %cout, %out : memref<?x4xf32> to memref<?x4xf32>
      memref.dealloc %ca : memref<?x4xf32>
      memref.dealloc %cout : memref<?x4xf32>
      memref.dealloc %ct : memref<4xf32>
      return
    }
    ```

    With `gpu-memcpy`, the copies are `gpu.memcpy` ops (one transfer by the
    driver) instead of `memref.copy` (host loads and stores, which on managed
    memory fault each page over to the host and back to the device).
  }];
  let options = [
    Option<"gpuMemcpy", "gpu-memcpy", "bool", /*default=*/"false",
           "Copy with gpu.memcpy (the driver's transfer) instead of "
           "memref.copy (host code)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::gpu::GPUDialect"];
}

def TTTGPUScalarForalls : Pass<"ttt-gpu-scalar-foralls"> {
  let summary = "Put every scf.forall whose body is scalar code on the device";
  let description = [{
    On buffers, before the remaining `scf.forall` loops become host loops
    (`scf-forall-to-for`): a forall whose body is scalar code (loads,
    stores, arithmetic, views, `scf.for`/`scf.if`; no structured op, no
    nested parallel loop, no allocation or call) becomes an `scf.parallel`,
    which `ttt-gpu-map-parallel-loops` makes one kernel with a thread per
    iteration. That is how `linattn-to-linalg{scan=per-entry}` writes a
    chunk-state scan: each thread carries its state entry through the chunks
    in a register. Foralls holding linalg ops (the recurrent reference's
    per-stream loops) stay on the host, each op inside a kernel of its own.

    Example:
    ```mlir
    scf.forall (%i, %j) in (%m, %n) {
      %s = scf.for %t = %c0 to %T step %c1 iter_args(%acc = %zero) -> (f32) {
        %x = memref.load %g[%t, %i, %j] : memref<?x?x?xf32>
        %y = arith.addf %acc, %x : f32
        memref.store %y, %out[%t, %i, %j] : memref<?x?x?xf32>
        scf.yield %y : f32
      }
    }
    // becomes
    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      %s = scf.for ... (the same body)
    }
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def TTTGPULaunchStackScopes
    : Pass<"ttt-gpu-launch-stack-scopes", "::mlir::ModuleOp"> {
  let summary = "Free each kernel launch's argument array after the launch "
                "(llvm.intr.stacksave/stackrestore around gpu.launch_func)";
  let description = [{
    After `gpu-to-llvm`: brackets every `gpu.launch_func` with
    `llvm.intr.stacksave` and `llvm.intr.stackrestore`. The translation to
    LLVM IR puts each launch's kernel arguments in `alloca`s at the launch;
    in a loop they are dynamic allocations that live until the function
    returns, so a host loop of many launches (the recurrent form with many
    streams and chunks) overflows the stack. With the scope, each launch's
    arguments are freed when the launch call returns (the driver has copied
    them by then).

    Example:

    ```mlir
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%p : !llvm.ptr)
    ```

    becomes

    ```mlir
    %sp = llvm.intr.stacksave : !llvm.ptr
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%p : !llvm.ptr)
    llvm.intr.stackrestore %sp : !llvm.ptr
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TTTGPUMergeModules : Pass<"ttt-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module (one binary, "
                "one ptxas run, one module load)";
  let description = [{
    After `gpu-kernel-outlining`, which makes one `gpu.module` per kernel:
    moves every kernel (and the functions it calls, once) into the first
    `gpu.module` and retargets the `gpu.launch_func` ops, so that the program
    has one binary. Kernels whose names clash are renamed. Modules with
    different targets or an offloading handler stay apart.

    Example:

    ```mlir
    gpu.launch_func @f_kernel::@f_kernel ...
    gpu.launch_func @f_kernel_0::@f_kernel ...
    gpu.module @f_kernel { gpu.func @f_kernel(...) kernel { ... } }
    gpu.module @f_kernel_0 { gpu.func @f_kernel(...) kernel { ... } }
    ```

    becomes

    ```mlir
    gpu.launch_func @f_kernel::@f_kernel ...
    gpu.launch_func @f_kernel::@f_kernel_0 ...
    gpu.module @f_kernel {
      gpu.func @f_kernel(...) kernel { ... }
      gpu.func @f_kernel_0(...) kernel { ... }
    }
    ```
  }];
}

def TTTGPULaunchToLoops : Pass<"ttt-gpu-launch-to-loops", "::mlir::ModuleOp"> {
  let summary = "Run gpu.launch bodies on the host: sequential loops over "
                "blocks and threads (a testing aid for kernels without "
                "barriers or shared memory)";
  let description = [{
    Every `gpu.launch` becomes sequential `scf.for` loops over its blocks
    and threads on the host (z, y, x of the grid, then of the block; kernels
    without barriers, shared memory or async tokens only, as
    `ttt-gpu-map-parallel-loops` makes them). `ttt-to-gpu{emulate=true}`
    uses it to check the mapping numerically on machines without a GPU.

    Example:

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
      ... body(%bx, %tx) ...
      gpu.terminator
    }
    ```

    becomes

    ```mlir
    scf.for %bz = %c0 to %c1 step %c1 {
      scf.for %by = %c0 to %c1 step %c1 {
        scf.for %bx = %c0 to %n step %c1 {
          scf.for %tz = %c0 to %c1 step %c1 {
            scf.for %ty = %c0 to %c1 step %c1 {
              scf.for %tx = %c0 to %c32 step %c1 {
                ... body(%bx, %tx) ...
    }}}}}}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def TTTToLinAttn : Pass<"ttt-to-linattn"> {
  let summary = "Rewrite TTT layers that are exactly linear attention into linattn";
  let description = [{
    For every `ttt.kvb_layer` that the layer analysis (see `ttt-explain`)
    proves to be linear attention and that the rewrite supports, emits the
    linattn form (Theorems 5.1-5.3; `docs/Theory.md` sections 2-4, the
    recipe in section 6):

    - static-kernel, dot-product layers: feature maps for q and k,
      per-chunk contributions with the learning rates, loss scale, step size
      and ascent sign folded into the values, momentum as a decayed scan,
      Muon as a per-chunk state transform, the learned output weight as the
      initial state, and the mask that the update/apply order implies
      (apply-then-update: chunk-strict; update-then-apply: chunk-inclusive;
      causal: exclusive chunk states plus the token-causal intra-chunk term);
    - static-kernel MSE layers: a residual affine scan of chunk states;
    - full-batch steps without state transforms: one full-mask attention.

    The rewrite is exact (only floating-point order changes). Every layer it
    leaves alone gets a remark naming what blocked it.

    `form` says which layers to rewrite: `parallel` (the default) every one
    that can be, `recurrent` none (each keeps its exact sequential form, as
    `ttt-lower-recurrent` runs it), `auto` those a cost model expects to run
    faster in parallel on a CPU with `cores` cores (0: this machine's): the
    parallel form adds a chunk-state scan and keeps every chunk state in
    memory, so it is chosen only when B*H streams leave cores idle that its
    chunks could fill. With `form=auto` or `recurrent`, every layer gets a
    remark with the form chosen and why.
  }];
  let options = [
    Option<"form", "form", "std::string", /*default=*/"\"parallel\"",
           "Which layers to rewrite: parallel (all that can be), recurrent "
           "(none), or auto (per layer, by a CPU cost model)">,
    Option<"cores", "cores", "unsigned", /*default=*/"0",
           "With form=auto: the cores of the target CPU (0: this machine's)">,
  ];
  let dependentDialects = [
    "::mlir::linattn::LinAttnDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect",
  ];
}

def TTTNormalizeONNX : Pass<"ttt-normalize-onnx"> {
  let summary = "Rewrite the ONNX idioms of an imported graph into the one spelling the raise reads";
  let description = [{
    Exporters and hand-written models spell the same computation in many
    ways. This pass rewrites each idiom into one canonical spelling without
    changing what the graph computes:
    - views: a Split becomes one Slice per piece; a Gather of one index on
      a Reshape that splits an axis into [N, C] becomes a Slice of C
      elements; a Transpose of a Slice becomes a Slice of the Transpose;
      a Slice of `x^T` on its last axis that products read (feature-major
      chunks) becomes the transpose of a Slice of x; two Transposes become
      one (or none); a Reshape or Expand to the input's own shape (by its
      type, a constant, or a Concat of constants and static Shape pieces)
      is dropped;
    - contractions: an Einsum with one contracted index becomes a MatMul
      between Transposes; the transpose of a product, `(A B)^T`, becomes
      `B^T A^T` (also when it changes the layout as well, and when a factor
      takes the transpose for free); the transpose of a sum, difference,
      negation, product or sigmoid becomes the same of the transposes when
      its operands take them for free (so that weights stored
      output x input, applied as `W x^T`, read like `x W^T`); a layout
      transpose of an elementwise computation moves onto its operands;
    - arithmetic: `a + (-b)` in any spelling becomes `a - b`;
    - assembly: a Concat of equally transposed chunks becomes the Transpose
      of a Concat (for any transpose that a transpose of the result undoes);
      the innermost transpose of a Concat of products becomes a Concat of
      the transposed products; a stack (`Unsqueeze` each chunk, `Concat`,
      `Reshape`, also permuted first and with the features merged) becomes a
      Concat; `ScatterND` or `ScatterElements` writes of windows that tile
      one axis of a buffer exactly (zeros, or torch.empty's) become a Concat
      of the windows;
    - mini-batches by index: a Gather of one index moves in front of a
      Transpose, of an elementwise op or Expand, and of a Reshape that keeps
      the dims up to its axis; a Transpose of a reshape that splits one axis
      moves in front of the split; one index of the split axis is a window
      of the source (ttt-lm-pytorch's `x[i]` of a `[N, B, H, C, D]` view);
    - types: an `If` on a constant becomes the branch it takes, and a node
      whose inputs fix its shape gets that static type; a Gather of one
      index of a constant is folded.
    Equal nodes the rewrites create are merged afterwards, and a Transpose
    of a node that another node already computes turned (its factors
    transposed and swapped, where a push went through) becomes that node;
    the rewrites then run again on what that leaves.

    `ttt-raise-onnx` normalizes a copy of each graph before it looks for
    layers, and keeps that copy only when it rewrites a layer; this pass
    runs the normalization alone (for lit tests and for other pipelines).

    Example: `ttt-opt model.mlir --ttt-normalize-onnx`.
  }];
}

def TTTRaiseONNX : Pass<"ttt-raise-onnx"> {
  let summary = "Find TTT-KVB layers in an imported ONNX graph and raise them to ttt.kvb_layer";
  let description = [{
    Finds test-time-training layers from the dataflow of a normalized copy of
    the graph (`ttt-normalize-onnx`: one spelling for chunks, contractions,
    transposed weights and chunk assembly), which replaces the graph only when
    a layer is rewritten. The chunks' time axis is the one before the
    features: `[B, H, T, D]`, or `[B*H, T, D]` with the heads folded into the
    batch (raised as one sample of B*H heads). The forms exporters write: a chunk loop unrolled into copies that thread the
    fast weights from one chunk to the next (traced export; chunks cut by
    Slice or Split), an ONNX `Loop` carrying the fast weights (scripted
    export), and a full-batch step whose weights the keys and values move
    (an initial weight plus or minus a data-dependent update). A chunk's
    output reads its query chunk and some weights; the weights that change
    from chunk to chunk are the fast weights. Softmax attention and other
    ordinary layers are not layers of this kind.

    For every layer found it emits one remark: the form, the fast weights,
    and either "raised" or "left as it was" with the reason. A layer is
    raised to `ttt.kvb_layer` when
    - its output is linear in the trained fast weights and each update is
      affine in them (Theorems 5.1-5.3, `docs/Theory.md` section 2.1, read
      off the dataflow by a degree analysis that names the node that breaks
      it);
    - its operations read as a `ttt.kvb_layer`: linear or SwiGLU features
      (W0 and W2 constant, or trained by the dot loss's gradients
      backpropagated through `silu(k W0) * (k W2)`, read as products of
      factors in any order); the dot or MSE gradient with an optional
      per-token learning-rate column (one per weight) and a mean over the
      chunk (divided by the chunk's length); a weight stored output x input
      and applied transposed, updated as stored; momentum (decay = mean of
      the chunk's momentum over its time axis, from zero); Newton-Schulz
      (coefficients, eps, Muon's orientation; any Frobenius-norm spelling);
      a step size; a weight norm back to the initial column norms;
      apply-then-update or update-then-apply - the same in every chunk;
    - a scripted Loop walks the sequence chunk by chunk: its trip count,
      each iteration's token window and the chunk after the loop are proven,
      with MLIR's Presburger library, to cut every sequence length into the
      layer's chunks, and the loop never stops early; a Loop that writes
      its chunks into a buffer it carries (ScatterND) writes them at their
      tokens and covers a buffer as long as the (static) sequence;
    - the layer analysis proves the `ttt.kvb_layer` rewritable as linear
      attention, and the model's opset (13 or later) can express the
      parallel form.
    A candidate whose carried state is not moved by a term added to it (an
    RNN, a selective scan with a data-dependent decay, a KV cache) is an
    ordinary recurrence, not a TTT layer. A graph without a TTT layer gets
    one remark, "no TTT layer found (N nodes read)".
    Everything else stays exactly as it was. A layer that is not linear
    attention is still read: its remark adds what the analysis of its
    `ttt.kvb_layer` form proves. With `raise-all`, every layer whose
    `ttt.kvb_layer` form is read is raised (for `--ttt-explain` and
    `--ttt-simplify`), rewritable or not; with `keep-original` as well, such
    a layer's nodes stay, paired with the layer op by `ttt.raised`. With `raise-all` or `report-candidates` (what
    `ttt-opt model.onnx --ttt-explain` sets), each rejected candidate gets a
    remark with the reason.

    Example: `ttt-opt model.onnx --ttt-raise-onnx=raise-all --ttt-explain`.
  }];
  let options = [
    Option<"raiseAll", "raise-all", "bool", /*default=*/"false",
           "Also raise layers that ttt-to-linattn cannot rewrite">,
    Option<"keepOriginal", "keep-original", "bool", /*default=*/"false",
           "With raise-all, a layer that is not rewritable keeps its nodes: "
           "its output becomes `ttt.raised %layer from %nodes`, which "
           "ttt-resolve-raised settles after the passes that transform it">,
    Option<"reportCandidates", "report-candidates", "bool",
           /*default=*/"false",
           "Name each node that carries state like a TTT layer but is an "
           "ordinary recurrence, with the reason (on with raise-all)">,
  ];
  let dependentDialects = ["::mlir::ttt::TTTDialect"];
}

def LinAttnToONNX : Pass<"linattn-to-onnx"> {
  let summary = "Rewrite linattn ops inside onnx.graph into standard ONNX nodes";
  let description = [{
    Rewrites every linattn op inside an `onnx.graph` into `onnx.node` ops of
    the default domain at opset 17 (MatMul, Mul, Add, Pad, Reshape, Slice,
    CumSum, ReduceSum, Loop, ...), so that the exported model runs in any
    ONNX runtime and computes the chunk-parallel linear-attention form:

    - `feature_map`: identity, swiglu and mlp (silu, relu, gelu_tanh) as
      batched MatMuls over every token (per-head weights broadcast over B);
    - `chunk_reduce`, `chunk_mean`, `chunk_apply` (without the intra-chunk
      term): the sequence is zero-padded to whole chunks and reshaped to
      `[B, H, N, C, ...]`; `mean` divides by the true chunk lengths;
    - `scan`: additive scans are a CumSum over chunks; decayed, affine and
      residual affine scans are a log-depth Hillis-Steele scan in a `Loop`
      over doubling offsets (decays and transitions are multiplied, never
      divided, so a zero decay stays exact); B and T may be dynamic;
    - `state_transform`: Newton-Schulz batched over every chunk state;
    - the rank-reducing `tensor.extract_slice` that takes one column of the
      learning rates (a `Gather`), with the `tensor.dim`/`arith.constant`
      ops that feed it.

    Every op of a graph is checked before anything is rewritten: an op that
    cannot be exported (`linattn.attention`, `chunk_apply` with the
    intra-chunk term, any other non-ONNX op) is reported with the reason and
    the pass fails, leaving the IR unchanged. Ops outside `onnx.graph` are
    left alone.

    Example:

    ```mlir
    %g = linattn.chunk_reduce %k, %v chunk_size = 4
        : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8x8xf32>
    ```

    becomes (N = ceil(T / 4), the padding and target shape computed from
    `Shape` nodes)

    ```mlir
    %kp = onnx.node "Pad"(%k, %pads) ...
    %kc = onnx.node "Reshape"(%kp, %shape) ...  // [B, 2, N, 4, 8]
    %kt = onnx.node "Transpose"(%kc) attrs {perm = array<i64: 0, 1, 2, 4, 3>}
    %g = onnx.node "MatMul"(%kt, %vc) ...
    ```
  }];
  let dependentDialects = [
    "::mlir::ttt::onnx::ONNXDialect",
  ];
}

def TTTFormChunkLoops : Pass<"ttt-form-chunk-loops"> {
  let summary = "Bring scf.for loops over the chunks of sequences into ttt.chunk_loop form";
  let description = [{
    An `scf.for` becomes a `ttt.chunk_loop` when its windows are proven to
    tile the sequences it reads: every `tensor.extract_slice` whose offset
    moves with the counter cuts `[n*C, n*C + size)` along one axis in
    iteration n (the offset affine in the counter, however `arith` or
    `affine.apply` spell it), the size is C in a loop of T / C iterations or
    `min(C, T - n*C)` in one of ceil(T / C), and every sequence cut is T
    long. A carried tensor that is only written, by a `tensor.insert_slice`
    at the same window, is an output; the other carried tensors are the
    state. The ops the outputs and next state need move into the body,
    which must be in the canonical op set (`docs/Semantics.md`) and must not
    read the counter; values from outside become invariants (constants are
    cloned in). Other loops stay as they are; with `explain`, a remark
    on each loop that carries tensors says why.

    ```mlir
    %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0, %o = %buf) {
      %off = arith.muli %i, %c16 : index
      %q = tensor.extract_slice %x[%off, 0] [16, 8] [1, 1] ...
      ... %oc, %w1 ...
      %o1 = tensor.insert_slice %oc into %o[%off, 0] [16, 8] [1, 1] ...
      scf.yield %w1, %o1
    }
    ```

    becomes `ttt.chunk_loop chunk(16) state(%w0) windows(%x) along [0]
    outputs along [0] {...}`.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on every loop carrying tensors that is not formed, "
           "saying why">,
  ];
  let dependentDialects = ["::mlir::ttt::TTTDialect"];
}

def TTTFormSingleSteps : Pass<"ttt-form-single-steps"> {
  let summary = "Bring a fast weight updated once and applied into ttt.chunk_loop form";
  let description = [{
    A single step (LaCT's NVS and bidirectional layers, ViT^3, a TTT op
    function exported for one chunk) repeats nothing, so it is found by
    dataflow alone. An update is an elementwise `W + D` or `W - D` of
    tensors of one type whose W is a root (a function argument, or made of
    constants only: an initializer, a parameter tiled over the batch) and
    whose D reads data (a function argument W does not read). What is made
    of the weights and their updates alone (transposes, a weight norm) is
    state-derived; an op that reads a state-derived value and gives
    something else reads the state (a gradient's `W k`, an apply's `q W'`).
    The step's body is every op depending on the weights that an update or
    a state read needs; its values read later are the loop's outputs, the
    data it reads the windows of one chunk (`chunk(0)`), the updates' results
    its next state. Updates whose bodies share ops (the three weights of a
    SwiGLU inner model) form one loop. The sums over tokens an update adds
    are taken into the body: a contraction of two data values, a ReduceSum
    of their product, such sums reshaped and stacked into the update's shape
    (ViT^3's kernel gradient), and what is made of them (a clipping norm). A
    transpose of data is taken in too (the window is the data itself). A
    weight its update broadcasts over the batch enters as the broadcast
    value; the body's other reads of the weight read that state.

    The loop is kept only if a state is bound to keys and values (the test
    `ttt-raise-onnx-chunks` uses to call a loop a TTT layer): a bias added
    to a projection or a residual connection stays as it was. The window
    and output axes are read from the math: the label an output shares
    with a window and no state has (time), or the label an update sums over
    that two windows share. With `explain`, a remark on each refused update
    says why.

    ```mlir
    %w1 = linalg.generic ... ins(%w0, %kv ...)  // %w0 + k^T v
    %o = linalg.matmul ins(%q, %w1 ...)
    ```

    becomes `ttt.chunk_loop chunk(0) state(%w0) windows(%k, %v, %q) along
    [0, 0, 0] outputs along [0] {...}`.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on every weight updated once that is not formed, "
           "saying why">,
    Option<"onlyRaised", "only-raised", "bool", /*default=*/"false",
           "Form only the loops ttt-raise-chunk-loops raises to a "
           "ttt.kvb_layer (the ONNX route reads a graph again so, when a "
           "layer it leaves would keep it from writing back one it "
           "rewrites)">,
  ];
  let dependentDialects = ["::mlir::ttt::TTTDialect"];
}

def TTTRaiseChunkLoops : Pass<"ttt-raise-chunk-loops"> {
  let summary = "Read the math of each ttt.chunk_loop and raise the layers ttt.kvb_layer expresses";
  let description = [{
    Reads what one chunk computes as sums of einsum terms over the loop's
    state, windows and invariants, so that which op, which layout and which
    orientation spelled a contraction does not matter. The roles of the
    dimensions come from the math: in `y = q W` the dimension q and W share
    and y sums is W's input, the one W and y share its output, the ones all
    three share are streams (batch, heads), and the one q and y share is
    time, which must be the loop's window and output axis.

    Raised today: one linear fast weight whose update is
    `W + s * sum_t k_t^T (lr_t v_t)` (the dot loss's descent step, per-token
    rates optional) or the MSE loss's step, with LaCT's momentum as a second
    state, and with Muon: the update orthogonalized by Newton-Schulz steps
    (`W + s * NS(U)`, each step proven to be `a X + (b A + c A A) X` of the
    one before, `A = X X^T`, after `U / (|U|_F + eps)`), applied to the
    chunk's queries before or after it, chunked or as one chunk.

    Also raised: LaCT's SwiGLU fast weights, `W1 (silu(W0 x) * (W2 x))`.
    The model is read off the output (the sigmoid is the one leaf that is no
    sum of products; the weight under it is W0), every dimension of every
    operand gets its role there, and each weight's update is proven to be
    the dot loss's descent step that model implies: the gradient, built as
    an einsum polynomial over the body's own values (the keys' sigmoid and
    `silu'(z) = s + z s - z s^2`), must equal the update the body computes,
    term for term, up to one loss scale for all three. Per-weight rates,
    LaCT's momentum per weight (one joint state each), Muon and the weight
    norm to the initial column norms (checked against the constant initial
    weights), Muon with no Newton-Schulz steps (the update only normalized),
    keys multiplied by their rates before the loop, and a single step's other
    outputs made of the network's output alone (computed again after the
    layer op) are read around it.

    ViT^3's two inner models are raised the same way: its GLU,
    `(x Wa) * silu(x Wg)`, whose gradients (proven as above, inside the
    clipping `G / (|G| + 1)` per output column) the update subtracts; and its
    depth-wise convolution kernel (a `ttt.dwconv_layer`): the output is read
    off the convolution's indexing maps (the queries, zero-padded by half
    the kernel, read at output plus kernel position), the kernel's gradient
    off the stacked per-position sums of the keys shifted by that position
    (window offsets into one zero-padded key map) times the values, clipped
    per channel.

    The layer becomes a `ttt.kvb_layer` on its
    operands transposed and reshaped to `[B, H, T, D]`, its results turned
    back. Other loops stay; with `explain`, a remark on each loop says what
    was read or why it is not a layer the op expresses.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on every ttt.chunk_loop: the layer read, or why none">,
    Option<"convolutions", "convolutions", "bool", /*default=*/"true",
           "Raise depth-wise convolution layers to ttt.dwconv_layer (the "
           "ONNX route, which writes back ttt.kvb_layer only, leaves them "
           "and reports them)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ttt::TTTDialect",
  ];
}

def TTTRerollChunks : Pass<"ttt-reroll-chunks"> {
  let summary = "Roll unrolled chunk steps into one ttt.chunk_loop";
  let description = [{
    A traced program repeats a chunk step once per chunk. The windows are
    found first: `tensor.extract_slice`s that cut one axis of a tensor at
    0, C, 2C, ... (the last window ending at the tensor's end); every op
    then belongs to the last chunk whose window it reads, and what a step
    reads from the step before is its state. The steps from the second on
    that repeat the second (the same ops and attributes, windows of the
    same tensors one chunk on, equal constants, each reading the state
    the step before yields, proven op by op — after ops that return an
    operand's value are removed (a scaling by one, a double negation, a
    float64 or reshape round trip, a transpose pair, slices joined again),
    with `a + (-b)` read as `a - b` and the operands of a sum or product in
    either order) become one `ttt.chunk_loop`
    over those chunks' windows; the first step (which exporters often fold)
    and a last step that differs (a shorter chunk) stay as they are, and the
    assembly of the chunk outputs (a `tensor.concat`, or a chain of
    `tensor.insert_slice`s into a buffer) takes the loop's output in their
    place. With `explain`, a remark on each function without such steps
    says why.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark on every function where no loop is rerolled, saying why">,
  ];
  let dependentDialects = ["::mlir::ttt::TTTDialect"];
}

def TTTRaiseONNXChunks : Pass<"ttt-raise-onnx-chunks", "::mlir::ModuleOp"> {
  let summary = "Find TTT layers of ONNX graphs through the canonical chunk loop, by dataflow";
  let description = [{
    The ONNX front end of the canonical route. Each `onnx.graph` is copied,
    the copy's integer shape arithmetic folded (the `Shape` of statically
    typed values and the arithmetic on it, as TorchScript exports compute
    their window bounds), and the copy read as a function in upstream
    dialects, node by node, by small handlers chosen by op type and the
    opset the model imports (a handler row holds from one since-version of
    the operator on); a node no handler takes (another domain, control flow,
    a shape known only at run time) is left out, its results read as
    inputs. The copy replaces the graph only when a layer is rewritten. On that function the same passes run as on
    torch-mlir's output: `ttt-reroll-chunks` finds unrolled chunk steps by
    dataflow and proves them one `ttt.chunk_loop`, `ttt-raise-chunk-loops`
    reads the math on its body. When a layer is raised, only what changed is
    written back: the nodes of the chunk steps go, and the nodes that read
    the layer's output read a `ttt.kvb_layer` (with the transposes and
    reshapes around it) instead; every other node stays as the model has
    it. A layer that is not linear attention is left as it is, with its
    reason: a chunk loop one of whose states is updated by a sum over tokens
    of products of chunk data (keys bound to values) is reported to
    `ttt-raise-onnx` as a TTT layer found (`TTT layer: chunk loop (...):
    left as it was: <reason>`, e.g. a SwiGLU or LayerNorm inner model); an
    RNN, a scan or chunked online softmax is not.

    Every layer raised gets a remark in the format of `ttt-raise-onnx`
    (`TTT layer: ...: raised to ttt.kvb_layer (...)`); with `explain`, every
    graph also gets the route's own remarks: how many nodes were converted,
    which were left out and why, and what the formers and the reader found.

    ```mlir
    %k0 = onnx.node "Slice"(%k, %c0, %c8, %c2) ...   // the chunk steps, once
    %w1 = onnx.node "Add"(%w, %g0) ...                //   per chunk
    ...
    %o = onnx.node "Concat"(%o0, %o1, %o2) {axis = 2 : i64} ...
    ```

    becomes a `ttt.kvb_layer` on `%q`, `%k`, `%v` and `%w` whose output
    takes `%o`'s place.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit the route's remarks on every graph: nodes converted and "
           "left out, loops formed, layers read">,
    Option<"layerPipeline", "layer-pipeline", "std::string",
           /*default=*/"\"\"",
           "Passes on the raised ttt.kvb_layer ops (a textual pipeline on "
           "the module, e.g. ttt-simplify with the paper's variants), run "
           "before a layer is judged rewritable; their remarks are always "
           "shown">,
    Option<"raiseAll", "raise-all", "bool", /*default=*/"false",
           "Write back every layer it reads as a ttt.kvb_layer, linear "
           "attention or not (for ttt-explain and the API's reports; such "
           "a graph is no longer a model onnxruntime runs)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::ttt::TTTDialect",
    "::mlir::ttt::onnx::ONNXDialect",
  ];
}

def TTTReadONNXAsLinalg : Pass<"ttt-read-onnx-as-linalg", "::mlir::ModuleOp"> {
  let summary = "Replace each onnx.graph by the linalg function the canonical route reads it as";
  let description = [{
    What `ttt-raise-onnx-chunks` analyses, as a program: each `onnx.graph`
    becomes a `func.func` on tensors, one handler per node (chosen by op type
    and the model's opset), its inputs the graph's, its results the graph's
    outputs, initializers as constants. A node that no handler takes is an
    error naming it and the reason. The result runs with `ttt-run`, which is
    how the handlers are tested against onnxruntime.

    ```mlir
    onnx.graph @g(%x: tensor<2x3xf32> {onnx.name = "x"}) -> (...) {
      %y = onnx.node "Transpose"(%x) attrs {perm = array<i64: 1, 0>} ...
      onnx.yield %y : tensor<3x2xf32>
    }
    ```

    becomes `func.func @g(%x: tensor<2x3xf32>) -> tensor<3x2xf32>` returning
    a `linalg.transpose` of `%x`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TTTRaiseLinalg : Pass<"ttt-raise-linalg", "::mlir::ModuleOp"> {
  let summary = "Find TTT-KVB layers in linalg-on-tensors functions and raise them to ttt.kvb_layer";
  let description = [{
    The ONNX raise's finder and matcher, on programs in upstream dialects
    (what torch-mlir's linalg-on-tensors pipeline and IREE's input take).
    Each `func.func` on ranked float tensors is read as an ONNX graph that
    computes the same values (its shadow): a `linalg` op whose payload is
    `out + a * b` becomes an Einsum of its indexing maps (named or generic,
    in any layout), an all-parallel op the nodes of its `arith`/`math`
    payload on operands aligned to its iteration space (broadcasts and
    transposes included), a sum over reduction dims (of an input or of an
    elementwise function of it) a ReduceSum,
    `tensor.extract_slice` a Slice, `expand_shape`/`collapse_shape` a
    Reshape, `tensor.concat` and a chain of `insert_slice`s that tiles a
    fresh tensor a Concat, an `insert_slice` at a computed offset (or at a
    constant one into a tensor that is not fresh) a ScatterND window, `scf.for` with a constant step a Loop (its induction
    variable `lb + iteration * step`; bounds that do not fold to constants,
    such as a `tensor.dim` of a sequence of run-time length, make its trip
    count integer nodes), index arithmetic integer nodes, `tensor.dim` of a
    dynamic dim a Gather of a Shape, `affine.apply`/`min`/`max` integer
    nodes, a `tensor.empty` of run-time size zeros of its shape (one of the
    values it may hold), a contraction or elementwise op on a chunk of
    run-time size an Einsum or its payload's nodes, and an `insert_slice` of
    such a chunk a ScatterND at the grid of the buffer's ranges cut to the
    window. A layer of run-time length reads its keys and values cut to the
    queries' length. A function with counted `scf.while` loops (`before`: one comparison of
    the counter; `after`: the counter plus a step, or plus its chunk's
    length `min(C, T - i)` when it runs while `i < T` and its last counter
    is not read: the same counters as a step of C) is read as its copy with
    `scf.for` loops (upstream's uplift), and takes the copy's body only if
    a layer is raised in it. torch-mlir's `while_loop` is brought into that
    form first, in the copy: 0-d tensors a loop carries (a `tensor<i64>`
    counter) are carried as scalars, 0-d `linalg.generic` ops become scalar
    arithmetic, a sum of integer zeros is its init, a condition carried
    from the end of the body (a do-while) is computed at the start of each
    iteration when the one the loop starts with is the same computation on
    its first values (the same ops, or the same constant), and, once the
    loop is an `scf.for`, comparisons and `minsi`/`maxsi` that the integer
    range analysis decides (the clamps of PyTorch's slice bounds) fold. Likewise a function whose `scf.for` loops
    (written so, or uplifted from `scf.while`) with a constant trip count
    (at most 4096) have a partial last chunk (a size that is an `affine.min`
    of the counter) is read as its copy with those loops unrolled and
    canonicalized, so that each chunk has a static size; a loop over a
    run-time length is read as it is, its chunks of run-time size.
    torch-mlir's spellings are read too: a unit dim indexed at 0 is a
    broadcast and a kept reduced dim keepdims; a payload that selects on
    `linalg.index` comparisons is a Trilu, one that selects on a float
    comparison a Max or Min (they differ on NaN only), one that yields
    its index a constant arange, one that reads one element of a
    captured tensor at constant indices a Slice, one that reads a captured
    tensor at `size == 1 ? 0 : i` (numpy broadcasting of a dim of run-time
    size, such as a dynamic batch) that tensor, stretched to the result's
    static sizes; `cf.assert` (the division guard) computes nothing;
    `dense_resource` constants are their elements. Where such a read takes
    a dim of run-time size as the result's, a layer raised through it
    asserts (`cf.assert`) that the two sizes are equal: the ops are the
    same where they are, and a call that broadcasts a batch of 1 against
    another stops with that message instead of computing something else. Any other op stays an opaque node that keeps the
    dataflow. `ttt-raise-onnx` then finds and reads the layers with the same
    soundness checks and remarks (at the ops' own locations), and every
    layer it raises is written back into the function as a `ttt.kvb_layer`
    whose operands are the function's own values, replacing the layer's
    output; the ops only the layer used go.

    Example: a chunk loop unrolled into `linalg.generic` contractions and
    additions of `W`, its chunk outputs inserted into a `tensor.empty`,
    becomes

    ```mlir
    %o = ttt.kvb_layer %q, %k, %v : ... weights(%w : tensor<1x2x4x4xf32>)
        model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot> ...
    ```
  }];
  let options = [
    Option<"printShadow", "print-shadow", "bool", /*default=*/"false",
           "Print each function's shadow graph (what the finder reads) to "
           "stderr before the raise, after the function as read when that is "
           "a rewritten copy (scf.while loops uplifted, partial last chunks "
           "unrolled)">,
  ];
  let dependentDialects = [
    "::mlir::cf::ControlFlowDialect",
    "::mlir::ttt::TTTDialect",
    "::mlir::ttt::onnx::ONNXDialect",
  ];
}

#endif // TTT_CONVERSION_PASSES_TD
