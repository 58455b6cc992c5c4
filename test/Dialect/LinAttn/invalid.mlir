// Every verifier error of the linattn dialect, one case each.
// RUN: ttt-opt %s -split-input-file -verify-diagnostics

func.func @fm_rank(%x: tensor<3x8x4xf32>) {
  // expected-error @+1 {{expects 'input' to have shape [batch, heads, seq, features], got 'tensor<3x8x4xf32>'}}
  %r = linattn.feature_map %x kind = identity : tensor<3x8x4xf32> -> tensor<3x8x4xf32>
  return
}

// -----

func.func @fm_dynamic(%x: tensor<2x3x8x?xf32>) {
  // expected-error @+1 {{dimension 3 of 'input' is the feature size and must be static}}
  %r = linattn.feature_map %x kind = identity : tensor<2x3x8x?xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_type(%x: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'input'), got 'f64'}}
  %r = linattn.feature_map %x kind = identity : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf64>
  return
}

// -----

func.func @fm_identity_weights(%x: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{the identity feature map takes no weights, got 1}}
  %r = linattn.feature_map %x weights(%w : tensor<3x4x4xf32>) kind = identity : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_mlp_weights(%x: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{the mlp feature map takes W0 and optionally b0, got 0 weights}}
  %r = linattn.feature_map %x kind = mlp : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_swiglu_weights(%x: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{the swiglu feature map takes W0 (gate) and W2 (up), got 1 weights}}
  %r = linattn.feature_map %x weights(%w : tensor<3x4x4xf32>) kind = swiglu : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_activation(%x: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{'activation' only applies to the mlp feature map}}
  %r = linattn.feature_map %x weights(%w, %w : tensor<3x4x4xf32>, tensor<3x4x4xf32>) kind = swiglu activation = relu : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_weight_rank(%x: tensor<2x3x8x4xf32>, %w: tensor<4x4xf32>) {
  // expected-error @+1 {{expects 'weight #0' to have shape [heads, rows, cols] or [batch, heads, rows, cols], got 'tensor<4x4xf32>'}}
  %r = linattn.feature_map %x weights(%w : tensor<4x4xf32>) kind = mlp : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_weight_rows(%x: tensor<2x3x8x4xf32>, %w: tensor<3x5x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'weight #0' is the input feature size and must be 4, got 5}}
  %r = linattn.feature_map %x weights(%w : tensor<3x5x4xf32>) kind = mlp : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_bias_rows(%x: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'weight #1' is a bias row and must be 1, got 4}}
  %r = linattn.feature_map %x weights(%w, %w : tensor<3x4x4xf32>, tensor<3x4x4xf32>) kind = mlp : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_weight_features(%x: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<3x4x6xf32>) {
  // expected-error @+1 {{dimension 2 of 'weight #1' is the feature size of weight #0 and must be 4, got 6}}
  %r = linattn.feature_map %x weights(%w, %w2 : tensor<3x4x4xf32>, tensor<3x4x6xf32>) kind = swiglu : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @fm_result(%x: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'result' is the feature size plus the appended one and must be 5, got 4}}
  %r = linattn.feature_map %x kind = identity append_one : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_rank(%q: tensor<8x4xf32>, %k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects 'q' to have shape [batch, heads, seq, features], got 'tensor<8x4xf32>'}}
  %o = linattn.attention %q, %k, %k mask = full : tensor<8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_type(%q: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf16>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'q'), got 'f16'}}
  %o = linattn.attention %q, %q, %v mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf16> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_heads(%q: tensor<2x3x8x4xf32>, %v: tensor<2x5x8x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'v' is the number of heads and must be 3, got 5}}
  %o = linattn.attention %q, %q, %v mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x5x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_features(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x6xf32>) {
  // expected-error @+1 {{dimension 3 of 'k' is the feature size F of q and must be 4, got 6}}
  %o = linattn.attention %q, %k, %q mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x6xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_dynamic_features(%q: tensor<2x3x8x?xf32>) {
  // expected-error @+1 {{dimension 3 of 'q' is the feature size F and must be static}}
  %o = linattn.attention %q, %q, %q mask = full : tensor<2x3x8x?xf32>, tensor<2x3x8x?xf32>, tensor<2x3x8x?xf32> -> tensor<2x3x8x?xf32>
  return
}

// -----

func.func @att_chunk_required(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'chunk_size' is required by the chunk_strict mask}}
  %o = linattn.attention %q, %q, %q mask = chunk_strict : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_chunk_meaningless(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'chunk_size' has no meaning for the token_causal mask}}
  %o = linattn.attention %q, %q, %q mask = token_causal chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_chunk_zero(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'chunk_size' must be at least 1, got 0}}
  %o = linattn.attention %q, %q, %q mask = chunk_inclusive chunk_size = 0 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_query_length(%q: tensor<2x3x6x4xf32>, %k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'q' is the sequence length (only the full mask lets queries and keys differ in length) and must be 8, got 6}}
  %o = linattn.attention %q, %k, %k mask = token_causal : tensor<2x3x6x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x6x4xf32>
  return
}

// -----

func.func @att_output(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'output' is the query sequence length and must be 8, got 7}}
  %o = linattn.attention %q, %q, %q mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x7x4xf32>
  return
}

// -----

func.func @att_initial(%q: tensor<2x3x8x4xf32>, %s: tensor<3x4x5xf32>) {
  // expected-error @+1 {{dimension 2 of 'initial' is the value size Dv and must be 4, got 5}}
  %o = linattn.attention %q, %q, %q initial(%s : tensor<3x4x5xf32>) mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_initial_rank(%q: tensor<2x3x8x4xf32>, %s: tensor<4x4xf32>) {
  // expected-error @+1 {{expects 'initial' to have shape [heads, F, Dv] or [batch, heads, F, Dv], got 'tensor<4x4xf32>'}}
  %o = linattn.attention %q, %q, %q initial(%s : tensor<4x4xf32>) mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_full_decay(%q: tensor<2x3x8x4xf32>, %a: tensor<2x3x8xf32>) {
  // expected-error @+1 {{the full mask has no order, so it takes no decay}}
  %o = linattn.attention %q, %q, %q decay(%a : tensor<2x3x8xf32>) mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_decay_rank(%q: tensor<2x3x8x4xf32>, %a: tensor<2x3xf32>) {
  // expected-error @+1 {{expects 'decay' to have shape [batch, heads, chunks], got 'tensor<2x3xf32>'}}
  %o = linattn.attention %q, %q, %q decay(%a : tensor<2x3xf32>) mask = chunk_strict chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @att_decay_tokens(%q: tensor<2x3x8x4xf32>, %a: tensor<2x3x7xf32>) {
  // expected-error @+1 {{dimension 2 of 'decay' is the sequence length and must be 8, got 7}}
  %o = linattn.attention %q, %q, %q decay(%a : tensor<2x3x7xf32>) mask = token_causal : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @cr_chunk_zero(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'chunk_size' must be at least 1, got 0}}
  %g = linattn.chunk_reduce %k, %k chunk_size = 0 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_rank(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects 'result' to have shape [batch, heads, chunks, F, Dv], got 'tensor<2x3x4x4xf32>'}}
  %g = linattn.chunk_reduce %k, %k chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @cr_type(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'k'), got 'f64'}}
  %g = linattn.chunk_reduce %k, %k chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf64>
  return
}

// -----

func.func @cr_chunks(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'result' is the number of chunks ceil(seq / chunk_size) and must be 3, got 2}}
  %g = linattn.chunk_reduce %k, %k chunk_size = 3 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_value_seq(%k: tensor<2x3x8x4xf32>, %v: tensor<2x3x9x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'v' is the sequence length of k and must be 8, got 9}}
  %g = linattn.chunk_reduce %k, %v chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x9x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_features(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'result' is the feature size F and must be 4, got 5}}
  %g = linattn.chunk_reduce %k, %k chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x5x4xf32>
  return
}

// -----

func.func @cr_scale(%k: tensor<2x3x8x4xf32>, %e: tensor<2x3x7xf32>) {
  // expected-error @+1 {{dimension 2 of 'scale' is the sequence length and must be 8, got 7}}
  %g = linattn.chunk_reduce %k, %k scale(%e : tensor<2x3x7xf32>) chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cm_chunk_zero(%m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'chunk_size' must be at least 1, got 0}}
  %r = linattn.chunk_mean %m chunk_size = 0 : tensor<2x3x8xf32> -> tensor<2x3x1xf32>
  return
}

// -----

func.func @cm_rank(%m: tensor<2x3x8x1xf32>) {
  // expected-error @+1 {{expects 'input' to have shape [batch, heads, seq], got 'tensor<2x3x8x1xf32>'}}
  %r = linattn.chunk_mean %m chunk_size = 4 : tensor<2x3x8x1xf32> -> tensor<2x3x2xf32>
  return
}

// -----

func.func @cm_type(%m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'input'), got 'f64'}}
  %r = linattn.chunk_mean %m chunk_size = 4 : tensor<2x3x8xf32> -> tensor<2x3x2xf64>
  return
}

// -----

func.func @cm_heads(%m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{dimension 1 of 'result' is the number of heads and must be 3, got 4}}
  %r = linattn.chunk_mean %m chunk_size = 4 : tensor<2x3x8xf32> -> tensor<2x4x2xf32>
  return
}

// -----

func.func @cm_chunks(%m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{dimension 2 of 'result' is the number of chunks ceil(seq / chunk_size) and must be 3, got 2}}
  %r = linattn.chunk_mean %m chunk_size = 3 : tensor<2x3x8xf32> -> tensor<2x3x2xf32>
  return
}

// -----

func.func @scan_rank(%g: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects 'inputs' to have shape [batch, heads, chunks, F, Dv], got 'tensor<2x3x8x4xf32>'}}
  %s = linattn.scan %g kind = additive mode = inclusive : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @scan_result(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'result' is the matching dimension of 'inputs' and must be 2, got 3}}
  %s = linattn.scan %g kind = additive mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x3x4x4xf32>
  return
}

// -----

func.func @scan_type(%g: tensor<2x3x2x4x4xf32>, %s0: tensor<3x4x4xf64>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'inputs'), got 'f64'}}
  %s = linattn.scan %g initial(%s0 : tensor<3x4x4xf64>) kind = additive mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_dynamic(%g: tensor<2x3x2x?x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'inputs' is the feature size F and must be static}}
  %s = linattn.scan %g kind = additive mode = inclusive : tensor<2x3x2x?x4xf32> -> tensor<2x3x2x?x4xf32>
  return
}

// -----

func.func @scan_decay_missing(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{a decayed scan needs a 'decay' operand}}
  %s = linattn.scan %g kind = decayed mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_decay_unused(%g: tensor<2x3x2x4x4xf32>, %a: tensor<2x3x2xf32>) {
  // expected-error @+1 {{'decay' is only used by a decayed scan}}
  %s = linattn.scan %g decay(%a : tensor<2x3x2xf32>) kind = additive mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_transition_missing(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{an affine scan needs a 'transition' operand}}
  %s = linattn.scan %g kind = affine mode = exclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_transition_unused(%g: tensor<2x3x2x4x4xf32>, %a: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'transition' is only used by an affine scan}}
  %s = linattn.scan %g transition(%a : tensor<2x3x2x4x4xf32>) kind = additive mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_decay_chunks(%g: tensor<2x3x2x4x4xf32>, %a: tensor<2x3x5xf32>) {
  // expected-error @+1 {{dimension 2 of 'decay' is the number of chunks and must be 2, got 5}}
  %s = linattn.scan %g decay(%a : tensor<2x3x5xf32>) kind = decayed mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_transition_shape(%g: tensor<2x3x2x4x4xf32>, %a: tensor<2x3x2x4x5xf32>) {
  // expected-error @+1 {{dimension 4 of 'transition' is the feature size F and must be 4, got 5}}
  %s = linattn.scan %g transition(%a : tensor<2x3x2x4x5xf32>) kind = affine mode = inclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @scan_initial(%g: tensor<2x3x2x4x4xf32>, %s0: tensor<3x5x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'initial' is the feature size F and must be 4, got 5}}
  %s = linattn.scan %g initial(%s0 : tensor<3x5x4xf32>) kind = additive mode = exclusive : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @st_rank(%g: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects 'inputs' to have shape [batch, heads, chunks, F, Dv], got 'tensor<2x3x8x4xf32>'}}
  %s = linattn.state_transform %g steps = 1 coeffs = [1.0, 2.0, 3.0] : tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @st_type(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{result type 'tensor<2x3x2x4x4xf64>' must equal the inputs' type 'tensor<2x3x2x4x4xf32>'}}
  %s = linattn.state_transform %g steps = 1 coeffs = [1.0, 2.0, 3.0] : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf64>
  return
}

// -----

func.func @st_steps(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'steps' must not be negative, got -1}}
  %s = linattn.state_transform %g steps = -1 coeffs = [1.0, 2.0, 3.0] : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @st_coeffs(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'coeffs' must hold one (a, b, c) triple or one per step (3 or 6 numbers), got 4}}
  %s = linattn.state_transform %g steps = 2 coeffs = [1.0, 2.0, 3.0, 4.0] : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @st_eps(%g: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'eps' must be positive}}
  %s = linattn.state_transform %g steps = 1 coeffs = [1.0, 2.0, 3.0] eps = 0.0 : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @ca_chunk_zero(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'chunk_size' must be at least 1, got 0}}
  %o = linattn.chunk_apply %q, %s chunk_size = 0 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_rank(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{expects 'states' to have shape [batch, heads, chunks, F, Dv], got 'tensor<2x3x8x4xf32>'}}
  %o = linattn.chunk_apply %q, %s chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_half_intra(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'intra' needs both k and v}}
  %o = "linattn.chunk_apply"(%q, %s, %q) <{chunk_size = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>}> : (tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_factor_without_intra(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{'intra_scale', 'intra_factor' and 'intra_mean' scale the intra-chunk term: they need 'intra'}}
  %o = linattn.chunk_apply %q, %s chunk_size = 4 intra_factor = 2.0 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_intra_scale_length(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>, %eta: tensor<2x3x7xf32>) {
  // expected-error @+1 {{intra scale}}
  %o = linattn.chunk_apply %q, %s intra(%q, %q : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>) intra_scale(%eta : tensor<2x3x7xf32>) chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_type(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf16>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'q'), got 'f16'}}
  %o = linattn.chunk_apply %q, %s chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf16> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_chunks(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'states' is the number of chunks ceil(seq / chunk_size) and must be 4, got 2}}
  %o = linattn.chunk_apply %q, %s chunk_size = 2 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_output(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x6xf32>) {
  // expected-error @+1 {{dimension 3 of 'output' is the value size Dv and must be 6, got 4}}
  %o = linattn.chunk_apply %q, %s chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x6xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_intra(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>, %v: tensor<2x3x7x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'intra v' is the sequence length of q and must be 8, got 7}}
  %o = linattn.chunk_apply %q, %s intra(%q, %v : tensor<2x3x8x4xf32>, tensor<2x3x7x4xf32>) chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @cr_column_of_rank3(%k: tensor<2x3x8x4xf32>, %eta: tensor<2x3x8xf32>) {
  // expected-error @+1 {{'scale_column' needs a [batch, heads, seq, n] scale, got a rank-3 one}}
  %g = linattn.chunk_reduce %k, %k scale(%eta : tensor<2x3x8xf32>) scale_column = 1 chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_column_out_of_range(%k: tensor<2x3x8x4xf32>, %lr: tensor<2x3x8x3xf32>) {
  // expected-error @+1 {{'scale_column' 3 is not a column of scale (3 columns)}}
  %g = linattn.chunk_reduce %k, %k scale(%lr : tensor<2x3x8x3xf32>) scale_column = 3 chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_column_without_scale(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{'scale_column' needs a scale operand}}
  %g = linattn.chunk_reduce %k, %k scale_column = 1 chunk_size = 4 : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @cr_whole_sequence(%k: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'result' is one chunk (no chunk_size: the whole sequence) and must be 1, got 2}}
  %g = linattn.chunk_reduce %k, %k : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x2x4x4xf32>
  return
}

// -----

func.func @ca_whole_sequence(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x2x4x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'states' is one state (no chunk_size: every query reads it) and must be 1, got 2}}
  %o = linattn.chunk_apply %q, %s : tensor<2x3x8x4xf32>, tensor<2x3x2x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ca_intra_without_chunk(%q: tensor<2x3x8x4xf32>, %s: tensor<2x3x1x4x4xf32>) {
  // expected-error @+1 {{the intra-chunk term needs a 'chunk_size'}}
  %o = linattn.chunk_apply %q, %s intra(%q, %q : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>) : tensor<2x3x8x4xf32>, tensor<2x3x1x4x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @attention_causal_mean(%q: tensor<2x3x8x4xf32>) {
  // expected-error @+1 {{the token_causal mask sums over no set of tokens, so it takes no 'mean'}}
  %o = linattn.attention %q, %q, %q mask = token_causal mean : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @attention_scale_length(%q: tensor<2x3x8x4xf32>, %lr: tensor<2x3x7xf32>) {
  // expected-error @+1 {{dimension 2 of 'scale' is the sequence length and must be 8, got 7}}
  %o = linattn.attention %q, %q, %q scale(%lr : tensor<2x3x7xf32>) mask = full : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32> -> tensor<2x3x8x4xf32>
  return
}
