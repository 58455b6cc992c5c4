// Every verifier error of ttt.chunk_loop and ttt.chunk_yield, one case each.
// RUN: ttt-opt %s -split-input-file -verify-diagnostics

func.func @window_axes_per_sequence(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{has 1 sequences but 2 window axes; give one axis per sequence}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0, 1] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @output_axes_per_output(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{has 1 outputs but 0 output axes; give one axis per output}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @final_state_count(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{carries 1 state values but returns 0 final states; they must match one to one}}
  %o = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>)
  return
}

// -----

func.func @final_state_type(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{final state #0 has type 'tensor<4xf64>' but its initial value has type 'tensor<4xf32>'}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf64>)
  return
}

// -----

func.func @chunks_without_sequences(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{is cut into chunks of 4 tokens but has no sequences to cut; a loop without windows is chunk(0)}}
  %o = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) outputs along [] {
  ^bb0(%s: tensor<4xf32>):
    ttt.chunk_yield state(%s : tensor<4xf32>)
  } -> state(tensor<4xf32>)
  return
}

// -----

func.func @window_axis_outside_rank(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{window axis 2 of sequence #0 is outside its rank 2}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [2] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @sequence_lengths_differ(%a: tensor<8x4xf32>, %b: tensor<6x4xf32>) {
  // expected-error @+1 {{sequence #1 has 6 tokens along axis 0 but an earlier sequence has 8; the chunks of a loop cut one length}}
  %o = ttt.chunk_loop chunk(4) windows(%a, %b : tensor<8x4xf32>, tensor<6x4xf32>) along [0, 0] outputs along [0] {
  ^bb0(%ac: tensor<4x4xf32>, %bc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%ac : tensor<4x4xf32>)
  } -> outputs(tensor<8x4xf32>)
  return
}

// -----

func.func @output_axis_outside_rank(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{output axis 3 of output #0 is outside its rank 2}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [3] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @output_length(%a: tensor<8x4xf32>) {
  // expected-error @+1 {{output #0 has 6 tokens along axis 0 but the sequences have 8}}
  %o = ttt.chunk_loop chunk(4) windows(%a : tensor<8x4xf32>) along [0] outputs along [0] {
  ^bb0(%ac: tensor<4x4xf32>):
    ttt.chunk_yield outputs(%ac : tensor<4x4xf32>)
  } -> outputs(tensor<6x4xf32>)
  return
}

// -----

func.func @body_argument_count(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{body has 1 arguments but the loop passes 2 (state, windows, invariants)}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>):
    ttt.chunk_yield outputs(%s : tensor<4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @state_argument_type(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{body argument for state #0 has type 'tensor<4xf64>' but the state has type 'tensor<4xf32>'}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf64>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf64>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @window_argument_type(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{body argument for the window of sequence #0 has type 'tensor<3x4xf32>' but a window of 'tensor<?x4xf32>' along axis 0 is 'tensor<4x4xf32>'}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<3x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<3x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @invariant_argument_type(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{body argument for invariant #0 has type 'tensor<3xf32>' but the invariant has type 'tensor<4xf32>'}}
  %o = ttt.chunk_loop chunk(0) invariants(%s0 : tensor<4xf32>) outputs along [0] {
  ^bb0(%g: tensor<3xf32>):
    ttt.chunk_yield outputs(%g : tensor<3xf32>)
  } -> outputs(tensor<3xf32>)
  return
}

// -----

func.func @yield_output_count(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+3 {{yields 0 outputs but the loop has 1}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @yield_state_count(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+3 {{yields 0 state values but the loop carries 1}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @yield_state_type(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+3 {{next state #0 has type 'tensor<?x4xf32>' but the state has type 'tensor<4xf32>'}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%xc : tensor<?x4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @output_does_not_assemble(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+3 {{output #0 of a chunk has type 'tensor<?x4xf32>', which does not assemble along axis 0 into 'tensor<?x5xf32>'}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x5xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func private @f(tensor<?x4xf32>) -> tensor<?x4xf32>

func.func @foreign_op(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+3 {{'func.call' op is not in the canonical body of a ttt.chunk_loop: the body admits only linalg structured ops on tensors, tensor.empty, tensor.extract_slice, tensor.expand_shape, tensor.collapse_shape, tensor.concat, tensor.dim, arith.constant and index arithmetic}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    %y = func.call @f(%xc) : (tensor<?x4xf32>) -> tensor<?x4xf32>
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @float_arithmetic_outside_linalg(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+4 {{'arith.addf' op is not in the canonical body of a ttt.chunk_loop: the body admits only linalg}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    %a = arith.constant 1.0 : f32
    %b = arith.addf %a, %a : f32
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @linalg_on_buffers(%s0: tensor<4xf32>, %x: tensor<?x4xf32>, %m: memref<4xf32>) {
  // expected-error @+4 {{'linalg.fill' op is not in the canonical body of a ttt.chunk_loop: it reads or writes buffers; the body works on tensors}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] invariants(%m : memref<4xf32>) outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>, %mi: memref<4xf32>):
    %a = arith.constant 1.0 : f32
    linalg.fill ins(%a : f32) outs(%mi : memref<4xf32>)
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @effects_in_linalg_region(%s0: tensor<4xf32>, %x: tensor<?x4xf32>, %m: memref<4xf32>) {
  // expected-error @+3 {{'linalg.generic' op is not in the canonical body of a ttt.chunk_loop: its region holds 'memref.store', which has memory effects}}
  %o:2 = ttt.chunk_loop chunk(4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] invariants(%m : memref<4xf32>) outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>, %mi: memref<4xf32>):
    %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%s : tensor<4xf32>) {
    ^bb1(%e: f32):
      %i = arith.constant 0 : index
      memref.store %e, %mi[%i] : memref<4xf32>
      linalg.yield %e : f32
    } -> tensor<4xf32>
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @negative_chunk(%s0: tensor<4xf32>, %x: tensor<?x4xf32>) {
  // expected-error @+1 {{attribute 'chunk' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %o:2 = ttt.chunk_loop chunk(-4) state(%s0 : tensor<4xf32>) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%s: tensor<4xf32>, %xc: tensor<?x4xf32>):
    ttt.chunk_yield outputs(%xc : tensor<?x4xf32>) state(%s : tensor<4xf32>)
  } -> outputs(tensor<?x4xf32>) state(tensor<4xf32>)
  return
}

// -----

func.func @body_without_chunk_yield(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{body must end with ttt.chunk_yield}}
  %o = ttt.chunk_loop chunk(4) windows(%x : tensor<?x4xf32>) along [0] outputs along [0] {
  ^bb0(%xc: tensor<?x4xf32>):
    llvm.unreachable
  } -> outputs(tensor<?x4xf32>)
  return
}
