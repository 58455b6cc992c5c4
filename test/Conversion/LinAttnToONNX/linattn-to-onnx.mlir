// linattn-to-onnx: every linattn op inside an onnx.graph becomes default-domain
// ONNX nodes (opset 17); sizes that are dynamic come from Shape nodes.
// RUN: ttt-opt %s --linattn-to-onnx --split-input-file | FileCheck %s

// SwiGLU: two MatMuls that broadcast the [H, D, F] weights over the batch;
// the last node carries the op's own result type.
// CHECK-LABEL: onnx.graph @swiglu
// CHECK: %[[GATE:.+]] = onnx.node "MatMul"(%x, %w0)
// CHECK: %[[UP:.+]] = onnx.node "MatMul"(%x, %w2)
// CHECK: %[[SIG:.+]] = onnx.node "Sigmoid"(%[[GATE]])
// CHECK: %[[SILU:.+]] = onnx.node "Mul"(%[[GATE]], %[[SIG]])
// CHECK: %[[PHI:.+]] = onnx.node "Mul"(%[[SILU]], %[[UP]]) {{.*}} -> tensor<?x2x?x6xf32>
// CHECK: onnx.yield %[[PHI]]
// CHECK-NOT: linattn.
onnx.graph @swiglu(%x: tensor<?x2x?x4xf32> {onnx.name = "x"}) -> (tensor<?x2x?x6xf32> {onnx.name = "y"}) {
  %w0 = onnx.initializer "w0" dense<0.5> : tensor<2x4x6xf32>
  %w2 = onnx.initializer "w2" dense<0.25> : tensor<2x4x6xf32>
  %y = linattn.feature_map %x weights(%w0, %w2 : tensor<2x4x6xf32>, tensor<2x4x6xf32>) kind = swiglu : tensor<?x2x?x4xf32> -> tensor<?x2x?x6xf32>
  onnx.yield %y : tensor<?x2x?x6xf32>
}

// -----

// MLP with a bias, relu, and the appended constant feature (a Pad by one
// with the value 1).
// CHECK-LABEL: onnx.graph @mlp_append_one
// CHECK: %[[Z:.+]] = onnx.node "MatMul"(%x, %w0)
// CHECK: %[[ZB:.+]] = onnx.node "Add"(%[[Z]], %b0)
// CHECK: %[[R:.+]] = onnx.node "Relu"(%[[ZB]])
// CHECK: %[[ONE:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK: %[[Z7:.+]] = onnx.node "Constant"() attrs {value = dense<0> : tensor<7xi64>}
// CHECK: %[[PADS:.+]] = onnx.node "Concat"(%[[Z7]], %[[ONE]]) attrs {axis = 0 : i64}
// CHECK: %[[ONEF:.+]] = onnx.node "Constant"() attrs {value = dense<1.000000e+00> : tensor<f32>}
// CHECK: onnx.node "Pad"(%[[R]], %[[PADS]], %[[ONEF]]) {{.*}} -> tensor<?x2x?x7xf32>
onnx.graph @mlp_append_one(%x: tensor<?x2x?x4xf32> {onnx.name = "x"}) -> (tensor<?x2x?x7xf32> {onnx.name = "y"}) {
  %w0 = onnx.initializer "w0" dense<0.5> : tensor<2x4x6xf32>
  %b0 = onnx.initializer "b0" dense<0.1> : tensor<2x1x6xf32>
  %y = linattn.feature_map %x weights(%w0, %b0 : tensor<2x4x6xf32>, tensor<2x1x6xf32>) kind = mlp activation = relu append_one : tensor<?x2x?x4xf32> -> tensor<?x2x?x7xf32>
  onnx.yield %y : tensor<?x2x?x7xf32>
}

// -----

// Per-chunk contributions: N = (T + C - 1) / C, pad T to N * C (the end of
// axis 2 only), view as [B, H, N, C, F], contract the C tokens with one
// batched MatMul; `mean` divides by min(C, T - n C).
// CHECK-LABEL: onnx.graph @chunk_reduce
// CHECK: %[[ETA:.+]] = onnx.node "Unsqueeze"(%eta, %{{.+}})
// CHECK: %[[V:.+]] = onnx.node "Mul"(%v, %[[ETA]])
// CHECK: %[[T:.+]] = onnx.node "Shape"(%k) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[C:.+]] = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>}
// CHECK: %[[CM1:.+]] = onnx.node "Constant"() attrs {value = dense<3> : tensor<1xi64>}
// CHECK: %[[TC:.+]] = onnx.node "Add"(%[[T]], %[[CM1]])
// CHECK: %[[C2:.+]] = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>}
// CHECK: %[[N:.+]] = onnx.node "Div"(%[[TC]], %[[C2]])
// CHECK: %[[NC:.+]] = onnx.node "Mul"(%[[N]], %[[C]])
// CHECK: %[[KT:.+]] = onnx.node "Shape"(%k) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[PAD:.+]] = onnx.node "Sub"(%[[NC]], %[[KT]])
// CHECK: %[[Z6:.+]] = onnx.node "Constant"() attrs {value = dense<0> : tensor<6xi64>}
// CHECK: %[[PADS:.+]] = onnx.node "Concat"(%[[Z6]], %[[PAD]], %{{.+}}) attrs {axis = 0 : i64}
// CHECK: %[[KP:.+]] = onnx.node "Pad"(%k, %[[PADS]])
// CHECK: %[[BH:.+]] = onnx.node "Shape"(%[[KP]]) attrs {end = 2 : i64, start = 0 : i64}
// CHECK: %[[KS:.+]] = onnx.node "Concat"(%[[BH]], %[[N]], %[[C]], %{{.+}}) attrs {axis = 0 : i64}
// CHECK: %[[KC:.+]] = onnx.node "Reshape"(%[[KP]], %[[KS]]) {{.*}} -> tensor<?x?x?x?x?xf32>
// CHECK: %[[VP:.+]] = onnx.node "Pad"(%[[V]], %{{.+}})
// CHECK: %[[VC:.+]] = onnx.node "Reshape"(%[[VP]], %{{.+}})
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[KC]]) attrs {perm = array<i64: 0, 1, 2, 4, 3>}
// CHECK: %[[G:.+]] = onnx.node "MatMul"(%[[KT]], %[[VC]])
// CHECK: %[[F:.+]] = onnx.node "Constant"() attrs {value = dense<-5.000000e-01> : tensor<f32>}
// CHECK: %[[GF:.+]] = onnx.node "Mul"(%[[G]], %[[F]])
// CHECK: %[[R:.+]] = onnx.node "Range"
// CHECK: %[[LEN:.+]] = onnx.node "Min"
// CHECK: %[[LENF:.+]] = onnx.node "Cast"(%[[LEN]]) attrs {to = 1 : i64}
// CHECK: %[[L5:.+]] = onnx.node "Unsqueeze"(%[[LENF]], %{{.+}})
// CHECK: %[[OUT:.+]] = onnx.node "Div"(%[[GF]], %[[L5]]) {{.*}} -> tensor<?x2x?x4x3xf32>
// CHECK: onnx.yield %[[OUT]]
onnx.graph @chunk_reduce(%k: tensor<?x2x?x4xf32> {onnx.name = "k"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}, %eta: tensor<?x2x?xf32> {onnx.name = "eta"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "g"}) {
  %g = linattn.chunk_reduce %k, %v scale(%eta : tensor<?x2x?xf32>) chunk_size = 4 factor = -0.5 mean : tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %g : tensor<?x2x?x4x3xf32>
}

// -----

// CHECK-LABEL: onnx.graph @chunk_mean
// CHECK: %[[MC:.+]] = onnx.node "Reshape"(%{{.+}}, %{{.+}}) {{.*}} -> tensor<?x?x?x?xf32>
// CHECK: %[[SUM:.+]] = onnx.node "ReduceSum"(%[[MC]], %{{.+}}) attrs {keepdims = 0 : i64}
// CHECK: %[[LEN:.+]] = onnx.node "Cast"
// CHECK: %[[LEN3:.+]] = onnx.node "Unsqueeze"(%[[LEN]], %{{.+}})
// CHECK: onnx.node "Div"(%[[SUM]], %[[LEN3]]) {{.*}} -> tensor<?x2x?xf32>
onnx.graph @chunk_mean(%m: tensor<?x2x?xf32> {onnx.name = "m"}) -> (tensor<?x2x?xf32> {onnx.name = "mu"}) {
  %mu = linattn.chunk_mean %m chunk_size = 4 : tensor<?x2x?xf32> -> tensor<?x2x?xf32>
  onnx.yield %mu : tensor<?x2x?xf32>
}

// -----

// Additive exclusive scan: an exclusive CumSum over chunks plus S0.
// CHECK-LABEL: onnx.graph @additive
// CHECK: %[[AX:.+]] = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>}
// CHECK: %[[SUM:.+]] = onnx.node "CumSum"(%g, %[[AX]]) attrs {exclusive = 1 : i64}
// CHECK: %[[S0:.+]] = onnx.node "Unsqueeze"(%s0, %{{.+}})
// CHECK: %[[S:.+]] = onnx.node "Add"(%[[SUM]], %[[S0]]) {{.*}} -> tensor<?x2x?x4x3xf32>
// CHECK: onnx.yield %[[S]]
onnx.graph @additive(%g: tensor<?x2x?x4x3xf32> {onnx.name = "g"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "s"}) {
  %s0 = onnx.initializer "s0" dense<1.0> : tensor<2x4x3xf32>
  %s = linattn.scan %g initial(%s0 : tensor<2x4x3xf32>) kind = additive mode = exclusive : tensor<?x2x?x4x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %s : tensor<?x2x?x4x3xf32>
}

// -----

// Decayed scan: a Loop over d = 1, 2, 4, .. while d < N; each round combines
// chunk i with chunk i - d (G_i += a_i G_{i-d}, a_i *= a_{i-d}).
// CHECK-LABEL: onnx.graph @decayed
// CHECK: %[[N:.+]] = onnx.node "Shape"(%g) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[ONE:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK: %[[MORE:.+]] = onnx.node "Less"(%[[ONE]], %[[N]])
// CHECK: %[[COND:.+]] = onnx.node "Squeeze"(%[[MORE]], %{{.+}}) {{.*}} -> tensor<i1>
// CHECK: %[[NONE:.+]] = onnx.none
// CHECK: %[[LOOP:.+]]:3 = onnx.node "Loop"(%[[NONE]], %[[COND]], %[[ONE]], %g, %a)
// CHECK-SAME: body = #onnx.graph<region = 0, name = "linattn_scan0_body"
// CHECK-SAME: -> (tensor<1xi64>, tensor<?x2x?x4x3xf32>, tensor<?x2x?xf32>) graphs {
// CHECK-NEXT: ^bb0(%[[I:.+]]: tensor<i64>, %[[C:.+]]: tensor<i1>, %[[D:.+]]: tensor<1xi64>, %[[S:.+]]: tensor<?x2x?x4x3xf32>, %[[A:.+]]: tensor<?x2x?xf32>):
// CHECK:   %[[REST:.+]] = onnx.node "Sub"(%[[N]], %[[D]])
// CHECK:   %[[SHI:.+]] = onnx.node "Slice"(%[[S]], %[[D]], %[[N]], %{{.+}})
// CHECK:   %[[SLO:.+]] = onnx.node "Slice"(%[[S]], %{{.+}}, %[[REST]], %{{.+}})
// CHECK:   %[[AHI:.+]] = onnx.node "Slice"(%[[A]], %[[D]], %[[N]], %{{.+}})
// CHECK:   %[[ALO:.+]] = onnx.node "Slice"(%[[A]], %{{.+}}, %[[REST]], %{{.+}})
// CHECK:   %[[A5:.+]] = onnx.node "Unsqueeze"(%[[AHI]], %{{.+}})
// CHECK:   %[[AS:.+]] = onnx.node "Mul"(%[[A5]], %[[SLO]])
// CHECK:   %[[COMB:.+]] = onnx.node "Add"(%[[AS]], %[[SHI]])
// CHECK:   %[[AA:.+]] = onnx.node "Mul"(%[[AHI]], %[[ALO]])
// CHECK:   %[[SHEAD:.+]] = onnx.node "Slice"(%[[S]], %{{.+}}, %[[D]], %{{.+}})
// CHECK:   %[[SNEXT:.+]] = onnx.node "Concat"(%[[SHEAD]], %[[COMB]]) attrs {axis = 2 : i64}
// CHECK:   %[[AHEAD:.+]] = onnx.node "Slice"(%[[A]], %{{.+}}, %[[D]], %{{.+}})
// CHECK:   %[[ANEXT:.+]] = onnx.node "Concat"(%[[AHEAD]], %[[AA]]) attrs {axis = 2 : i64}
// CHECK:   %[[DNEXT:.+]] = onnx.node "Mul"(%[[D]], %{{.+}})
// CHECK:   %[[AGAIN:.+]] = onnx.node "Less"(%[[DNEXT]], %[[N]])
// CHECK:   %[[CNEXT:.+]] = onnx.node "Squeeze"(%[[AGAIN]], %{{.+}})
// CHECK:   onnx.yield %[[CNEXT]], %[[DNEXT]], %[[SNEXT]], %[[ANEXT]]
// CHECK: onnx.yield %[[LOOP]]#1
onnx.graph @decayed(%g: tensor<?x2x?x4x3xf32> {onnx.name = "g"}, %a: tensor<?x2x?xf32> {onnx.name = "a"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "s"}) {
  %s = linattn.scan %g decay(%a : tensor<?x2x?xf32>) kind = decayed mode = inclusive : tensor<?x2x?x4x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %s : tensor<?x2x?x4x3xf32>
}

// -----

// Residual affine scan: transitions I + A_c combined by MatMul; the initial
// state enters through the cumulative transitions; exclusive mode prepends
// S0 and keeps the first N states.
// CHECK-LABEL: onnx.graph @residual_affine
// CHECK: %[[EYE:.+]] = onnx.node "Constant"() attrs {value = dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00
// CHECK: %[[M:.+]] = onnx.node "Add"(%t, %[[EYE]])
// CHECK: %[[LOOP:.+]]:3 = onnx.node "Loop"(%{{.+}}, %{{.+}}, %{{.+}}, %g, %[[M]])
// CHECK:   onnx.node "MatMul"
// CHECK:   onnx.node "MatMul"
// CHECK:   onnx.yield
// CHECK: %[[S0:.+]] = onnx.node "Unsqueeze"(%s0, %{{.+}})
// CHECK: %[[MS0:.+]] = onnx.node "MatMul"(%[[LOOP]]#2, %[[S0]])
// CHECK: %[[INC:.+]] = onnx.node "Add"(%[[MS0]], %[[LOOP]]#1)
// CHECK: %[[FIRST:.+]] = onnx.node "Expand"
// CHECK: %[[ALL:.+]] = onnx.node "Concat"(%[[FIRST]], %[[INC]]) attrs {axis = 2 : i64}
// CHECK: %[[N:.+]] = onnx.node "Shape"(%[[INC]]) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[EX:.+]] = onnx.node "Slice"(%[[ALL]], %{{.+}}, %[[N]], %{{.+}}) {{.*}} -> tensor<?x2x?x4x3xf32>
// CHECK: onnx.yield %[[EX]]
onnx.graph @residual_affine(%g: tensor<?x2x?x4x3xf32> {onnx.name = "g"}, %t: tensor<?x2x?x4x4xf32> {onnx.name = "t"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "s"}) {
  %s0 = onnx.initializer "s0" dense<1.0> : tensor<2x4x3xf32>
  %s = linattn.scan %g initial(%s0 : tensor<2x4x3xf32>) transition(%t : tensor<?x2x?x4x4xf32>) kind = residual_affine mode = exclusive : tensor<?x2x?x4x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %s : tensor<?x2x?x4x3xf32>
}

// -----

// Newton-Schulz on [4, 3] states: transposed (rows > cols), normalized by
// the Frobenius norm plus eps, one step X = a X + (b A + c A A) X with
// A = X X^T, transposed back, times the factor.
// CHECK-LABEL: onnx.graph @state_transform
// CHECK: %[[X0:.+]] = onnx.node "Transpose"(%u) attrs {perm = array<i64: 0, 1, 2, 4, 3>}
// CHECK: %[[SQ:.+]] = onnx.node "Mul"(%[[X0]], %[[X0]])
// CHECK: %[[SUM:.+]] = onnx.node "ReduceSum"(%[[SQ]], %{{.+}}) attrs {keepdims = 0 : i64}
// CHECK: %[[SUM5:.+]] = onnx.node "Unsqueeze"(%[[SUM]], %{{.+}})
// CHECK: %[[NORM:.+]] = onnx.node "Sqrt"(%[[SUM5]])
// CHECK: %[[EPS:.+]] = onnx.node "Constant"() attrs {value = dense<1.000000e-07> : tensor<f32>}
// CHECK: %[[DEN:.+]] = onnx.node "Add"(%[[NORM]], %[[EPS]])
// CHECK: %[[X:.+]] = onnx.node "Div"(%[[X0]], %[[DEN]])
// CHECK: %[[XT:.+]] = onnx.node "Transpose"(%[[X]])
// CHECK: %[[A:.+]] = onnx.node "MatMul"(%[[X]], %[[XT]])
// CHECK: %[[AA:.+]] = onnx.node "MatMul"(%[[A]], %[[A]])
// CHECK: %[[CB:.+]] = onnx.node "Constant"() attrs {value = dense<-4.000000e+00> : tensor<f32>}
// CHECK: %[[BA:.+]] = onnx.node "Mul"(%[[CB]], %[[A]])
// CHECK: %[[CC:.+]] = onnx.node "Constant"() attrs {value = dense<2.000000e+00> : tensor<f32>}
// CHECK: %[[CAA:.+]] = onnx.node "Mul"(%[[CC]], %[[AA]])
// CHECK: %[[P:.+]] = onnx.node "Add"(%[[BA]], %[[CAA]])
// CHECK: %[[PX:.+]] = onnx.node "MatMul"(%[[P]], %[[X]])
// CHECK: %[[CA:.+]] = onnx.node "Constant"() attrs {value = dense<3.000000e+00> : tensor<f32>}
// CHECK: %[[AX:.+]] = onnx.node "Mul"(%[[CA]], %[[X]])
// CHECK: %[[X1:.+]] = onnx.node "Add"(%[[AX]], %[[PX]])
// CHECK: %[[BACK:.+]] = onnx.node "Transpose"(%[[X1]])
// CHECK: onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: onnx.node "Mul"(%[[BACK]], %{{.+}}) {{.*}} -> tensor<?x2x?x4x3xf32>
onnx.graph @state_transform(%u: tensor<?x2x?x4x3xf32> {onnx.name = "u"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "d"}) {
  %d = linattn.state_transform %u steps = 1 coeffs = [3.0, -4.0, 2.0] eps = 1.0e-07 factor = 0.5 : tensor<?x2x?x4x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %d : tensor<?x2x?x4x3xf32>
}

// -----

// o = Q_c S_c for every chunk, viewed back as [B, H, N * C, E] and sliced
// to the T tokens.
// CHECK-LABEL: onnx.graph @chunk_apply
// CHECK: %[[T:.+]] = onnx.node "Shape"(%q) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[QC:.+]] = onnx.node "Reshape"
// CHECK: %[[O:.+]] = onnx.node "MatMul"(%[[QC]], %s)
// CHECK: %[[FLAT:.+]] = onnx.node "Reshape"(%[[O]], %{{.+}})
// CHECK: %[[OUT:.+]] = onnx.node "Slice"(%[[FLAT]], %{{.+}}, %[[T]], %{{.+}}) {{.*}} -> tensor<?x2x?x3xf32>
// CHECK: onnx.yield %[[OUT]]
onnx.graph @chunk_apply(%q: tensor<?x2x?x4xf32> {onnx.name = "q"}, %s: tensor<?x2x?x4x3xf32> {onnx.name = "s"}) -> (tensor<?x2x?x3xf32> {onnx.name = "o"}) {
  %o = linattn.chunk_apply %q, %s chunk_size = 4 : tensor<?x2x?x4xf32>, tensor<?x2x?x4x3xf32> -> tensor<?x2x?x3xf32>
  onnx.yield %o : tensor<?x2x?x3xf32>
}

// -----

// The token-causal term inside each chunk: the values scaled by the per-token
// rates and the factor, the scores Q_c K_c^T times a constant lower-triangular
// mask, then the values, added to Q_c S_c.
// CHECK-LABEL: onnx.graph @chunk_apply_intra
// CHECK: %[[QC:.+]] = onnx.node "Reshape"
// CHECK: %[[O:.+]] = onnx.node "MatMul"(%[[QC]], %s)
// CHECK: %[[KC:.+]] = onnx.node "Reshape"
// CHECK: %[[ETA:.+]] = onnx.node "Unsqueeze"(%eta, %{{.+}})
// CHECK: %[[VE:.+]] = onnx.node "Mul"(%v, %[[ETA]])
// CHECK: %[[HALF:.+]] = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>}
// CHECK: %[[VS:.+]] = onnx.node "Mul"(%[[VE]], %[[HALF]])
// CHECK: %[[VC:.+]] = onnx.node "Reshape"
// CHECK: %[[KT:.+]] = onnx.node "Transpose"(%[[KC]]) attrs {perm = array<i64: 0, 1, 2, 4, 3>}
// CHECK: %[[SC:.+]] = onnx.node "MatMul"(%[[QC]], %[[KT]])
// CHECK: %[[MASK:.+]] = onnx.node "Constant"() attrs {value = dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00], [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00]]> : tensor<4x4xf32>}
// CHECK: %[[MASKED:.+]] = onnx.node "Mul"(%[[SC]], %[[MASK]])
// CHECK: %[[INTRA:.+]] = onnx.node "MatMul"(%[[MASKED]], %[[VC]])
// CHECK: onnx.node "Add"(%[[O]], %[[INTRA]])
// CHECK-NOT: linattn.
onnx.graph @chunk_apply_intra(%q: tensor<?x2x?x4xf32> {onnx.name = "q"}, %k: tensor<?x2x?x4xf32> {onnx.name = "k"}, %s: tensor<?x2x?x4x3xf32> {onnx.name = "s"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}, %eta: tensor<?x2x?xf32> {onnx.name = "eta"}) -> (tensor<?x2x?x3xf32> {onnx.name = "o"}) {
  %o = linattn.chunk_apply %q, %s intra(%k, %v : tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32>) intra_scale(%eta : tensor<?x2x?xf32>) chunk_size = 4 intra_factor = 5.000000e-01 : tensor<?x2x?x4xf32>, tensor<?x2x?x4x3xf32> -> tensor<?x2x?x3xf32>
  onnx.yield %o : tensor<?x2x?x3xf32>
}

// -----

// A learning-rate column of a [B, H, T, n] scale is a Gather with a scalar
// index, which drops the column axis.
// CHECK-LABEL: onnx.graph @scale_column
// CHECK: %[[COL:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>}
// CHECK: %[[ETA:.+]] = onnx.node "Gather"(%lr, %[[COL]]) attrs {axis = 3 : i64} {{.*}} -> tensor<?x?x?xf32>
// CHECK: %[[ETA4:.+]] = onnx.node "Unsqueeze"(%[[ETA]], %{{.+}})
// CHECK: onnx.node "Mul"(%v, %[[ETA4]])
// CHECK-NOT: linattn.
onnx.graph @scale_column(%k: tensor<?x2x?x4xf32> {onnx.name = "k"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}, %lr: tensor<?x2x?x3xf32> {onnx.name = "lr"}) -> (tensor<?x2x?x4x3xf32> {onnx.name = "g"}) {
  %g = linattn.chunk_reduce %k, %v scale(%lr : tensor<?x2x?x3xf32>) scale_column = 1 chunk_size = 4 : tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32> -> tensor<?x2x?x4x3xf32>
  onnx.yield %g : tensor<?x2x?x4x3xf32>
}

// -----

// Without a chunk size the whole sequence is one chunk: the chunked view is
// a Reshape to [B, H, 1, T, ..] (no Pad), and a mean divides by T.
// CHECK-LABEL: onnx.graph @whole_sequence
// CHECK: %[[T:.+]] = onnx.node "Shape"(%k) attrs {end = 3 : i64, start = 2 : i64}
// CHECK: %[[ONE:.+]] = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>}
// CHECK-NOT: "Pad"
// CHECK: %[[BH:.+]] = onnx.node "Shape"(%k) attrs {end = 2 : i64, start = 0 : i64}
// CHECK: %[[SHAPE:.+]] = onnx.node "Concat"(%[[BH]], %[[ONE]], %[[T]], %{{.+}})
// CHECK: onnx.node "Reshape"(%k, %[[SHAPE]])
// CHECK: onnx.node "Min"(%[[T]], %{{.+}})
// CHECK: onnx.node "Div"
// CHECK-NOT: linattn.
onnx.graph @whole_sequence(%k: tensor<?x2x?x4xf32> {onnx.name = "k"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}) -> (tensor<?x2x1x4x3xf32> {onnx.name = "g"}) {
  %g = linattn.chunk_reduce %k, %v mean : tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32> -> tensor<?x2x1x4x3xf32>
  onnx.yield %g : tensor<?x2x1x4x3xf32>
}

// -----

// linattn.attention is exported through its decomposition into the chunk ops
// (linattn-decompose): here the full mask's one chunk_reduce and chunk_apply.
// CHECK-LABEL: onnx.graph @attention_full
// CHECK: onnx.node "MatMul"
// CHECK: onnx.node "MatMul"
// CHECK-NOT: linattn.
// CHECK: onnx.yield
onnx.graph @attention_full(%q: tensor<?x2x?x4xf32> {onnx.name = "q"}, %v: tensor<?x2x?x3xf32> {onnx.name = "v"}) -> (tensor<?x2x?x3xf32> {onnx.name = "o"}) {
  %o = linattn.attention %q, %q, %v mask = full : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x3xf32> -> tensor<?x2x?x3xf32>
  onnx.yield %o : tensor<?x2x?x3xf32>
}

// -----

// Ops outside onnx.graph are left alone.
// CHECK-LABEL: func.func @outside
// CHECK: linattn.chunk_mean
func.func @outside(%m: tensor<?x2x?xf32>) -> tensor<?x2x?xf32> {
  %mu = linattn.chunk_mean %m chunk_size = 4 : tensor<?x2x?xf32> -> tensor<?x2x?xf32>
  return %mu : tensor<?x2x?xf32>
}

// -----

// A 16-bit layer's linattn form runs in f32: its operands widened and its
// output rounded back are Cast nodes (TensorProto FLOAT = 1, FLOAT16 = 10).
// CHECK-LABEL: onnx.graph @half_layer_casts
// CHECK: %[[WIDE:.+]] = onnx.node "Cast"(%x) attrs {to = 1 : i64} {{.*}} -> tensor<?x2x?x4xf32>
// CHECK: %[[PHI:.+]] = onnx.node "Mul"({{.*}} -> tensor<?x2x?x6xf32>
// CHECK: %[[NARROW:.+]] = onnx.node "Cast"(%[[PHI]]) attrs {to = 10 : i64} {{.*}} -> tensor<?x2x?x6xf16>
// CHECK: onnx.yield %[[NARROW]]
onnx.graph @half_layer_casts(%x: tensor<?x2x?x4xf16> {onnx.name = "x"}) -> (tensor<?x2x?x6xf16> {onnx.name = "y"}) {
  %w0 = onnx.initializer "w0" dense<0.5> : tensor<2x4x6xf32>
  %w2 = onnx.initializer "w2" dense<0.25> : tensor<2x4x6xf32>
  %xw = arith.extf %x : tensor<?x2x?x4xf16> to tensor<?x2x?x4xf32>
  %y = linattn.feature_map %xw weights(%w0, %w2 : tensor<2x4x6xf32>, tensor<2x4x6xf32>) kind = swiglu : tensor<?x2x?x4xf32> -> tensor<?x2x?x6xf32>
  %yn = arith.truncf %y : tensor<?x2x?x6xf32> to tensor<?x2x?x6xf16>
  onnx.yield %yn : tensor<?x2x?x6xf16>
}
