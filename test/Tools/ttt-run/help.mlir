// ttt-run --help documents every flag, and only ttt-run's own.
// RUN: ttt-run --help | FileCheck %s

// CHECK: USAGE: ttt-run [options] <input .mlir file>
// CHECK-NOT: --mlir-
// CHECK-DAG: --dim-size=<n>
// CHECK-DAG: --entry=<name>
// CHECK-DAG: --fuse-elementwise
// CHECK-DAG: --inputs=<file>
// CHECK-DAG: --num-threads=<n>
// CHECK-DAG: --openmp
// CHECK-DAG: --opt-level=<0-3>
// CHECK-DAG: --outputs=<file.npz>
// CHECK-DAG: --print-ir
// CHECK-DAG: --print-limit=<n>
// CHECK-DAG: --print-results
// CHECK-DAG: --random-inputs=<seed>
// CHECK-DAG: --repeat=<n>
// CHECK-DAG: --runtime-checks
// CHECK-DAG: --save-inputs=<file.npz>
// CHECK-DAG: --shapes=<shape,...>
// CHECK-DAG: --shared-libs=<lib.so,...>
