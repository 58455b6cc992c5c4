// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file 2>/dev/null | FileCheck %s
// RUN: ttt-opt %s --ttt-raise-onnx --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A scripted Loop (static shapes) that writes each chunk's output into the
// buffer it carries, `out[:, :, s:e] = o`, as ScatterND at the window
// [i C, i C + len) of a zero [1, 1, 6, 2] buffer, and the last chunk's output
// after the loop at [4, 6). The writes tile the buffer (the body's start is its
// queries' start, the loop walks the chunks, the last write covers the rest),
// so the buffer holds the chunk outputs joined along time: the layer is raised.

// REMARK: remark: TTT layer: ONNX Loop over chunks (chunks of 4 tokens), fast weights 'W0_1': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: onnx.graph @buffer_loop(
// CHECK-SAME: %[[Q:[a-z]+]]: tensor<1x1x6x2xf32>
// CHECK-NOT: "Loop"
// CHECK-NOT: "ScatterND"
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]]
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK: %[[NAMED:.+]] = onnx.node "Identity"(%[[O]]) {doc_string = "ttt: parallel linear-attention form of a TTT layer, {{.+}}", outputs = ["o"]}
// CHECK-NEXT: onnx.yield %[[NAMED]]

module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>], onnx.producer_name = "onnx_styles"} {
  onnx.graph @buffer_loop(%q: tensor<1x1x6x2xf32> {onnx.name = "q"}, %k: tensor<1x1x6x2xf32> {onnx.name = "k"}, %v: tensor<1x1x6x2xf32> {onnx.name = "v"}) -> (tensor<1x1x6x2xf32> {onnx.name = "o"}) {
    %W0_1 = onnx.initializer "W0_1" dense<[[[8.69849755E-4, 2.112450e-01], [-0.193844736, -0.629743516]]]> : tensor<1x2x2xf32>
    %shape_2 = onnx.node "Shape"(%q) {outputs = ["shape_2"]} : (tensor<1x1x6x2xf32>) -> tensor<4xi64>
    %c_3 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["c_3"]} : () -> tensor<i64>
    %gather_4 = onnx.node "Gather"(%shape_2, %c_3) attrs {axis = 0 : i64} {outputs = ["gather_4"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c_5 = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["c_5"]} : () -> tensor<i64>
    %sub_6 = onnx.node "Sub"(%gather_4, %c_5) {outputs = ["sub_6"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_7 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_7"]} : () -> tensor<i64>
    %div_8 = onnx.node "Div"(%sub_6, %c_7) {outputs = ["div_8"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %cast_9 = onnx.node "Cast"(%div_8) attrs {to = 7 : i64} {outputs = ["cast_9"]} : (tensor<i64>) -> tensor<i64>
    %c_62 = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["c_62"]} : () -> tensor<i1>
    %c_63 = onnx.node "Constant"() attrs {value = dense<0.000000e+00> : tensor<1x1x6x2xf32>} {outputs = ["c_63"]} : () -> tensor<1x1x6x2xf32>
    %loop_64, %loop_65 = onnx.node "Loop"(%cast_9, %c_62, %W0_1, %c_63) attrs {body = #onnx.graph<region = 0, name = "body_61", inputs = ["i_10", "cond_11", "w_in_12", "acc_in_13"], outputs = ["identity_49", "add_48", "scatternd_60"]>} {outputs = ["loop_64", "loop_65"]} : (tensor<i64>, tensor<i1>, tensor<1x2x2xf32>, tensor<1x1x6x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) graphs {
    ^bb0(%i_10: tensor<i64>, %cond_11: tensor<i1>, %w_in_12: tensor<*xf32>, %acc_in_13: tensor<*xf32>):
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
      %slice_27 = onnx.node "Slice"(%q, %unsqueeze_22, %unsqueeze_24, %c_25, %c_26) {outputs = ["slice_27"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_28 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_28"]} : () -> tensor<1xi64>
      %unsqueeze_29 = onnx.node "Unsqueeze"(%mul_15, %c_28) {outputs = ["unsqueeze_29"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_30 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_30"]} : () -> tensor<1xi64>
      %unsqueeze_31 = onnx.node "Unsqueeze"(%min_18, %c_30) {outputs = ["unsqueeze_31"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_32 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_32"]} : () -> tensor<1xi64>
      %c_33 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_33"]} : () -> tensor<1xi64>
      %slice_34 = onnx.node "Slice"(%k, %unsqueeze_29, %unsqueeze_31, %c_32, %c_33) {outputs = ["slice_34"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_35 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_35"]} : () -> tensor<1xi64>
      %unsqueeze_36 = onnx.node "Unsqueeze"(%mul_15, %c_35) {outputs = ["unsqueeze_36"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_37 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_37"]} : () -> tensor<1xi64>
      %unsqueeze_38 = onnx.node "Unsqueeze"(%min_18, %c_37) {outputs = ["unsqueeze_38"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_39 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_39"]} : () -> tensor<1xi64>
      %c_40 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_40"]} : () -> tensor<1xi64>
      %slice_41 = onnx.node "Slice"(%v, %unsqueeze_36, %unsqueeze_38, %c_39, %c_40) {outputs = ["slice_41"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %matmul_42 = onnx.node "MatMul"(%slice_27, %w_in_12) {outputs = ["matmul_42"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
      %transpose_43 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_43"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_44 = onnx.node "MatMul"(%transpose_43, %slice_41) {outputs = ["matmul_44"]} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %neg_45 = onnx.node "Neg"(%matmul_44) {outputs = ["neg_45"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %c_46 = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c_46"]} : () -> tensor<f32>
      %mul_47 = onnx.node "Mul"(%neg_45, %c_46) {outputs = ["mul_47"]} : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
      %add_48 = onnx.node "Add"(%w_in_12, %mul_47) {outputs = ["add_48"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %identity_49 = onnx.node "Identity"(%cond_11) {outputs = ["identity_49"]} : (tensor<i1>) -> tensor<i1>
      %c_50 = onnx.node "Constant"() attrs {value = dense<[[[[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3]]]]> : tensor<1x1x4x3xi64>} {outputs = ["c_50"]} : () -> tensor<1x1x4x3xi64>
      %c_51 = onnx.node "Constant"() attrs {value = dense<[0, 0, 1]> : tensor<3xi64>} {outputs = ["c_51"]} : () -> tensor<3xi64>
      %mul_52 = onnx.node "Mul"(%mul_15, %c_51) {outputs = ["mul_52"]} : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
      %add_53 = onnx.node "Add"(%c_50, %mul_52) {outputs = ["add_53"]} : (tensor<1x1x4x3xi64>, tensor<3xi64>) -> tensor<1x1x4x3xi64>
      %c_54 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_54"]} : () -> tensor<1xi64>
      %sub_55 = onnx.node "Sub"(%min_18, %mul_15) {outputs = ["sub_55"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %c_56 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_56"]} : () -> tensor<1xi64>
      %unsqueeze_57 = onnx.node "Unsqueeze"(%sub_55, %c_56) {outputs = ["unsqueeze_57"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_58 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_58"]} : () -> tensor<1xi64>
      %slice_59 = onnx.node "Slice"(%add_53, %c_54, %unsqueeze_57, %c_58) {outputs = ["slice_59"]} : (tensor<1x1x4x3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xi64>
      %scatternd_60 = onnx.node "ScatterND"(%acc_in_13, %slice_59, %matmul_42) {outputs = ["scatternd_60"]} : (tensor<*xf32>, tensor<?x?x?x?xi64>, tensor<*xf32>) -> tensor<*xf32>
      onnx.yield %identity_49, %add_48, %scatternd_60 : tensor<i1>, tensor<*xf32>, tensor<*xf32>
    }
    %c_66 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_66"]} : () -> tensor<i64>
    %mul_67 = onnx.node "Mul"(%cast_9, %c_66) {outputs = ["mul_67"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_68 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_68"]} : () -> tensor<1xi64>
    %unsqueeze_69 = onnx.node "Unsqueeze"(%mul_67, %c_68) {outputs = ["unsqueeze_69"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_70 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_70"]} : () -> tensor<1xi64>
    %unsqueeze_71 = onnx.node "Unsqueeze"(%gather_4, %c_70) {outputs = ["unsqueeze_71"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_72 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_72"]} : () -> tensor<1xi64>
    %c_73 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_73"]} : () -> tensor<1xi64>
    %slice_74 = onnx.node "Slice"(%q, %unsqueeze_69, %unsqueeze_71, %c_72, %c_73) {outputs = ["slice_74"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
    %matmul_75 = onnx.node "MatMul"(%slice_74, %loop_64) {outputs = ["matmul_75"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
    %c_76 = onnx.node "Constant"() attrs {value = dense<[[[[0, 0, 4], [0, 0, 5]]]]> : tensor<1x1x2x3xi64>} {outputs = ["c_76"]} : () -> tensor<1x1x2x3xi64>
    %o = onnx.node "ScatterND"(%loop_65, %c_76, %matmul_75) {outputs = ["o"]} : (tensor<*xf32>, tensor<1x1x2x3xi64>, tensor<*xf32>) -> tensor<1x1x6x2xf32>
    onnx.yield %o : tensor<1x1x6x2xf32>
  }
}

// -----

// The same Loop with the last chunk written one token early, at [3, 5): it
// overwrites the loop's last row and leaves row 5 zero, which no layer op
// computes. Found, left as it was with the reason.

// REMARK: remark: TTT layer: ONNX Loop over chunks (chunks of 4 tokens), fast weights 'W0_1': left as it was: no ttt.kvb_layer form: its last chunk's write is not at the tokens after the loop
// CHECK-LABEL: onnx.graph @tail_write_one_token_early(
// CHECK: "Loop"
// CHECK: %{{.+}} = onnx.node "ScatterND"

module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>], onnx.producer_name = "onnx_styles"} {
  onnx.graph @tail_write_one_token_early(%q: tensor<1x1x6x2xf32> {onnx.name = "q"}, %k: tensor<1x1x6x2xf32> {onnx.name = "k"}, %v: tensor<1x1x6x2xf32> {onnx.name = "v"}) -> (tensor<1x1x6x2xf32> {onnx.name = "o"}) {
    %W0_1 = onnx.initializer "W0_1" dense<[[[8.69849755E-4, 2.112450e-01], [-0.193844736, -0.629743516]]]> : tensor<1x2x2xf32>
    %shape_2 = onnx.node "Shape"(%q) {outputs = ["shape_2"]} : (tensor<1x1x6x2xf32>) -> tensor<4xi64>
    %c_3 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["c_3"]} : () -> tensor<i64>
    %gather_4 = onnx.node "Gather"(%shape_2, %c_3) attrs {axis = 0 : i64} {outputs = ["gather_4"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c_5 = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["c_5"]} : () -> tensor<i64>
    %sub_6 = onnx.node "Sub"(%gather_4, %c_5) {outputs = ["sub_6"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_7 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_7"]} : () -> tensor<i64>
    %div_8 = onnx.node "Div"(%sub_6, %c_7) {outputs = ["div_8"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %cast_9 = onnx.node "Cast"(%div_8) attrs {to = 7 : i64} {outputs = ["cast_9"]} : (tensor<i64>) -> tensor<i64>
    %c_62 = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["c_62"]} : () -> tensor<i1>
    %c_63 = onnx.node "Constant"() attrs {value = dense<0.000000e+00> : tensor<1x1x6x2xf32>} {outputs = ["c_63"]} : () -> tensor<1x1x6x2xf32>
    %loop_64, %loop_65 = onnx.node "Loop"(%cast_9, %c_62, %W0_1, %c_63) attrs {body = #onnx.graph<region = 0, name = "body_61", inputs = ["i_10", "cond_11", "w_in_12", "acc_in_13"], outputs = ["identity_49", "add_48", "scatternd_60"]>} {outputs = ["loop_64", "loop_65"]} : (tensor<i64>, tensor<i1>, tensor<1x2x2xf32>, tensor<1x1x6x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) graphs {
    ^bb0(%i_10: tensor<i64>, %cond_11: tensor<i1>, %w_in_12: tensor<*xf32>, %acc_in_13: tensor<*xf32>):
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
      %slice_27 = onnx.node "Slice"(%q, %unsqueeze_22, %unsqueeze_24, %c_25, %c_26) {outputs = ["slice_27"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_28 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_28"]} : () -> tensor<1xi64>
      %unsqueeze_29 = onnx.node "Unsqueeze"(%mul_15, %c_28) {outputs = ["unsqueeze_29"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_30 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_30"]} : () -> tensor<1xi64>
      %unsqueeze_31 = onnx.node "Unsqueeze"(%min_18, %c_30) {outputs = ["unsqueeze_31"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_32 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_32"]} : () -> tensor<1xi64>
      %c_33 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_33"]} : () -> tensor<1xi64>
      %slice_34 = onnx.node "Slice"(%k, %unsqueeze_29, %unsqueeze_31, %c_32, %c_33) {outputs = ["slice_34"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_35 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_35"]} : () -> tensor<1xi64>
      %unsqueeze_36 = onnx.node "Unsqueeze"(%mul_15, %c_35) {outputs = ["unsqueeze_36"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_37 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_37"]} : () -> tensor<1xi64>
      %unsqueeze_38 = onnx.node "Unsqueeze"(%min_18, %c_37) {outputs = ["unsqueeze_38"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_39 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_39"]} : () -> tensor<1xi64>
      %c_40 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_40"]} : () -> tensor<1xi64>
      %slice_41 = onnx.node "Slice"(%v, %unsqueeze_36, %unsqueeze_38, %c_39, %c_40) {outputs = ["slice_41"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %matmul_42 = onnx.node "MatMul"(%slice_27, %w_in_12) {outputs = ["matmul_42"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
      %transpose_43 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_43"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_44 = onnx.node "MatMul"(%transpose_43, %slice_41) {outputs = ["matmul_44"]} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %neg_45 = onnx.node "Neg"(%matmul_44) {outputs = ["neg_45"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %c_46 = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c_46"]} : () -> tensor<f32>
      %mul_47 = onnx.node "Mul"(%neg_45, %c_46) {outputs = ["mul_47"]} : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
      %add_48 = onnx.node "Add"(%w_in_12, %mul_47) {outputs = ["add_48"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %identity_49 = onnx.node "Identity"(%cond_11) {outputs = ["identity_49"]} : (tensor<i1>) -> tensor<i1>
      %c_50 = onnx.node "Constant"() attrs {value = dense<[[[[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3]]]]> : tensor<1x1x4x3xi64>} {outputs = ["c_50"]} : () -> tensor<1x1x4x3xi64>
      %c_51 = onnx.node "Constant"() attrs {value = dense<[0, 0, 1]> : tensor<3xi64>} {outputs = ["c_51"]} : () -> tensor<3xi64>
      %mul_52 = onnx.node "Mul"(%mul_15, %c_51) {outputs = ["mul_52"]} : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
      %add_53 = onnx.node "Add"(%c_50, %mul_52) {outputs = ["add_53"]} : (tensor<1x1x4x3xi64>, tensor<3xi64>) -> tensor<1x1x4x3xi64>
      %c_54 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_54"]} : () -> tensor<1xi64>
      %sub_55 = onnx.node "Sub"(%min_18, %mul_15) {outputs = ["sub_55"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %c_56 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_56"]} : () -> tensor<1xi64>
      %unsqueeze_57 = onnx.node "Unsqueeze"(%sub_55, %c_56) {outputs = ["unsqueeze_57"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_58 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_58"]} : () -> tensor<1xi64>
      %slice_59 = onnx.node "Slice"(%add_53, %c_54, %unsqueeze_57, %c_58) {outputs = ["slice_59"]} : (tensor<1x1x4x3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xi64>
      %scatternd_60 = onnx.node "ScatterND"(%acc_in_13, %slice_59, %matmul_42) {outputs = ["scatternd_60"]} : (tensor<*xf32>, tensor<?x?x?x?xi64>, tensor<*xf32>) -> tensor<*xf32>
      onnx.yield %identity_49, %add_48, %scatternd_60 : tensor<i1>, tensor<*xf32>, tensor<*xf32>
    }
    %c_66 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_66"]} : () -> tensor<i64>
    %mul_67 = onnx.node "Mul"(%cast_9, %c_66) {outputs = ["mul_67"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_68 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_68"]} : () -> tensor<1xi64>
    %unsqueeze_69 = onnx.node "Unsqueeze"(%mul_67, %c_68) {outputs = ["unsqueeze_69"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_70 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_70"]} : () -> tensor<1xi64>
    %unsqueeze_71 = onnx.node "Unsqueeze"(%gather_4, %c_70) {outputs = ["unsqueeze_71"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_72 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_72"]} : () -> tensor<1xi64>
    %c_73 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_73"]} : () -> tensor<1xi64>
    %slice_74 = onnx.node "Slice"(%q, %unsqueeze_69, %unsqueeze_71, %c_72, %c_73) {outputs = ["slice_74"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
    %matmul_75 = onnx.node "MatMul"(%slice_74, %loop_64) {outputs = ["matmul_75"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
    %c_76 = onnx.node "Constant"() attrs {value = dense<[[[[0, 0, 3], [0, 0, 4]]]]> : tensor<1x1x2x3xi64>} {outputs = ["c_76"]} : () -> tensor<1x1x2x3xi64>
    %o = onnx.node "ScatterND"(%loop_65, %c_76, %matmul_75) {outputs = ["o"]} : (tensor<*xf32>, tensor<1x1x2x3xi64>, tensor<*xf32>) -> tensor<1x1x6x2xf32>
    onnx.yield %o : tensor<1x1x6x2xf32>
  }
}

// -----

// The same Loop writing each chunk output [B, H, C, E] turned to [B, C, H, E]
// into a [B, T, H, E] buffer (`out[:, s:e] = o.transpose(1, 2)`), the last
// chunk too: the writes tile the buffer's axis 1, so the layer op's output,
// turned the same way, is the buffer.

// REMARK: remark: TTT layer: ONNX Loop over chunks (chunks of 4 tokens), fast weights 'W0_1': raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: onnx.graph @turned_buffer_loop(
// CHECK-SAME: %[[Q:[a-z]+]]: tensor<1x1x6x2xf32>
// CHECK-NOT: "Loop"
// CHECK-NOT: "ScatterND"
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]]
// CHECK-SAME: -> tensor<1x1x6x2xf32>
// CHECK: %[[T:.+]] = onnx.node "Transpose"(%[[O]]) attrs {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x1x6x2xf32>) -> tensor<1x6x1x2xf32>
// CHECK: %[[NAMED:.+]] = onnx.node "Identity"(%[[T]]) {doc_string = "ttt: parallel linear-attention form of a TTT layer, {{.+}}", outputs = ["o"]}
// CHECK-NEXT: onnx.yield %[[NAMED]]

module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>], onnx.producer_name = "onnx_styles"} {
  onnx.graph @turned_buffer_loop(%q: tensor<1x1x6x2xf32> {onnx.name = "q"}, %k: tensor<1x1x6x2xf32> {onnx.name = "k"}, %v: tensor<1x1x6x2xf32> {onnx.name = "v"}) -> (tensor<1x6x1x2xf32> {onnx.name = "o"}) {
    %W0_1 = onnx.initializer "W0_1" dense<[[[8.69849755E-4, 2.112450e-01], [-0.193844736, -0.629743516]]]> : tensor<1x2x2xf32>
    %shape_2 = onnx.node "Shape"(%q) {outputs = ["shape_2"]} : (tensor<1x1x6x2xf32>) -> tensor<4xi64>
    %c_3 = onnx.node "Constant"() attrs {value = dense<2> : tensor<i64>} {outputs = ["c_3"]} : () -> tensor<i64>
    %gather_4 = onnx.node "Gather"(%shape_2, %c_3) attrs {axis = 0 : i64} {outputs = ["gather_4"]} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
    %c_5 = onnx.node "Constant"() attrs {value = dense<1> : tensor<i64>} {outputs = ["c_5"]} : () -> tensor<i64>
    %sub_6 = onnx.node "Sub"(%gather_4, %c_5) {outputs = ["sub_6"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_7 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_7"]} : () -> tensor<i64>
    %div_8 = onnx.node "Div"(%sub_6, %c_7) {outputs = ["div_8"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %cast_9 = onnx.node "Cast"(%div_8) attrs {to = 7 : i64} {outputs = ["cast_9"]} : (tensor<i64>) -> tensor<i64>
    %c_62 = onnx.node "Constant"() attrs {value = dense<true> : tensor<i1>} {outputs = ["c_62"]} : () -> tensor<i1>
    %c_63 = onnx.node "Constant"() attrs {value = dense<0.000000e+00> : tensor<1x6x1x2xf32>} {outputs = ["c_63"]} : () -> tensor<1x6x1x2xf32>
    %loop_64, %loop_65 = onnx.node "Loop"(%cast_9, %c_62, %W0_1, %c_63) attrs {body = #onnx.graph<region = 0, name = "body_61", inputs = ["i_10", "cond_11", "w_in_12", "acc_in_13"], outputs = ["identity_49", "add_48", "scatternd_60"]>} {outputs = ["loop_64", "loop_65"]} : (tensor<i64>, tensor<i1>, tensor<1x2x2xf32>, tensor<1x6x1x2xf32>) -> (tensor<*xf32>, tensor<*xf32>) graphs {
    ^bb0(%i_10: tensor<i64>, %cond_11: tensor<i1>, %w_in_12: tensor<*xf32>, %acc_in_13: tensor<*xf32>):
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
      %slice_27 = onnx.node "Slice"(%q, %unsqueeze_22, %unsqueeze_24, %c_25, %c_26) {outputs = ["slice_27"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_28 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_28"]} : () -> tensor<1xi64>
      %unsqueeze_29 = onnx.node "Unsqueeze"(%mul_15, %c_28) {outputs = ["unsqueeze_29"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_30 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_30"]} : () -> tensor<1xi64>
      %unsqueeze_31 = onnx.node "Unsqueeze"(%min_18, %c_30) {outputs = ["unsqueeze_31"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_32 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_32"]} : () -> tensor<1xi64>
      %c_33 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_33"]} : () -> tensor<1xi64>
      %slice_34 = onnx.node "Slice"(%k, %unsqueeze_29, %unsqueeze_31, %c_32, %c_33) {outputs = ["slice_34"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %c_35 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_35"]} : () -> tensor<1xi64>
      %unsqueeze_36 = onnx.node "Unsqueeze"(%mul_15, %c_35) {outputs = ["unsqueeze_36"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_37 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_37"]} : () -> tensor<1xi64>
      %unsqueeze_38 = onnx.node "Unsqueeze"(%min_18, %c_37) {outputs = ["unsqueeze_38"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_39 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_39"]} : () -> tensor<1xi64>
      %c_40 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_40"]} : () -> tensor<1xi64>
      %slice_41 = onnx.node "Slice"(%v, %unsqueeze_36, %unsqueeze_38, %c_39, %c_40) {outputs = ["slice_41"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
      %matmul_42 = onnx.node "MatMul"(%slice_27, %w_in_12) {outputs = ["matmul_42"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
      %transpose_43 = onnx.node "Transpose"(%slice_34) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_43"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %matmul_44 = onnx.node "MatMul"(%transpose_43, %slice_41) {outputs = ["matmul_44"]} : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %neg_45 = onnx.node "Neg"(%matmul_44) {outputs = ["neg_45"]} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
      %c_46 = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c_46"]} : () -> tensor<f32>
      %mul_47 = onnx.node "Mul"(%neg_45, %c_46) {outputs = ["mul_47"]} : (tensor<?x?x?x?xf32>, tensor<f32>) -> tensor<?x?x?x?xf32>
      %add_48 = onnx.node "Add"(%w_in_12, %mul_47) {outputs = ["add_48"]} : (tensor<*xf32>, tensor<?x?x?x?xf32>) -> tensor<*xf32>
      %identity_49 = onnx.node "Identity"(%cond_11) {outputs = ["identity_49"]} : (tensor<i1>) -> tensor<i1>
      %c_50 = onnx.node "Constant"() attrs {value = dense<[[[[0, 0, 0]], [[0, 1, 0]], [[0, 2, 0]], [[0, 3, 0]]]]> : tensor<1x4x1x3xi64>} {outputs = ["c_50"]} : () -> tensor<1x4x1x3xi64>
      %c_51 = onnx.node "Constant"() attrs {value = dense<[0, 1, 0]> : tensor<3xi64>} {outputs = ["c_51"]} : () -> tensor<3xi64>
      %mul_52 = onnx.node "Mul"(%mul_15, %c_51) {outputs = ["mul_52"]} : (tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
      %add_53 = onnx.node "Add"(%c_50, %mul_52) {outputs = ["add_53"]} : (tensor<1x4x1x3xi64>, tensor<3xi64>) -> tensor<1x4x1x3xi64>
      %c_54 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_54"]} : () -> tensor<1xi64>
      %sub_55 = onnx.node "Sub"(%min_18, %mul_15) {outputs = ["sub_55"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %c_56 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_56"]} : () -> tensor<1xi64>
      %unsqueeze_57 = onnx.node "Unsqueeze"(%sub_55, %c_56) {outputs = ["unsqueeze_57"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %c_58 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_58"]} : () -> tensor<1xi64>
      %slice_59 = onnx.node "Slice"(%add_53, %c_54, %unsqueeze_57, %c_58) {outputs = ["slice_59"]} : (tensor<1x4x1x3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xi64>
      %turned_59 = onnx.node "Transpose"(%matmul_42) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["turned_59"]} : (tensor<*xf32>) -> tensor<*xf32>
      %scatternd_60 = onnx.node "ScatterND"(%acc_in_13, %slice_59, %turned_59) {outputs = ["scatternd_60"]} : (tensor<*xf32>, tensor<?x?x?x?xi64>, tensor<*xf32>) -> tensor<*xf32>
      onnx.yield %identity_49, %add_48, %scatternd_60 : tensor<i1>, tensor<*xf32>, tensor<*xf32>
    }
    %c_66 = onnx.node "Constant"() attrs {value = dense<4> : tensor<i64>} {outputs = ["c_66"]} : () -> tensor<i64>
    %mul_67 = onnx.node "Mul"(%cast_9, %c_66) {outputs = ["mul_67"]} : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %c_68 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_68"]} : () -> tensor<1xi64>
    %unsqueeze_69 = onnx.node "Unsqueeze"(%mul_67, %c_68) {outputs = ["unsqueeze_69"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_70 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_70"]} : () -> tensor<1xi64>
    %unsqueeze_71 = onnx.node "Unsqueeze"(%gather_4, %c_70) {outputs = ["unsqueeze_71"]} : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %c_72 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_72"]} : () -> tensor<1xi64>
    %c_73 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_73"]} : () -> tensor<1xi64>
    %slice_74 = onnx.node "Slice"(%q, %unsqueeze_69, %unsqueeze_71, %c_72, %c_73) {outputs = ["slice_74"]} : (tensor<1x1x6x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x?x?xf32>
    %matmul_75 = onnx.node "MatMul"(%slice_74, %loop_64) {outputs = ["matmul_75"]} : (tensor<?x?x?x?xf32>, tensor<*xf32>) -> tensor<*xf32>
    %c_76 = onnx.node "Constant"() attrs {value = dense<[[[[0, 4, 0]], [[0, 5, 0]]]]> : tensor<1x2x1x3xi64>} {outputs = ["c_76"]} : () -> tensor<1x2x1x3xi64>
    %turned_77 = onnx.node "Transpose"(%matmul_75) attrs {perm = array<i64: 0, 2, 1, 3>} {outputs = ["turned_77"]} : (tensor<*xf32>) -> tensor<*xf32>
    %o = onnx.node "ScatterND"(%loop_65, %c_76, %turned_77) {outputs = ["o"]} : (tensor<*xf32>, tensor<1x2x1x3xi64>, tensor<*xf32>) -> tensor<1x6x1x2xf32>
    onnx.yield %o : tensor<1x6x1x2xf32>
  }
}
