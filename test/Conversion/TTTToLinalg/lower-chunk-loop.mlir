// ttt.chunk_loop's reference meaning in upstream ops: an scf.for over
// ceil(T / C) chunks, windows cut at c * C with min(C, T - c * C) tokens, the
// body cloned, each chunk's output inserted at its offset; a single chunk is
// the body inlined. test_chunk_loop.py checks the numbers against NumPy.
// RUN: ttt-opt %s --ttt-lower-recurrent --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @chunked
// CHECK-SAME: (%[[W0:.*]]: tensor<8x8xf32>, %[[Q:.*]]: tensor<?x8xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[T:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK: %[[N:.*]] = arith.ceildivui %[[T]], %[[C16]]
// CHECK: %[[INIT:.*]] = tensor.empty(%[[T]]) : tensor<?x8xf32>
// CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[S:.*]] = %[[W0]], %[[ACC:.*]] = %[[INIT]])
// CHECK: %[[START:.*]] = arith.muli %[[I]], %[[C16]]
// CHECK: %[[LEFT:.*]] = arith.subi %[[T]], %[[START]]
// CHECK: %[[SIZE:.*]] = arith.minui %[[C16]], %[[LEFT]]
// CHECK: %[[QC:.*]] = tensor.extract_slice %[[Q]][%[[START]], 0] [%[[SIZE]], 8] [1, 1]
// CHECK: %[[OC:.*]] = linalg.matmul ins(%[[QC]], %[[S]] :
// CHECK: %[[S1:.*]] = linalg.add ins(%[[S]], %[[S]] :
// CHECK-NOT: scf.if
// CHECK: %[[INS:.*]] = tensor.insert_slice %[[OC]] into %[[ACC]][%[[START]], 0]
// CHECK: scf.yield %[[S1]], %[[INS]]
// CHECK: return %[[R]]#1, %[[R]]#0
func.func @chunked(%w0: tensor<8x8xf32>, %q: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<8x8xf32>) {
  %o, %w = ttt.chunk_loop chunk(16) state(%w0 : tensor<8x8xf32>)
      windows(%q : tensor<?x8xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<8x8xf32>, %qc: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %qc, %c0 : tensor<?x8xf32>
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %oc = linalg.matmul ins(%qc, %s : tensor<?x8xf32>, tensor<8x8xf32>)
        outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
    %e2 = tensor.empty() : tensor<8x8xf32>
    %s1 = linalg.add ins(%s, %s : tensor<8x8xf32>, tensor<8x8xf32>)
        outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    ttt.chunk_yield outputs(%oc : tensor<?x8xf32>) state(%s1 : tensor<8x8xf32>)
  } -> outputs(tensor<?x8xf32>) state(tensor<8x8xf32>)
  return %o, %w : tensor<?x8xf32>, tensor<8x8xf32>
}

// -----

// Static windows: a length the chunk divides cuts every window at C tokens.
// CHECK-LABEL: func.func @static_windows
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0] [2, 4, 3] [1, 1, 1] : tensor<2x12x3xf32> to tensor<2x4x3xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> into tensor<2x12x3xf32>
func.func @static_windows(%x: tensor<2x12x3xf32>) -> tensor<2x12x3xf32> {
  %o = ttt.chunk_loop chunk(4) windows(%x : tensor<2x12x3xf32>) along [1]
      outputs along [1] {
  ^bb0(%xc: tensor<2x4x3xf32>):
    ttt.chunk_yield outputs(%xc : tensor<2x4x3xf32>)
  } -> outputs(tensor<2x12x3xf32>)
  return %o : tensor<2x12x3xf32>
}

// -----

// One chunk: the body inlined on the whole sequences, no loop.
// CHECK-LABEL: func.func @single_chunk
// CHECK-SAME: (%[[Q:.*]]: tensor<12x4xf32>, %[[K:.*]]: tensor<6x4xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[P:.*]] = linalg.matmul {{.*}}ins(%[[K]], %[[K]] :
// CHECK: %[[O:.*]] = linalg.matmul ins(%[[Q]], %[[P]] :
// CHECK: return %[[O]]
func.func @single_chunk(%q: tensor<12x4xf32>, %k: tensor<6x4xf32>)
    -> tensor<12x4xf32> {
  %o = ttt.chunk_loop chunk(0) windows(%q, %k : tensor<12x4xf32>, tensor<6x4xf32>)
      along [0, 0] outputs along [0] {
  ^bb0(%qc: tensor<12x4xf32>, %kc: tensor<6x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    %p = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%kc, %kc : tensor<6x4xf32>, tensor<6x4xf32>)
        outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %e2 = tensor.empty() : tensor<12x4xf32>
    %o = linalg.matmul ins(%qc, %p : tensor<12x4xf32>, tensor<4x4xf32>)
        outs(%e2 : tensor<12x4xf32>) -> tensor<12x4xf32>
    ttt.chunk_yield outputs(%o : tensor<12x4xf32>)
  } -> outputs(tensor<12x4xf32>)
  return %o : tensor<12x4xf32>
}

// -----

// An output of run-time batch: the first chunk runs before the loop and its
// output says how large the batch is, so no buffer changes shape in the
// loop; an empty sequence takes the sizes the body gives an empty window.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[N:.*]] = arith.ceildivui %[[T]], %c2
// CHECK: %[[NONE:.*]] = arith.cmpi eq, %[[T]], %c0
// CHECK: %[[R:.*]] = scf.if %[[NONE]] -> (tensor<?x?x4xf32>) {
// CHECK: tensor.extract_slice %[[X]][0, %c0, 0] [%{{.*}}, %c0, 4]
// CHECK: } else {
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[X]][0, %c0, 0]
// CHECK: %[[BUF:.*]] = tensor.empty
// CHECK: %[[INIT:.*]] = tensor.insert_slice %[[FIRST]] into %[[BUF]]
// CHECK: scf.for %{{.*}} = %c1 to %[[N]] step %c1 iter_args(%{{.*}} = %[[INIT]])
// CHECK-NOT: scf.if
// CHECK: tensor.insert_slice
// CHECK: return %[[R]]
func.func @dynamic_batch(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  %o = ttt.chunk_loop chunk(2) windows(%x : tensor<?x?x4xf32>) along [1]
      outputs along [1] {
  ^bb0(%xc: tensor<?x?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x?x4xf32>)
  } -> outputs(tensor<?x?x4xf32>)
  return %o : tensor<?x?x4xf32>
}
