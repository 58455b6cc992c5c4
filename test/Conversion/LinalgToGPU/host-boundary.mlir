// ttt-gpu-host-boundary: public functions copy their memref arguments, and
// every function the globals it reads, into fresh buffers at entry (kernels
// never see host-only memory); arguments the program may write (also
// through a view) are copied back before returning; the copies are freed.
// RUN: ttt-opt %s --split-input-file --verify-diagnostics --ttt-gpu-host-boundary \
// RUN:   | FileCheck %s
// With gpu-memcpy (ttt-to-gpu's choice on a real device) the same copies are
// driver transfers.
// RUN: ttt-opt %s --split-input-file --verify-diagnostics \
// RUN:   --ttt-gpu-host-boundary=gpu-memcpy=true | FileCheck %s --check-prefix=DMA

// CHECK-LABEL: func.func @boundary
// CHECK-SAME: (%[[A:.+]]: memref<?x4xf32>, %[[OUT:.+]]: memref<?x4xf32>, %[[UNUSED:.+]]: memref<4xf32>, %[[N:.+]]: index)
// CHECK: %[[DA:.+]] = memref.dim %[[A]], %{{.+}}
// CHECK-NEXT: %[[CA:.+]] = memref.alloc(%[[DA]]) : memref<?x4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[CA]]
// CHECK: %[[DOUT:.+]] = memref.dim %[[OUT]], %{{.+}}
// CHECK-NEXT: %[[COUT:.+]] = memref.alloc(%[[DOUT]]) : memref<?x4xf32>
// CHECK-NEXT: memref.copy %[[OUT]], %[[COUT]]
// An argument without uses is not copied.
// CHECK-NOT: memref.copy %[[UNUSED]]
// CHECK: %[[G:.+]] = memref.get_global @table
// CHECK-NEXT: %[[CG:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[CG]]
// CHECK: %[[R:.+]] = memref.alloc(%[[N]])
// CHECK: linalg.generic {{.*}} ins(%[[CA]], %[[CG]] : {{.*}}) outs(%[[R]] :
// CHECK: memref.subview %[[COUT]]
// CHECK: memref.store
// Only %out is written (through a view): only it is copied back.
// CHECK-NOT: memref.copy %[[CA]]
// CHECK-NEXT: memref.copy %[[COUT]], %[[OUT]]
// CHECK-NEXT: memref.dealloc %[[CA]]
// CHECK-NEXT: memref.dealloc %[[COUT]]
// CHECK-NEXT: memref.dealloc %[[CG]]
// CHECK-NEXT: return %[[R]]
// DMA-LABEL: func.func @boundary
// DMA-SAME: (%[[A:.+]]: memref<?x4xf32>, %[[OUT:.+]]: memref<?x4xf32>, %{{.+}}: memref<4xf32>, %{{.+}}: index)
// DMA: %[[CA:.+]] = memref.alloc(%{{.+}}) : memref<?x4xf32>
// DMA-NEXT: %[[S0:.+]] = gpu.wait async
// DMA-NEXT: %[[T0:.+]] = gpu.memcpy async [%[[S0]]] %[[CA]], %[[A]] : memref<?x4xf32>, memref<?x4xf32>
// DMA-NEXT: gpu.wait [%[[T0]]]
// DMA: %[[COUT:.+]] = memref.alloc(%{{.+}}) : memref<?x4xf32>
// DMA-NEXT: gpu.wait async
// DMA-NEXT: gpu.memcpy async [%{{.+}}] %[[COUT]], %[[OUT]] : memref<?x4xf32>, memref<?x4xf32>
// DMA: %[[G:.+]] = memref.get_global @table
// DMA-NEXT: %[[CG:.+]] = memref.alloc() : memref<4xf32>
// DMA-NEXT: gpu.wait async
// DMA-NEXT: gpu.memcpy async [%{{.+}}] %[[CG]], %[[G]] : memref<4xf32>, memref<4xf32>
// DMA-NOT: memref.copy
// Only %out is written: only it is copied back.
// DMA-NOT: gpu.memcpy async [%{{.+}}] %[[A]]
// DMA: gpu.memcpy async [%{{.+}}] %[[OUT]], %[[COUT]] : memref<?x4xf32>, memref<?x4xf32>
// DMA-NEXT: gpu.wait [%{{.+}}]
// DMA-NEXT: memref.dealloc %[[CA]]
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

func.func @boundary(%a: memref<?x4xf32>, %out: memref<?x4xf32>, %unused: memref<4xf32>, %n: index) -> memref<?x4xf32> {
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
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  %sub = memref.subview %out[0, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1]>>
  memref.store %v, %sub[%c0] : memref<4xf32, strided<[1]>>
  return %r : memref<?x4xf32>
}

// Private functions get their buffers from callers in the module, and
// declarations have no body: both stay as they are.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%[[X:.+]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: memref.store %{{.+}}, %[[X]]
// CHECK-NEXT: return
// CHECK: func.func private @external(memref<4xf32>)
func.func private @helper(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %x[%c0] : memref<4xf32>
  return
}

func.func private @external(%x: memref<4xf32>)

// -----

// Public functions take plain buffers.
// expected-error @+1 {{ttt-to-gpu: argument 0 has a non-identity layout ('memref<4xf32, strided<[2]>>'); public functions take plain buffers}}
func.func @strided(%a: memref<4xf32, strided<[2]>>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32, strided<[2]>>
  return %x : f32
}
