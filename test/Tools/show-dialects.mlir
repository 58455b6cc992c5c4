// ttt-opt registers the project's dialects next to the upstream ones.
// RUN: ttt-opt --show-dialects | FileCheck %s
// CHECK: Available Dialects:
// CHECK-SAME: ,linattn,
// CHECK-SAME: ,ttt,
