// Saved random inputs give the same results when read back, whether the
// arrays are matched by name (arg0, arg1) or by order (result0 of a run
// fed back as the argument of the next).
// RUN: rm -rf %t && mkdir -p %t
// RUN: ttt-run %s --random-inputs=7 --shapes=3x5,5 --save-inputs=%t/in.npz \
// RUN:   --outputs=%t/out1.npz --print-results=false
// RUN: ttt-run %s --inputs=%t/in.npz --outputs=%t/out2.npz --print-results=false
// RUN: cmp %t/out1.npz %t/out2.npz

// Integer results are exact, so twice plus one equals plus two.
// RUN: ttt-run %s --entry=inc --random-inputs=3 --shapes=4x6 \
// RUN:   --save-inputs=%t/x.npz --outputs=%t/x1.npz --print-results=false
// RUN: ttt-run %s --entry=inc --inputs=%t/x1.npz --outputs=%t/x2.npz \
// RUN:   --print-results=false
// RUN: ttt-run %s --entry=add2 --inputs=%t/x.npz --outputs=%t/y2.npz \
// RUN:   --print-results=false
// RUN: cmp %t/x2.npz %t/y2.npz

// A single result can be written as .npy and read back as an input.
// RUN: ttt-run %s --entry=inc --inputs=%t/x.npz --outputs=%t/x1.npy \
// RUN:   --print-results=false
// RUN: ttt-run %s --entry=inc --inputs=%t/x1.npy > %t/p1.txt
// RUN: ttt-run %s --entry=add2 --inputs=%t/x.npz > %t/p2.txt
// RUN: diff %t/p1.txt %t/p2.txt
// RUN: FileCheck %s < %t/p1.txt
// CHECK: result0: tensor<4x6xi32> = {{\[\[}}

func.func @main(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.matvec ins(%a, %b : tensor<?x?xf32>, tensor<?xf32>)
                     outs(%acc : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @inc(%x: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %one = arith.constant 1 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xi32>
  %n = tensor.dim %x, %c1 : tensor<?x?xi32>
  %e = tensor.empty(%m, %n) : tensor<?x?xi32>
  %ones = linalg.fill ins(%one : i32) outs(%e : tensor<?x?xi32>) -> tensor<?x?xi32>
  %r = arith.addi %x, %ones : tensor<?x?xi32>
  return %r : tensor<?x?xi32>
}

func.func @add2(%x: tensor<?x?xi32>) -> tensor<?x?xi32> {
  %two = arith.constant 2 : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xi32>
  %n = tensor.dim %x, %c1 : tensor<?x?xi32>
  %e = tensor.empty(%m, %n) : tensor<?x?xi32>
  %twos = linalg.fill ins(%two : i32) outs(%e : tensor<?x?xi32>) -> tensor<?x?xi32>
  %r = arith.addi %x, %twos : tensor<?x?xi32>
  return %r : tensor<?x?xi32>
}
