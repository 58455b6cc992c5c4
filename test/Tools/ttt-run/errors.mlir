// Every failure is one line on stderr, "ttt-run: error: SUBJECT: REASON",
// with a non-zero exit status, and --outputs is not written.
// RUN: rm -rf %t && split-file %s %t
// RUN: ttt-run %t/two.mlir --random-inputs=1 --shapes=3x4,4x2 \
// RUN:   --save-inputs=%t/two.npz --print-results=false
// RUN: ttt-run %t/f64.mlir --random-inputs=1 --save-inputs=%t/f64.npz \
// RUN:   --print-results=false

// RUN: not ttt-run %t/missing.mlir --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOFILE
// NOFILE: ttt-run: error: {{.*}}missing.mlir: cannot read: {{.*}}
// NOFILE-NOT: {{.}}

// RUN: not ttt-run %t/bad.mlir --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PARSE
// PARSE: ttt-run: error: {{.*}}bad.mlir:2:8: cannot parse: {{.*}}'foo.bar'
// PARSE-NOT: {{.}}

// RUN: not ttt-run %t/two.mlir --entry=nope --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENTRY
// ENTRY: ttt-run: error: {{.*}}two.mlir: no function named 'nope' (public functions: main)

// RUN: not ttt-run %t/several.mlir --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SEVERAL
// SEVERAL: several public functions (f, g) and none is 'main'; choose one with --entry=NAME

// RUN: not ttt-run %t/two.mlir 2>&1 | FileCheck %s --check-prefix=NOINPUT
// NOINPUT: ttt-run: error: {{.*}}two.mlir: @main takes 2 arguments; pass --inputs=FILE.npz or --random-inputs=SEED

// RUN: not ttt-run %t/one.mlir --inputs=%t/two.npz --outputs=%t/out.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COUNT
// RUN: not ls %t/out.npz
// COUNT: ttt-run: error: {{.*}}two.npz: wrong number of inputs: array 'arg1', but @main takes 1 argument

// RUN: not ttt-run %t/static.mlir --inputs=%t/two.npz --outputs=%t/out.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPE
// RUN: not ls %t/out.npz
// SHAPE: ttt-run: error: {{.*}}two.npz: array 'arg1' for argument 1 (tensor<?x5xf32>): shape mismatch: dimension 1 must be 5, got shape 4x2

// RUN: not ttt-run %t/one.mlir --inputs=%t/f64.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE
// DTYPE: ttt-run: error: {{.*}}f64.npz: array 'arg0' for argument 0 (tensor<?x?xf32>): dtype mismatch: expected float32, got float64

// RUN: not ttt-run %t/one.mlir --inputs=%t/nothere.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NONPZ
// NONPZ: ttt-run: error: {{.*}}nothere.npz: cannot read: {{.*}}

// RUN: not ttt-run %t/one.mlir --inputs=%t/garbage.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: ttt-run: error: {{.*}}garbage.npz: not a .npy or .npz file (unrecognised leading bytes)

// RUN: head -c 200 %t/two.npz > %t/truncated.npz
// RUN: not ttt-run %t/two.mlir --inputs=%t/truncated.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TRUNC
// TRUNC: ttt-run: error: {{.*}}truncated.npz: truncated or corrupt .npz (zip) archive: {{.*}}

// RUN: not ttt-run %t/bf16.mlir --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TYPE
// TYPE: ttt-run: error: {{.*}}bf16.mlir: @main: argument 0 has type tensor<4xbf16>; ttt-run passes only ranked tensors of f32, f64, i32 or i64

// RUN: not ttt-run %t/complex.mlir --random-inputs=1 --outputs=%t/out.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// RUN: not ls %t/out.npz
// PIPELINE: ttt-run: error: {{.*}}complex.mlir:5:10: ttt-to-cpu pipeline failed: 'complex.create' has no lowering to the LLVM dialect
// PIPELINE-NOT: {{.}}

// RUN: not ttt-run %t/extern.mlir --random-inputs=1 --outputs=%t/out.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JIT
// RUN: not ls %t/out.npz
// JIT: ttt-run: error: {{.*}}extern.mlir: JIT compilation failed: Symbols not found: [ opaque ]{{.*}}
// JIT-NOT: {{.}}

// RUN: not ttt-run %t/static.mlir --random-inputs=1 --shapes=3x4,4x4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPES
// SHAPES: ttt-run: error: --shapes: argument 1 (tensor<?x5xf32>): dimension 1 must be 5, got 4

// RUN: not ttt-run %t/static.mlir --random-inputs=1 --shapes=3x4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SHAPECOUNT
// SHAPECOUNT: ttt-run: error: --shapes: gives 1 shape, but @main takes 2 arguments

// RUN: not ttt-run %t/one.mlir --random-inputs=1 --inputs=%t/f64.npz 2>&1 \
// RUN:   | FileCheck %s --check-prefix=EXCLUSIVE
// EXCLUSIVE: ttt-run: error: command line: --inputs and --random-inputs exclude each other

// RUN: not ttt-run %t/one.mlir --repeat=many 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FLAG
// FLAG: ttt-run: error: command line: for the --repeat option: 'many' value invalid{{.*}}
// FLAG-NOT: {{.}}

//--- one.mlir
func.func @main(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %a : tensor<?x?xf32>
}

//--- two.mlir
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  return %b : tensor<?x?xf32>
}

//--- static.mlir
func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) -> tensor<?x5xf32> {
  return %b : tensor<?x5xf32>
}

//--- f64.mlir
func.func @main(%a: tensor<?x?xf64>) -> tensor<?x?xf64> {
  return %a : tensor<?x?xf64>
}

//--- several.mlir
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
func.func @g(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}

//--- bf16.mlir
func.func @main(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  return %a : tensor<4xbf16>
}

//--- extern.mlir
func.func private @opaque(tensor<?xf32>) -> tensor<?xf32>
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = func.call @opaque(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

//--- complex.mlir
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<?xf32>) outs(%a : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = complex.create %x, %x : complex<f32>
    %m = complex.abs %c : complex<f32>
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

//--- bad.mlir
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = foo.bar %a
  return %0 : tensor<?xf32>
}

//--- garbage.npz
this is not an archive
