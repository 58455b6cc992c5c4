// RUN: ttt-opt %s --ttt-raise-onnx 2>&1 | FileCheck %s

// Matcher rule: Muon's Newton-Schulz is transpose-equivariant, so a weight
// stored output x input (`W [H, Dout, Din]`, applied as `(W qᵀ)ᵀ`) whose
// update `vᵀ k` is orthogonalized as stored is the layer that
// orthogonalizes `kᵀ v` on the input x output weight: the raise reads the
// Newton-Schulz step on either orientation and hands the layer op the
// stored weight turned (`ttt.turned_from`). (test/python/onnx_styles.py,
// family muon_dot, orientation w_xt, 2 chunks of 4 tokens.)

// CHECK: remark: TTT layer: unrolled chunk loop (2 chunks of 4 tokens), fast weights 'W0_1' (transposed): raised to ttt.kvb_layer (linear attention, prefix sum over chunk states)
// CHECK-LABEL: onnx.graph @ttt_style(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x1x8x4xf32> {onnx.name = "q"}, %[[K:[^:]+]]: tensor<1x1x8x4xf32> {onnx.name = "k"}, %[[V:[^:]+]]: tensor<1x1x8x3xf32> {onnx.name = "v"}
// CHECK: %[[W:.+]] = onnx.node "Constant"() attrs {value = dense<{{.*}}> : tensor<1x4x3xf32>} {ttt.turned_from = "W0_1"}
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : {{.*}} weights(%[[W]] : tensor<1x4x3xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot, scale = 2.500000e-01> update = #ttt.update<sign = ascent, lr_scale = 5.000000e-01, orthogonalize = #ttt.newton_schulz<steps = 5,
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4>
// CHECK: onnx.yield
module attributes {onnx.ir_version = 8 : i64, onnx.opset_import = [#onnx.opset<"", 17>], onnx.producer_name = "onnx_styles"} {
  onnx.graph @ttt_style(%q: tensor<1x1x8x4xf32> {onnx.name = "q"}, %k: tensor<1x1x8x4xf32> {onnx.name = "k"}, %v: tensor<1x1x8x3xf32> {onnx.name = "v"}) -> (tensor<1x1x8x3xf32> {onnx.name = "o"}) {
    %W0_1 = onnx.initializer "W0_1" dense<[[[0.172792092, -0.651578605, -0.268476605, 0.14706625], [0.41080907, 0.452677935, 0.290559053, 0.014211121], [0.165218532, 0.223187283, 0.182286203, 0.273356497]]]> : tensor<1x3x4xf32>
    %c_2 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_2"]} : () -> tensor<1xi64>
    %c_3 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_3"]} : () -> tensor<1xi64>
    %c_4 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_4"]} : () -> tensor<1xi64>
    %c_5 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_5"]} : () -> tensor<1xi64>
    %slice_6 = onnx.node "Slice"(%q, %c_2, %c_3, %c_4, %c_5) {outputs = ["slice_6"]} : (tensor<1x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x4xf32>
    %c_7 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_7"]} : () -> tensor<1xi64>
    %c_8 = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["c_8"]} : () -> tensor<1xi64>
    %c_9 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_9"]} : () -> tensor<1xi64>
    %c_10 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_10"]} : () -> tensor<1xi64>
    %slice_11 = onnx.node "Slice"(%q, %c_7, %c_8, %c_9, %c_10) {outputs = ["slice_11"]} : (tensor<1x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x4xf32>
    %c_12 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_12"]} : () -> tensor<1xi64>
    %c_13 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_13"]} : () -> tensor<1xi64>
    %c_14 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_14"]} : () -> tensor<1xi64>
    %c_15 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_15"]} : () -> tensor<1xi64>
    %slice_16 = onnx.node "Slice"(%k, %c_12, %c_13, %c_14, %c_15) {outputs = ["slice_16"]} : (tensor<1x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x4xf32>
    %c_17 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_17"]} : () -> tensor<1xi64>
    %c_18 = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["c_18"]} : () -> tensor<1xi64>
    %c_19 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_19"]} : () -> tensor<1xi64>
    %c_20 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_20"]} : () -> tensor<1xi64>
    %slice_21 = onnx.node "Slice"(%k, %c_17, %c_18, %c_19, %c_20) {outputs = ["slice_21"]} : (tensor<1x1x8x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x4xf32>
    %c_22 = onnx.node "Constant"() attrs {value = dense<0> : tensor<1xi64>} {outputs = ["c_22"]} : () -> tensor<1xi64>
    %c_23 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_23"]} : () -> tensor<1xi64>
    %c_24 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_24"]} : () -> tensor<1xi64>
    %c_25 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_25"]} : () -> tensor<1xi64>
    %slice_26 = onnx.node "Slice"(%v, %c_22, %c_23, %c_24, %c_25) {outputs = ["slice_26"]} : (tensor<1x1x8x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x3xf32>
    %c_27 = onnx.node "Constant"() attrs {value = dense<4> : tensor<1xi64>} {outputs = ["c_27"]} : () -> tensor<1xi64>
    %c_28 = onnx.node "Constant"() attrs {value = dense<8> : tensor<1xi64>} {outputs = ["c_28"]} : () -> tensor<1xi64>
    %c_29 = onnx.node "Constant"() attrs {value = dense<2> : tensor<1xi64>} {outputs = ["c_29"]} : () -> tensor<1xi64>
    %c_30 = onnx.node "Constant"() attrs {value = dense<1> : tensor<1xi64>} {outputs = ["c_30"]} : () -> tensor<1xi64>
    %slice_31 = onnx.node "Slice"(%v, %c_27, %c_28, %c_29, %c_30) {outputs = ["slice_31"]} : (tensor<1x1x8x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x4x3xf32>
    %transpose_32 = onnx.node "Transpose"(%slice_6) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_32"]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    %matmul_33 = onnx.node "MatMul"(%W0_1, %transpose_32) {outputs = ["matmul_33"]} : (tensor<1x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_34 = onnx.node "Transpose"(%matmul_33) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_34"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %transpose_35 = onnx.node "Transpose"(%slice_26) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_35"]} : (tensor<1x1x4x3xf32>) -> tensor<1x1x3x4xf32>
    %matmul_36 = onnx.node "MatMul"(%transpose_35, %slice_16) {outputs = ["matmul_36"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x3x4xf32>
    %c_37 = onnx.node "Constant"() attrs {value = dense<4.000000e+00> : tensor<f32>} {outputs = ["c_37"]} : () -> tensor<f32>
    %div_38 = onnx.node "Div"(%matmul_36, %c_37) {outputs = ["div_38"]} : (tensor<1x1x3x4xf32>, tensor<f32>) -> tensor<1x1x3x4xf32>
    %reducel2_39 = onnx.node "ReduceL2"(%div_38) attrs {axes = array<i64: -2, -1>, keepdims = 1 : i64} {outputs = ["reducel2_39"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x1x1xf32>
    %c_40 = onnx.node "Constant"() attrs {value = dense<1.000000e-07> : tensor<f32>} {outputs = ["c_40"]} : () -> tensor<f32>
    %add_41 = onnx.node "Add"(%reducel2_39, %c_40) {outputs = ["add_41"]} : (tensor<1x1x1x1xf32>, tensor<f32>) -> tensor<1x1x1x1xf32>
    %div_42 = onnx.node "Div"(%div_38, %add_41) {outputs = ["div_42"]} : (tensor<1x1x3x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x4xf32>
    %transpose_43 = onnx.node "Transpose"(%div_42) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_43"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %matmul_44 = onnx.node "MatMul"(%div_42, %transpose_43) {outputs = ["matmul_44"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
    %c_45 = onnx.node "Constant"() attrs {value = dense<-6.89459991> : tensor<f32>} {outputs = ["c_45"]} : () -> tensor<f32>
    %mul_46 = onnx.node "Mul"(%c_45, %matmul_44) {outputs = ["mul_46"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_47 = onnx.node "Constant"() attrs {value = dense<2.927000e+00> : tensor<f32>} {outputs = ["c_47"]} : () -> tensor<f32>
    %matmul_48 = onnx.node "MatMul"(%matmul_44, %matmul_44) {outputs = ["matmul_48"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %mul_49 = onnx.node "Mul"(%c_47, %matmul_48) {outputs = ["mul_49"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %add_50 = onnx.node "Add"(%mul_46, %mul_49) {outputs = ["add_50"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_51 = onnx.node "Constant"() attrs {value = dense<4.084800e+00> : tensor<f32>} {outputs = ["c_51"]} : () -> tensor<f32>
    %mul_52 = onnx.node "Mul"(%c_51, %div_42) {outputs = ["mul_52"]} : (tensor<f32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %matmul_53 = onnx.node "MatMul"(%add_50, %div_42) {outputs = ["matmul_53"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %add_54 = onnx.node "Add"(%mul_52, %matmul_53) {outputs = ["add_54"]} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_55 = onnx.node "Transpose"(%add_54) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_55"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %matmul_56 = onnx.node "MatMul"(%add_54, %transpose_55) {outputs = ["matmul_56"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
    %c_57 = onnx.node "Constant"() attrs {value = dense<-6.302900e+00> : tensor<f32>} {outputs = ["c_57"]} : () -> tensor<f32>
    %mul_58 = onnx.node "Mul"(%c_57, %matmul_56) {outputs = ["mul_58"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_59 = onnx.node "Constant"() attrs {value = dense<2.637700e+00> : tensor<f32>} {outputs = ["c_59"]} : () -> tensor<f32>
    %matmul_60 = onnx.node "MatMul"(%matmul_56, %matmul_56) {outputs = ["matmul_60"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %mul_61 = onnx.node "Mul"(%c_59, %matmul_60) {outputs = ["mul_61"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %add_62 = onnx.node "Add"(%mul_58, %mul_61) {outputs = ["add_62"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_63 = onnx.node "Constant"() attrs {value = dense<3.950500e+00> : tensor<f32>} {outputs = ["c_63"]} : () -> tensor<f32>
    %mul_64 = onnx.node "Mul"(%c_63, %add_54) {outputs = ["mul_64"]} : (tensor<f32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %matmul_65 = onnx.node "MatMul"(%add_62, %add_54) {outputs = ["matmul_65"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %add_66 = onnx.node "Add"(%mul_64, %matmul_65) {outputs = ["add_66"]} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_67 = onnx.node "Transpose"(%add_66) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_67"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %matmul_68 = onnx.node "MatMul"(%add_66, %transpose_67) {outputs = ["matmul_68"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
    %c_69 = onnx.node "Constant"() attrs {value = dense<-5.591300e+00> : tensor<f32>} {outputs = ["c_69"]} : () -> tensor<f32>
    %mul_70 = onnx.node "Mul"(%c_69, %matmul_68) {outputs = ["mul_70"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_71 = onnx.node "Constant"() attrs {value = dense<2.303700e+00> : tensor<f32>} {outputs = ["c_71"]} : () -> tensor<f32>
    %matmul_72 = onnx.node "MatMul"(%matmul_68, %matmul_68) {outputs = ["matmul_72"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %mul_73 = onnx.node "Mul"(%c_71, %matmul_72) {outputs = ["mul_73"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %add_74 = onnx.node "Add"(%mul_70, %mul_73) {outputs = ["add_74"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_75 = onnx.node "Constant"() attrs {value = dense<3.741800e+00> : tensor<f32>} {outputs = ["c_75"]} : () -> tensor<f32>
    %mul_76 = onnx.node "Mul"(%c_75, %add_66) {outputs = ["mul_76"]} : (tensor<f32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %matmul_77 = onnx.node "MatMul"(%add_74, %add_66) {outputs = ["matmul_77"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %add_78 = onnx.node "Add"(%mul_76, %matmul_77) {outputs = ["add_78"]} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_79 = onnx.node "Transpose"(%add_78) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_79"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %matmul_80 = onnx.node "MatMul"(%add_78, %transpose_79) {outputs = ["matmul_80"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
    %c_81 = onnx.node "Constant"() attrs {value = dense<-3.142700e+00> : tensor<f32>} {outputs = ["c_81"]} : () -> tensor<f32>
    %mul_82 = onnx.node "Mul"(%c_81, %matmul_80) {outputs = ["mul_82"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_83 = onnx.node "Constant"() attrs {value = dense<1.204600e+00> : tensor<f32>} {outputs = ["c_83"]} : () -> tensor<f32>
    %matmul_84 = onnx.node "MatMul"(%matmul_80, %matmul_80) {outputs = ["matmul_84"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %mul_85 = onnx.node "Mul"(%c_83, %matmul_84) {outputs = ["mul_85"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %add_86 = onnx.node "Add"(%mul_82, %mul_85) {outputs = ["add_86"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_87 = onnx.node "Constant"() attrs {value = dense<2.876900e+00> : tensor<f32>} {outputs = ["c_87"]} : () -> tensor<f32>
    %mul_88 = onnx.node "Mul"(%c_87, %add_78) {outputs = ["mul_88"]} : (tensor<f32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %matmul_89 = onnx.node "MatMul"(%add_86, %add_78) {outputs = ["matmul_89"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %add_90 = onnx.node "Add"(%mul_88, %matmul_89) {outputs = ["add_90"]} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_91 = onnx.node "Transpose"(%add_90) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_91"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %matmul_92 = onnx.node "MatMul"(%add_90, %transpose_91) {outputs = ["matmul_92"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x3x3xf32>
    %c_93 = onnx.node "Constant"() attrs {value = dense<-3.052500e+00> : tensor<f32>} {outputs = ["c_93"]} : () -> tensor<f32>
    %mul_94 = onnx.node "Mul"(%c_93, %matmul_92) {outputs = ["mul_94"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_95 = onnx.node "Constant"() attrs {value = dense<1.201200e+00> : tensor<f32>} {outputs = ["c_95"]} : () -> tensor<f32>
    %matmul_96 = onnx.node "MatMul"(%matmul_92, %matmul_92) {outputs = ["matmul_96"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %mul_97 = onnx.node "Mul"(%c_95, %matmul_96) {outputs = ["mul_97"]} : (tensor<f32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %add_98 = onnx.node "Add"(%mul_94, %mul_97) {outputs = ["add_98"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
    %c_99 = onnx.node "Constant"() attrs {value = dense<2.836600e+00> : tensor<f32>} {outputs = ["c_99"]} : () -> tensor<f32>
    %mul_100 = onnx.node "Mul"(%c_99, %add_90) {outputs = ["mul_100"]} : (tensor<f32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %matmul_101 = onnx.node "MatMul"(%add_98, %add_90) {outputs = ["matmul_101"]} : (tensor<1x1x3x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %add_102 = onnx.node "Add"(%mul_100, %matmul_101) {outputs = ["add_102"]} : (tensor<1x1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %c_103 = onnx.node "Constant"() attrs {value = dense<5.000000e-01> : tensor<f32>} {outputs = ["c_103"]} : () -> tensor<f32>
    %mul_104 = onnx.node "Mul"(%add_102, %c_103) {outputs = ["mul_104"]} : (tensor<1x1x3x4xf32>, tensor<f32>) -> tensor<1x1x3x4xf32>
    %sub_105 = onnx.node "Sub"(%W0_1, %mul_104) {outputs = ["sub_105"]} : (tensor<1x3x4xf32>, tensor<1x1x3x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_106 = onnx.node "Transpose"(%slice_11) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_106"]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
    %matmul_107 = onnx.node "MatMul"(%sub_105, %transpose_106) {outputs = ["matmul_107"]} : (tensor<1x1x3x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x3x4xf32>
    %transpose_108 = onnx.node "Transpose"(%matmul_107) attrs {perm = array<i64: 0, 1, 3, 2>} {outputs = ["transpose_108"]} : (tensor<1x1x3x4xf32>) -> tensor<1x1x4x3xf32>
    %o = onnx.node "Concat"(%transpose_34, %transpose_108) attrs {axis = 2 : i64} {outputs = ["o"]} : (tensor<1x1x4x3xf32>, tensor<1x1x4x3xf32>) -> tensor<1x1x8x3xf32>
    onnx.yield %o : tensor<1x1x8x3xf32>
  }
}

