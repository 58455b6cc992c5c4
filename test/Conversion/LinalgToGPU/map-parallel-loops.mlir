// ttt-gpu-map-parallel-loops: every outermost scf.parallel without
// reductions on the host becomes a gpu.launch; thread x covers the innermost
// dim in tiles of tile-x, thread y the next one in tiles of tile-y (a 1-d
// loop gets tile-x * tile-y threads), block x the linearized tiles, in a
// grid-stride loop; guards cover partial tiles.
// RUN: ttt-opt %s --ttt-gpu-map-parallel-loops --canonicalize \
// RUN:   | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: ttt-opt %s --ttt-gpu-map-parallel-loops='tile-x=16 tile-y=4' --canonicalize \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TILES
// The mlir-opt plug-in registers the pass too.
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so %s \
// RUN:   --pass-pipeline='builtin.module(ttt-gpu-map-parallel-loops{tile-x=16 tile-y=4},canonicalize)' \
// RUN:   | FileCheck %s --check-prefixes=CHECK,TILES
// RUN: not ttt-opt %s --ttt-gpu-map-parallel-loops='tile-x=0' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ZERO
// RUN: not ttt-opt %s --ttt-gpu-map-parallel-loops='tile-x=64 tile-y=32' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LARGE

// ZERO: error: ttt-to-gpu: tile-x * tile-y must be 1 to 1024 threads per block, got 0 x 8
// LARGE: error: ttt-to-gpu: tile-x * tile-y must be 1 to 1024 threads per block, got 64 x 32

// One dim: all threads along it.
// CHECK-LABEL: func.func @vector
// DEFAULT-DAG: %[[T:.+]] = arith.constant 256 : index
// TILES-DAG: %[[T:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[N:.+]] = arith.maxsi
// CHECK: %[[TILES:.+]] = arith.divui %{{.+}}, %[[T]] : index
// CHECK: %[[CAP:.+]] = arith.minui %[[TILES]], %c2147483647
// CHECK: %[[GRID:.+]] = arith.maxui %[[CAP]], %[[C1]]
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%[[GX:.+]] = %[[GRID]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]]) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[T]], %{{.+}} = %[[C1]], %{{.+}} = %[[C1]])
// CHECK-NEXT: scf.for %[[B:.+]] = %[[BX]] to %[[TILES]] step %[[GX]] {
// CHECK-NEXT: %[[TILE:.+]] = arith.remui %[[B]], %[[TILES]]
// CHECK-NEXT: %[[BASE:.+]] = arith.muli %[[TILE]], %[[T]]
// CHECK-NEXT: %[[I:.+]] = arith.addi %[[BASE]], %[[TX]]
// CHECK-NEXT: %[[IN:.+]] = arith.cmpi ult, %[[I]], %[[N]]
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[%[[I]]]
// CHECK: gpu.terminator
func.func @vector(%a: memref<?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %v, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// Two dims: j on thread x, i on thread y; block x = (tile of i, tile of j),
// j's tile fastest.
// CHECK-LABEL: func.func @matrix
// DEFAULT-DAG: %[[TX:.+]] = arith.constant 32 : index
// DEFAULT-DAG: %[[TY:.+]] = arith.constant 8 : index
// TILES-DAG: %[[TX:.+]] = arith.constant 16 : index
// TILES-DAG: %[[TY:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[M:.+]] = arith.maxsi
// CHECK: %[[N:.+]] = arith.maxsi
// CHECK: %[[TJ:.+]] = arith.divui %{{.+}}, %[[TX]] : index
// CHECK: %[[TI:.+]] = arith.divui %{{.+}}, %[[TY]] : index
// CHECK: %[[BLOCKS:.+]] = arith.muli %[[TJ]], %[[TI]] : index
// CHECK: gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%[[GX:.+]] = %{{.+}}, %{{.+}} = %[[C1]], %{{.+}} = %[[C1]]) threads(%[[X:.+]], %[[Y:.+]], %{{.+}}) in (%{{.+}} = %[[TX]], %{{.+}} = %[[TY]], %{{.+}} = %[[C1]])
// CHECK-NEXT: scf.for %[[B:.+]] = %[[BX]] to %[[BLOCKS]] step %[[GX]] {
// CHECK-NEXT: %[[TILEJ:.+]] = arith.remui %[[B]], %[[TJ]]
// CHECK-NEXT: %[[R:.+]] = arith.divui %[[B]], %[[TJ]]
// CHECK-NEXT: %[[TILEI:.+]] = arith.remui %[[R]], %[[TI]]
// CHECK-NEXT: %[[J0:.+]] = arith.muli %[[TILEJ]], %[[TX]]
// CHECK-NEXT: %[[J:.+]] = arith.addi %[[J0]], %[[X]]
// CHECK-NEXT: %[[INJ:.+]] = arith.cmpi ult, %[[J]], %[[N]]
// CHECK-NEXT: %[[I0:.+]] = arith.muli %[[TILEI]], %[[TY]]
// CHECK-NEXT: %[[I:.+]] = arith.addi %[[I0]], %[[Y]]
// CHECK-NEXT: %[[INI:.+]] = arith.cmpi ult, %[[I]], %[[M]]
// CHECK-NEXT: %[[IN:.+]] = arith.andi %[[INJ]], %[[INI]]
// CHECK-NEXT: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %{{.+}}, %{{.+}}[%[[I]], %[[J]]]
// CHECK: gpu.terminator
func.func @matrix(%a: memref<?x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32>
  %n = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    memref.store %v, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// Loops with reductions, and loops already on the device, stay.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.parallel
// CHECK: scf.reduce(
// CHECK: gpu.launch
// CHECK-NEXT: scf.parallel
// CHECK-NOT: gpu.launch
func.func @left_alone(%a: memref<8xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %rr: f32):
      %t = arith.addf %l, %rr : f32
      scf.reduce.return %t : f32
    }
  }
  memref.store %r, %s[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %a[%i] : memref<8xf32>
      scf.reduce
    }
    gpu.terminator
  }
  return
}
