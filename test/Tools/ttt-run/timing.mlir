// --repeat prints the median time to stderr, leaving stdout to the results;
// --print-ir prints the lowered module instead of running it.
// RUN: ttt-run %s --random-inputs=1 --repeat=3 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=TIME
// RUN: ttt-run %s --random-inputs=1 --repeat=3 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=RESULT
// RUN: ttt-run %s --print-ir | FileCheck %s --check-prefix=IR

// TIME: ttt-run: median of 3 runs: {{[0-9]+\.[0-9]+}} ms
// RESULT: result0: tensor<8xf32> = [1, 1, 1, 1, 1, 1, 1, 1]
// IR: llvm.func @main(
// IR-NOT: tensor<

func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %s = math.sin %a : tensor<?xf32>
  %c = math.cos %a : tensor<?xf32>
  %s2 = arith.mulf %s, %s : tensor<?xf32>
  %c2 = arith.mulf %c, %c : tensor<?xf32>
  %one = arith.addf %s2, %c2 : tensor<?xf32>
  return %one : tensor<?xf32>
}
