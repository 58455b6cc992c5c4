// RUN: ttt-opt %s --ttt-raise-onnx="raise-all=true" 2>&1 | FileCheck %s

// Matcher rule: in a Loop, a causal (dual-form) MSE layer whose weight is
// stored output x input (`W [H, Dout, Din]`, applied as `(W qᵀ)ᵀ`) reads the
// carried, stored weight both in its outputs and in its residual
// `(W kᵀ)ᵀ - v`: the residual is read as applied to the stored weight, and the
// layer op gets that weight turned to input x output.
// The chunk length `Cast(e - s)` the gradient is averaged by is a factor, not
// a weight. (test/python/onnx_styles.py, family linear_mse, order causal,
// orientation w_xt, form loop_sequence, chunks of 4 tokens.)

// CHECK: remark: TTT layer: ONNX Loop over chunks (chunks of 4 tokens), fast weights 'W0_1': raised to ttt.kvb_layer; exact lowering: affine scan over chunk states;
// CHECK-SAME: not rewritten: the causal order of an affine (MSE) layer reads state-dependent values inside the chunk
// CHECK-LABEL: onnx.graph @ttt_style(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<?x1x?x4xf32> {{.*}}onnx.name = "q"}, %[[K:[^:]+]]: tensor<?x1x?x4xf32> {{.*}}onnx.name = "k"}, %[[V:[^:]+]]: tensor<?x1x?x3xf32> {{.*}}onnx.name = "v"}
// CHECK: %[[W:.+]] = onnx.node "Transpose"(%W0_1) attrs {perm = array<i64: 0, 2, 1>} : (tensor<1x3x4xf32>) -> tensor<1x4x3xf32>
// CHECK: ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W]] : tensor<1x4x3xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse, reduction = mean> update = #ttt.update<lr_scale = 2.000000e+00> schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
// CHECK-NOT: "Loop"
// CHECK: onnx.yield
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>], onnx.producer_name = "onnx_styles"} {
  onnx.graph @ttt_style(%q: tensor<?x1x?x4xf32> {onnx.dim_params = ["B", "", "T", ""], onnx.name = "q"}, %k: tensor<?x1x?x4xf32> {onnx.dim_params = ["B", "", "T", ""], onnx.name = "k"}, %v: tensor<?x1x?x3xf32> {onnx.dim_params = ["B", "", "T", ""], onnx.name = "v"}) -> (tensor<?x1x?x3xf32> {onnx.dim_params = ["B", "", "T", ""], onnx.name = "o"}) {
    %W0_1 = onnx.initializer "W0_1" dense<[[[0.172792092, -0.651578605, -0.268476605, 0.14706625], [0.41080907, 0.452677935, 0.290559053, 0.014211121], [0.165218532, 0.223187283, 0.182286203, 0.273356497]]]> : tensor<1x3x4xf32>
    %shape_2 = onnx.node "Shape"(%q) {outputs = ["shape_2"]} : (tensor<?x1x?x4xf32>) -> tensor<4xi64>
    %c_3 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["c_3"]} : () -> tensor<i64>
    %gather_4 = onnx.node "Gather"(%shape_2, %c_3) attrs {axis = 0 : i64} {outputs = ["gather_4"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c_5 = onnx.node "Constant"() attrs {value = dense<-3> : tensor<i64>} {outputs = ["c_5"]} : () -> tensor<i64>
    %sub_6 = onnx.node "Sub"(%gather_4, %c_5) {outputs = ["sub_6"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_7 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_7"]} : () -> tensor<i64>
    %div_8 = onnx.node "Div"(%sub_6, %c_7) {outputs = ["div_8"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %cast_9 = onnx.node "Cast"(%div_8) attrs {to = 7 : i64} {outputs = ["cast_9"]} : (tensor<i64>) -> tensor<i64>
    %c_69 = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["c_69"]} : () -> tensor<i1>
    %sequenceempty_70 = onnx.node "SequenceEmpty"() attrs {dtype = 1 : i64} {outputs = ["sequenceempty_70"]} : () -> !onnx.seq<tensor<*xf32>>
    %loop_71, %loop_72 = onnx.node "Loop"(%cast_9, %c_69, %W0_1, %sequenceempty_70) attrs {body = #onnx.graph<region = 0, name = "body_68", inputs = ["i_10", "cond_11", "w_in_12", "acc_in_13"], outputs = ["identity_66", "sub_65", "sequenceinsert_67"]>} {outputs = ["loop_71", "loop_72"]} : (tensor<i64>, tensor<i1>, tensor<1x3x4xf32>, !onnx.seq<tensor<*xf32>>) -> (tensor<*xf32>, !onnx.seq<tensor<*xf32>>) graphs {
    ^bb0(%i_10: tensor<i64>, %cond_11: tensor<i1>, %w_in_12: tensor<*xf32>, %acc_in_13: !onnx.seq<tensor<*xf32>>):
      %c_14 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_14"]} : () -> tensor<i64>
      %mul_15 = onnx.node "Mul"(%i_10, %c_14) {outputs = ["mul_15"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %c_16 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_16"]} : () -> tensor<i64>
      %add_17 = onnx.node "Add"(%mul_15, %c_16) {outputs = ["add_17"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %min_18 = onnx.node "Min"(%add_17, %gather_4) {outputs = ["min_18"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %sub_19 = onnx.node "Sub"(%min_18, %mul_15) {outputs = ["sub_19"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %cast_20 = onnx.node "Cast"(%sub_19) attrs {to = 1 : i64} {outputs = ["cast_20"]} : (tensor<i64>) -> tensor<f32>
      %c_21 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_21"]} : () -> tensor<1xi64>
      %unsqueeze_22 = onnx.node "Unsqueeze"(%mul_15, %c_21) {outputs = ["unsqueeze_22"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_23 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_23"]} : () -> tensor<1xi64>
      %unsqueeze_24 = onnx.node "Unsqueeze"(%min_18, %c_23) {outputs = ["unsqueeze_24"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_25 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_25"]} : () -> tensor<1xi64>
      %c_26 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_26"]} : () -> tensor<1xi64>
      %slice_27 = onnx.node "Slice"(%q, %unsqueeze_22, %unsqueeze_24, %c_25, %c_26) {outputs = ["slice_27"]} : (tensor<?x1x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_28 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_28"]} : () -> tensor<1xi64>
      %unsqueeze_29 = onnx.node "Unsqueeze"(%mul_15, %c_28) {outputs = ["unsqueeze_29"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_30 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_30"]} : () -> tensor<1xi64>
      %unsqueeze_31 = onnx.node "Unsqueeze"(%min_18, %c_30) {outputs = ["unsqueeze_31"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_32 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_32"]} : () -> tensor<1xi64>
      %c_33 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_33"]} : () -> tensor<1xi64>
      %slice_34 = onnx.node "Slice"(%k, %unsqueeze_29, %unsqueeze_31, %c_32, %c_33) {outputs = ["slice_34"]} : (tensor<?x1x?x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_35 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_35"]} : () -> tensor<1xi64>
      %unsqueeze_36 = onnx.node "Unsqueeze"(%mul_15, %c_35) {outputs = ["unsqueeze_36"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_37 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_37"]} : () -> tensor<1xi64>
      %unsqueeze_38 = onnx.node "Unsqueeze"(%min_18, %c_37) {outputs = ["unsqueeze_38"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_39 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_39"]} : () -> tensor<1xi64>
      %c_40 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_40"]} : () -> tensor<1xi64>
      %slice_41 = onnx.node "Slice"(%v, %unsqueeze_36, %unsqueeze_38, %c_39, %c_40) {outputs = ["slice_41"]} : (tensor<?x1x?x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %transpose_42 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_42"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_43 = onnx.node "MatMul"(%slice_27, %transpose_42) {outputs = ["matmul_43"]} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %trilu_44 = onnx.node "Trilu"(%matmul_43) attrs {upper = 0 : i64} {outputs = ["trilu_44"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %transpose_45 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_45"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_46 = onnx.node "MatMul"(%w_in_12, %transpose_45) {outputs = ["matmul_46"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %transpose_47 = onnx.node "Transpose"(%matmul_46) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_47"]} : (tensor<*xf32>) -> tensor<*xf32>
      %sub_48 = onnx.node "Sub"(%transpose_47, %slice_41) {outputs = ["sub_48"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %matmul_49 = onnx.node "MatMul"(%trilu_44, %sub_48) {outputs = ["matmul_49"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
      %div_50 = onnx.node "Div"(%matmul_49, %cast_20) {outputs = ["div_50"]} : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
      %transpose_51 = onnx.node "Transpose"(%slice_27) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_51"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_52 = onnx.node "MatMul"(%w_in_12, %transpose_51) {outputs = ["matmul_52"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %transpose_53 = onnx.node "Transpose"(%matmul_52) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_53"]} : (tensor<*xf32>) -> tensor<*xf32>
      %c_54 = onnx.node "Constant"() attrs {value = dense<-2.000000e+00> : tensor<f32>} {outputs = ["c_54"]} : () -> tensor<f32>
      %mul_55 = onnx.node "Mul"(%div_50, %c_54) {outputs = ["mul_55"]} : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
      %add_56 = onnx.node "Add"(%transpose_53, %mul_55) {outputs = ["add_56"]} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
      %transpose_57 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_57"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_58 = onnx.node "MatMul"(%w_in_12, %transpose_57) {outputs = ["matmul_58"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %transpose_59 = onnx.node "Transpose"(%slice_41) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_59"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %sub_60 = onnx.node "Sub"(%matmul_58, %transpose_59) {outputs = ["sub_60"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %matmul_61 = onnx.node "MatMul"(%sub_60, %slice_34) {outputs = ["matmul_61"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %div_62 = onnx.node "Div"(%matmul_61, %cast_20) {outputs = ["div_62"]} : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
      %c_63 = onnx.node "Constant"() attrs {value = dense<2.000000e+00> : tensor<f32>} {outputs = ["c_63"]} : () -> tensor<f32>
      %mul_64 = onnx.node "Mul"(%div_62, %c_63) {outputs = ["mul_64"]} : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
      %sub_65 = onnx.node "Sub"(%w_in_12, %mul_64) {outputs = ["sub_65"]} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
      %identity_66 = onnx.node "Identity"(%cond_11) {outputs = ["identity_66"]} : (tensor<i1>) -> tensor<i1>
      %sequenceinsert_67 = onnx.node "SequenceInsert"(%acc_in_13, %add_56) {outputs = ["sequenceinsert_67"]} : (!onnx.seq<tensor<*xf32>>, tensor<*xf32>) -> !onnx.seq<tensor<*xf32>>
      onnx.yield %identity_66, %sub_65, %sequenceinsert_67 : tensor<i1>, tensor<*xf32>, !onnx.seq<tensor<*xf32>>
    }
    %o = onnx.node "ConcatFromSequence"(%loop_72) attrs {axis = 2 : i64} {outputs = ["o"]} : (!onnx.seq<tensor<*xf32>>) -> tensor<?x1x?x3xf32>
    onnx.yield %o : tensor<?x1x?x3xf32>
  }
}

