// Every verifier error of the ttt dialect, one case each.
// RUN: ttt-opt %s -split-input-file -verify-diagnostics

func.func @bias_on_swiglu(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+3 {{'bias = true' is only supported for linear and mlp models; swiglu has no bias weights}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = swiglu, trained = [1], bias = true>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @activation_on_linear(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+3 {{'activation' only applies to mlp models; remove it from the linear model}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0], activation = relu>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @nothing_trained(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+3 {{'trained' must list at least one weight index}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = []>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @trained_out_of_range(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+3 {{trained weight index 2 is out of range: a linear model with bias has 2 weights (0..1)}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0, 2], bias = true>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @trained_unsorted(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+3 {{'trained' must be sorted and free of duplicates, got 1 before 0}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [1, 0], bias = true>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @loss_scale_inf(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+4 {{loss 'scale' must be finite}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot, scale = 0x7FF0000000000000>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @loss_eps_zero(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+4 {{loss 'eps' must be a positive finite number, got 0}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = mse, eps = 0.0>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ns_negative_steps(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+6 {{newton_schulz 'steps' must not be negative, got -1}}
  // expected-error @+5 {{failed to parse TTT_UpdateAttr parameter 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = -1, coeffs = [1.0, 2.0, 3.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ns_coeff_count(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+6 {{newton_schulz 'coeffs' must hold one (a, b, c) triple or one per step (3 or 6 numbers), got 4}}
  // expected-error @+5 {{failed to parse TTT_UpdateAttr parameter 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 2, coeffs = [1.0, 2.0, 3.0, 4.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ns_coeff_nan(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+6 {{newton_schulz 'coeffs' must be finite}}
  // expected-error @+5 {{failed to parse TTT_UpdateAttr parameter 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.0, 0x7FF8000000000000, 3.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @ns_eps(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+6 {{newton_schulz 'eps' must be a positive finite number}}
  // expected-error @+5 {{failed to parse TTT_UpdateAttr parameter 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.0, 2.0, 3.0], eps = -1.0>>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @lr_scale_inf(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{update 'lr_scale' must be finite}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<lr_scale = 0xFFF0000000000000>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_norm_eps(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{update 'weight_norm_eps' must be a positive finite number}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<weight_norm = output_channels, weight_norm_eps = 0.0>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @no_inner_steps(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{schedule 'inner_steps' must be at least 1, got 0}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4, inner_steps = 0>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @chunk_size_zero(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{a chunked schedule needs 'size' >= 1 (the chunk length in tokens), got 0}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @causal_inner_steps(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{the causal order takes exactly one inner step; remove 'inner_steps = 2'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal, inner_steps = 2>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @full_batch_size(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{a full_batch schedule updates once on all tokens; remove 'size = 4' or use kind = chunked}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = full_batch, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @full_batch_order(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{a full_batch schedule always updates, then applies; remove 'order = causal'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = full_batch, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @q_rank(%q: tensor<2x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{expects 'q' to have shape [batch, heads, seq, features], got 'tensor<2x8x4xf32>'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @element_type(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf16>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'q'), got 'f16'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf16>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf16>
  return
}

// -----

func.func @batch_mismatch(%q: tensor<2x3x8x4xf32>, %k: tensor<5x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 0 of 'k' is the batch and must be 2, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<5x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @heads_mismatch(%q: tensor<2x?x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x2x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'v' is the number of heads and must be 3, got 2}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x?x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x2x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x2x8x4xf32>
  return
}

// -----

func.func @value_seq_mismatch(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x9x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'v' is the key/value sequence length and must be 8, got 9}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x9x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x9x4xf32>
  return
}

// -----

func.func @query_seq_mismatch(%q: tensor<2x3x6x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 2 of 'q' is the sequence length (q, k and v must have the same length unless the schedule is full_batch) and must be 8, got 6}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x6x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x6x4xf32>
  return
}

// -----

func.func @dynamic_features(%q: tensor<2x3x8x?xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'q' is the input feature size and must be static; only batch, heads and sequence length may be dynamic}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x?xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @key_features(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x5xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'k' is the input feature size of q and must be 4, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x5xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_count(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{a mlp model takes 2 weights, got 1}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = mlp, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_rank(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<4x4xf32>) {
  // expected-error @+1 {{expects 'weight #0' to have shape [heads, rows, cols] or [batch, heads, rows, cols], got 'tensor<4x4xf32>'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w2 : tensor<4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_batch(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<7x3x4x4xf32>) {
  // expected-error @+1 {{dimension 0 of 'weight #0' is the batch and must be 2, got 7}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w2 : tensor<7x3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_heads(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<5x4x4xf32>) {
  // expected-error @+1 {{dimension 0 of 'weight #0' is the number of heads and must be 3, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w2 : tensor<5x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_dynamic_rows(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<3x?x4xf32>) {
  // expected-error @+1 {{dimension 1 of 'weight #0' is a weight's row count and must be static}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w2 : tensor<3x?x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @weight_shape(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w2: tensor<3x4x6xf32>) {
  // expected-error @+1 {{weight #0 (W of the linear model) must be 4x4 (input x output), got 4x6}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w2 : tensor<3x4x6xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @swiglu_hidden(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %w0: tensor<3x4x8xf32>, %w1: tensor<3x8x4xf32>, %w2: tensor<3x4x6xf32>) {
  // expected-error @+1 {{weight #2 (W2 (up) of the swiglu model) must be 4x8 (input x output), got 4x6}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w0, %w1, %w2 : tensor<3x4x8xf32>, tensor<3x8x4xf32>, tensor<3x4x6xf32>)
      model = #ttt.model<kind = swiglu, trained = [1]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @lr_rank(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %lr: tensor<2x3x8xf32>) {
  // expected-error @+1 {{expects 'lr' to have shape [batch, heads, seq, 1 or #weights], got 'tensor<2x3x8xf32>'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) lr(%lr : tensor<2x3x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @lr_seq(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %lr: tensor<2x3x7x1xf32>) {
  // expected-error @+1 {{dimension 2 of 'lr' is the key/value sequence length and must be 8, got 7}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) lr(%lr : tensor<2x3x7x1xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @lr_columns(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %lr: tensor<2x3x8x2xf32>) {
  // expected-error @+1 {{'lr' must have 1 column (shared) or one per weight (1), got 2}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) lr(%lr : tensor<2x3x8x2xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @token_eta_not_causal(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %e: tensor<4xf32>) {
  // expected-error @+1 {{'token_eta' (per-position step sizes) only applies to the causal order}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) token_eta(%e : tensor<4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @token_eta_size(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %e: tensor<5xf32>) {
  // expected-error @+1 {{dimension 0 of 'token_eta' is the chunk size and must be 4, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) token_eta(%e : tensor<5xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @momentum_full_batch(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{momentum needs a chunked schedule with order apply_then_update or update_then_apply; it is undefined for a full_batch schedule}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) momentum(%m : tensor<2x3x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @momentum_causal(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %m: tensor<2x3x8xf32>) {
  // expected-error @+1 {{it is undefined for the causal order}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) momentum(%m : tensor<2x3x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @momentum_shape(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %m: tensor<2x3x8x1xf32>) {
  // expected-error @+1 {{expects 'momentum' to have shape [batch, heads, seq], got 'tensor<2x3x8x1xf32>'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) momentum(%m : tensor<2x3x8x1xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @layernorm_missing(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{the layernorm_mse loss needs 'layernorm(gamma, beta)' operands}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @layernorm_unused(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'layernorm(gamma, beta)' operands are only used by the layernorm_mse loss}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) layernorm(%g, %g : tensor<4xf32>, tensor<4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @layernorm_shape(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{dimension 0 of 'gamma' is the output feature size and must be 4, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) layernorm(%g, %g : tensor<5xf32>, tensor<5xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @layernorm_heads(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %g: tensor<2x4xf32>) {
  // expected-error @+1 {{dimension 0 of 'gamma' is the number of heads and must be 3, got 2}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>) layernorm(%g, %g : tensor<2x4xf32>, tensor<2x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @causal_clip(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{gradient clipping is undefined for the causal order, whose tokens read partial sums of raw gradients}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<clip = frobenius>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @causal_muon(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{orthogonalization (Muon) is undefined for the causal order}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.0, 2.0, 3.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @causal_weight_norm(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{weight normalization is undefined for the causal order}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @result_rank(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{result 'o' must have shape [batch, heads, query seq, Dout], got 'tensor<2x3x8xf32>'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8xf32>
  return
}

// -----

func.func @result_features(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'o' is the output feature size and must be 4, got 5}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x5xf32>
  return
}

// -----

func.func @final_weight_count(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>, %b: tensor<3x1x4xf32>) {
  // expected-error @+1 {{expects either no final-weight results or one per weight (2), got 1}}
  %o:2 = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w, %b : tensor<3x4x4xf32>, tensor<3x1x4xf32>)
      model = #ttt.model<kind = linear, trained = [0], bias = true>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>, tensor<2x3x4x4xf32>
  return
}

// -----

func.func @final_weight_shape(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+1 {{dimension 3 of 'final weight #0' is the weight's column count and must be 4, got 5}}
  %o:2 = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>, tensor<2x3x4x5xf32>
  return
}

// -----

func.func @conv_rank(%q: tensor<8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{expects 'q' to have shape [batch, channels, height, width], got 'tensor<8x5x5xf32>'}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<8x5x5xf32>
  return
}

// -----

func.func @conv_element_type(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf64>) {
  // expected-error @+1 {{expects every operand and result to have element type 'f32' (the type of 'q'), got 'f64'}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf64>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_dynamic_channels(%q: tensor<2x?x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{dimension 1 of 'q' is the channel count and must be static}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x?x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x?x5x5xf32>
  return
}

// -----

func.func @conv_height(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x6x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{dimension 2 of 'k' is the height and must be 5, got 6}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x6x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_kernel_channels(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{dimension 0 of 'kernel' is the channel count and must be 8, got 4}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<4x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_kernel_batch(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<3x8x3x3xf32>) {
  // expected-error @+1 {{dimension 0 of 'kernel' is the batch and must be 2, got 3}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<3x8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_even_kernel(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x2x3xf32>) {
  // expected-error @+1 {{the kernel must have odd height and width (for 'same' zero padding), got 2x3}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x2x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_layernorm(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{the layernorm_mse loss is not defined for a convolution fast weight; use dot or mse}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = layernorm_mse> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_muon(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{orthogonalization (Muon) is not defined for a depth-wise kernel}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.0, 2.0, 3.0]>> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_weight_norm(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{weight normalization is not defined for a depth-wise kernel}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> update = #ttt.update<weight_norm = output_channels> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_clip(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{a depth-wise kernel clips per channel: use clip = frobenius}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> update = #ttt.update<clip = output_channels> -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_inner_steps(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{'inner_steps' must be at least 1, got 0}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> {inner_steps = 0 : i64} -> tensor<2x8x5x5xf32>
  return
}

// -----

func.func @conv_result(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{dimension 3 of 'o' is the width of q and must be 5, got 4}}
  %o = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x4xf32>
  return
}

// -----

func.func @conv_final_kernel(%q: tensor<2x8x5x5xf32>, %k: tensor<2x8x5x5xf32>, %v: tensor<2x8x5x5xf32>, %w: tensor<8x3x3xf32>) {
  // expected-error @+1 {{dimension 2 of 'final kernel' is the kernel height and must be 3, got 5}}
  %o:2 = ttt.dwconv_layer %q, %k, %v, %w : tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<2x8x5x5xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<2x8x5x5xf32>, tensor<2x8x5x3xf32>
  return
}

// -----

// A raised layer and the nodes it was raised from compute one tensor.
func.func @raised_types_differ(%layer: tensor<1x2x8x4xf32>, %nodes: tensor<1x2x8x5xf32>) -> tensor<1x2x8x4xf32> {
  // expected-error @+1 {{'ttt.raised' op failed to verify that all of {raised, original, result} have same type}}
  %r = "ttt.raised"(%layer, %nodes) : (tensor<1x2x8x4xf32>, tensor<1x2x8x5xf32>) -> tensor<1x2x8x4xf32>
  return %r : tensor<1x2x8x4xf32>
}

// -----

func.func @ns_compute_f32(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+6 {{newton_schulz 'compute' must be bf16 or f16, got 'f32'}}
  // expected-error @+5 {{failed to parse TTT_UpdateAttr parameter 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.0, 2.0, 3.0], compute = f32>>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}

// -----

func.func @base_update_without_muon(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>, %v: tensor<2x3x8x4xf32>, %w: tensor<3x4x4xf32>) {
  // expected-error @+5 {{update 'base = update' adds Muon's result to the update it orthogonalized, and needs 'orthogonalize'}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>
      weights(%w : tensor<3x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<base = update>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<2x3x8x4xf32>
  return
}
