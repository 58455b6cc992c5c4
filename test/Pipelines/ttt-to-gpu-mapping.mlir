// The steps of ttt-to-gpu between bufferization and kernel outlining, one by
// one: what maps where.
// RUN: ttt-opt %s --split-input-file --ttt-gpu-prepare-linalg | FileCheck %s --check-prefix=PREP
// RUN: ttt-opt %s --split-input-file --ttt-gpu-prepare-linalg \
// RUN:   --convert-linalg-to-parallel-loops --ttt-gpu-map-parallel-loops --canonicalize \
// RUN:   | FileCheck %s --check-prefix=MAP
// RUN: ttt-opt %s --split-input-file --ttt-gpu-host-boundary | FileCheck %s --check-prefix=HOST
// RUN: ttt-opt %s --split-input-file --ttt-gpu-prepare-linalg \
// RUN:   --convert-linalg-to-parallel-loops --ttt-gpu-map-parallel-loops \
// RUN:   --gpu-kernel-outlining --ttt-gpu-merge-modules | FileCheck %s --check-prefix=MERGE
// RUN: ttt-opt %s --split-input-file --ttt-gpu-prepare-linalg \
// RUN:   --convert-linalg-to-parallel-loops --ttt-gpu-map-parallel-loops \
// RUN:   --ttt-gpu-launch-to-loops --canonicalize | FileCheck %s --check-prefix=EMU
// RUN: not ttt-opt %s --split-input-file --ttt-gpu-map-parallel-loops='tile-x=64 tile-y=32' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TILES

// A batched GEMM (h, i, j) += a(h, i, k) b(k, j): one launch; blocks cover
// h x tiles of i x tiles of j, linearized into block x (j fastest); a block's
// 32 x 8 threads cover a tile of (j, i); the reduction over k stays a loop in
// each thread. Bounds are dynamic: the host computes the grid.
// MAP-LABEL: func.func @gemm
// MAP-DAG: %[[C32:.*]] = arith.constant 32 : index
// MAP-DAG: %[[C8:.*]] = arith.constant 8 : index
// MAP-DAG: %[[C1:.*]] = arith.constant 1 : index
// MAP: %[[H:.*]] = memref.dim %arg0, %c0
// MAP: %[[I:.*]] = memref.dim %arg0, %c1
// MAP: %[[J:.*]] = memref.dim %arg1, %c1
// MAP: %[[TJ:.*]] = arith.divui %{{.*}}, %[[C32]] : index
// MAP: %[[TI:.*]] = arith.divui %{{.*}}, %[[C8]] : index
// MAP: %[[T:.*]] = arith.muli %[[TJ]], %[[TI]] : index
// MAP: %[[BLOCKS:.*]] = arith.muli %[[T]], %{{.*}} : index
// MAP: %[[CAP:.*]] = arith.minui %[[BLOCKS]], %c2147483647
// MAP: %[[GRID:.*]] = arith.maxui %[[CAP]], %[[C1]]
// MAP: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %[[GRID]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %[[C8]], %{{.*}} = %[[C1]])
// MAP: scf.for %[[B:.*]] = %[[BX]] to %[[BLOCKS]] step %[[GX]]
// MAP: %[[TILEJ:.*]] = arith.remui %[[B]], %[[TJ]]
// MAP: %[[R:.*]] = arith.divui %[[B]], %[[TJ]]
// MAP: %[[TILEI:.*]] = arith.remui %[[R]], %[[TI]]
// MAP: %[[HH:.*]] = arith.divui %[[R]], %[[TI]]
// MAP: %[[JJ:.*]] = arith.addi %{{.*}}, %[[TX]]
// MAP: arith.cmpi ult, %[[JJ]]
// MAP: %[[II:.*]] = arith.addi %{{.*}}, %[[TY]]
// MAP: arith.cmpi ult, %[[II]]
// MAP: scf.if
// MAP: scf.for %[[K:.*]] =
// MAP: memref.load %arg0[%[[HH]], %[[II]], %[[K]]]
// MAP: memref.load %arg1[%[[K]], %[[JJ]]]
// MAP: memref.store %{{.*}}, %arg2[%[[HH]], %[[II]], %[[JJ]]]
// MAP: gpu.terminator

// Outlined kernels share one gpu.module.
// MERGE-LABEL: func.func @gemm
// MERGE: gpu.launch_func @gemm_kernel::@gemm_kernel
// MERGE: gpu.module @gemm_kernel

// Emulation: loops over blocks then threads, then the block-stride loop.
// EMU-LABEL: func.func @gemm
// EMU-NOT: gpu.
// EMU: scf.for %[[BX:.*]] = %c0 to %{{.*}} step %c1
// EMU: scf.for %[[TY:.*]] = %c0 to %c8 step %c1
// EMU: scf.for %[[TX:.*]] = %c0 to %c32 step %c1
// EMU: scf.for %{{.*}} = %[[BX]] to

#gemm = [affine_map<(h, i, j, k) -> (h, i, k)>, affine_map<(h, i, j, k) -> (k, j)>,
         affine_map<(h, i, j, k) -> (h, i, j)>]
func.func @gemm(%a: memref<?x?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?x?xf32>) {
  linalg.generic {indexing_maps = #gemm,
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction in front of the parallel loop is moved behind it, so that one
// kernel computes every column sum (instead of a host loop over rows).
// PREP-LABEL: func.func @colsum
// PREP: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// MAP-LABEL: func.func @colsum
// MAP: gpu.launch
// MAP: scf.for
// MAP: scf.if
// MAP: scf.for
// MAP: memref.load %arg0[%{{.*}}, %{{.*}}] : memref<?x?xf32>
// MAP: gpu.terminator
// MAP-NEXT: }
// MAP-NEXT: return
func.func @colsum(%a: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A full reduction runs in a one-iteration loop on the device; copies and
// named ops become generics (and kernels).
// PREP-LABEL: func.func @total
// PREP: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// PREP: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
// PREP: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// PREP-NOT: memref.copy
// MAP-LABEL: func.func @total
// MAP: gpu.launch
// MAP: gpu.launch
// MAP-NOT: memref.copy
func.func @total(%a: memref<?x?xf32>, %s: memref<f32>, %b: memref<?x?xf32>) {
  linalg.reduce ins(%a : memref<?x?xf32>) outs(%s : memref<f32>) dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %r = arith.addf %acc, %x : f32
      linalg.yield %r : f32
    }
  memref.copy %a, %b : memref<?x?xf32> to memref<?x?xf32>
  return
}

// -----

// Public functions copy their arguments (and globals, which live in host
// memory) into fresh buffers, which ttt-to-gpu allocates as managed memory;
// arguments the program writes are copied back before returning.
// HOST-LABEL: func.func @boundary
// HOST-SAME: (%[[A:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32>, %[[N:.*]]: index)
// HOST: %[[D:.*]] = memref.dim %[[A]], %c0
// HOST: %[[CA:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// HOST: memref.copy %[[A]], %[[CA]]
// HOST: %[[COUT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// HOST: memref.copy %[[OUT]], %[[COUT]]
// HOST: %[[G:.*]] = memref.get_global @table
// HOST: %[[CG:.*]] = memref.alloc() : memref<4xf32>
// HOST: memref.copy %[[G]], %[[CG]]
// HOST: %[[R:.*]] = memref.alloc(%[[N]])
// HOST: linalg.generic {{.*}} ins(%[[CA]], %[[CG]] : {{.*}}) outs(%[[R]] :
// HOST: linalg.generic {{.*}} ins(%[[CA]] : {{.*}}) outs(%[[COUT]] :
// HOST-NOT: memref.copy %[[CA]]
// HOST: memref.copy %[[COUT]], %[[OUT]]
// HOST-DAG: memref.dealloc %[[CA]]
// HOST-DAG: memref.dealloc %[[COUT]]
// HOST-DAG: memref.dealloc %[[CG]]
// HOST: return %[[R]]
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @boundary(%a: memref<?x4xf32>, %out: memref<?x4xf32>, %n: index) -> memref<?x4xf32> {
  %t = memref.get_global @table : memref<4xf32>
  %r = memref.alloc(%n) : memref<?x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %t : memref<?x4xf32>, memref<4xf32>) outs(%r : memref<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x4xf32>) outs(%out : memref<?x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return %r : memref<?x4xf32>
}

// Private functions get buffers from their callers: only their globals move.
// HOST-LABEL: func.func private @helper
// HOST-SAME: (%[[X:.*]]: memref<4xf32>)
// HOST-NEXT: %[[G:.*]] = memref.get_global @table
// HOST-NEXT: %[[CG:.*]] = memref.alloc() : memref<4xf32>
// HOST-NEXT: memref.copy %[[G]], %[[CG]]
// HOST-NEXT: memref.copy %[[CG]], %[[X]]
// HOST-NEXT: memref.dealloc %[[CG]]
// HOST-NEXT: return
func.func private @helper(%x: memref<4xf32>) {
  %t = memref.get_global @table : memref<4xf32>
  memref.copy %t, %x : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Two launches, one gpu.module.
// MERGE-LABEL: func.func @two
// MERGE: gpu.launch_func @[[M:two_kernel]]::@two_kernel blocks
// MERGE: gpu.launch_func @[[M]]::@two_kernel_0 blocks
// MERGE: gpu.module @[[M]] {
// MERGE: gpu.func @two_kernel(
// MERGE: gpu.func @two_kernel_0(
// MERGE-NOT: gpu.module
// TILES: error: ttt-to-gpu: tile-x * tile-y must be 1 to 1024 threads per block, got 64 x 32
func.func @two(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %a[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
