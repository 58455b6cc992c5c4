// ttt-to-linattn's form option: which exact form each layer takes, with a
// remark per layer that says why.
// RUN: ttt-opt %s --ttt-to-linattn="form=auto cores=2" --split-input-file -verify-diagnostics | FileCheck %s --check-prefix=AUTO2
// RUN: ttt-opt %s --ttt-to-linattn="form=auto cores=64" --split-input-file | FileCheck %s --check-prefix=AUTO64
// RUN: ttt-opt %s --ttt-to-linattn=form=recurrent --split-input-file | FileCheck %s --check-prefix=REC
// RUN: ttt-opt %s --ttt-to-linattn=form=parallel --split-input-file | FileCheck %s --check-prefix=PAR
// RUN: not ttt-opt %s --ttt-to-linattn=form=fast --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// One stream (B*H = 1) of 64 chunks: on 2 cores the parallel form's extra
// scan work is not worth the second core; on 64 it is.
// AUTO2-LABEL: func.func @one_stream
// AUTO2: ttt.kvb_layer
// AUTO64-LABEL: func.func @one_stream
// AUTO64-NOT: ttt.kvb_layer
// AUTO64: linattn.scan
// REC-LABEL: func.func @one_stream
// REC: ttt.kvb_layer
// PAR-LABEL: func.func @one_stream
// PAR: linattn.scan
// BAD: ttt-to-linattn: unknown form 'fast' (expected parallel, recurrent or auto)
func.func @one_stream(%q: tensor<1x1x512x8xf32>, %w: tensor<1x8x8xf32>) -> tensor<1x1x512x8xf32> {
  // expected-remark @below {{recurrent form chosen (form=auto): 1 streams on 2 cores: the parallel form's 64 chunks could run 2.0x wider, at 5.0x the work and memory traffic}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x1x512x8xf32>, tensor<1x1x512x8xf32>, tensor<1x1x512x8xf32>
      weights(%w : tensor<1x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<1x1x512x8xf32>
  return %o : tensor<1x1x512x8xf32>
}

// -----

// Four streams fill two cores already.
// AUTO2-LABEL: func.func @four_streams
// AUTO2: ttt.kvb_layer
// AUTO64-LABEL: func.func @four_streams
// AUTO64: linattn.scan
func.func @four_streams(%q: tensor<2x2x512x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<2x2x512x8xf32> {
  // expected-remark @below {{recurrent form chosen (form=auto): its 4 streams (B*H) already keep the 2 cores busy}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x512x8xf32>, tensor<2x2x512x8xf32>, tensor<2x2x512x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<2x2x512x8xf32>
  return %o : tensor<2x2x512x8xf32>
}

// -----

// A dynamic batch: the number of streams is unknown, so the recurrent form.
// AUTO2-LABEL: func.func @dynamic_batch
// AUTO2: ttt.kvb_layer
// AUTO64-LABEL: func.func @dynamic_batch
// AUTO64: ttt.kvb_layer
func.func @dynamic_batch(%q: tensor<?x1x512x8xf32>, %w: tensor<1x8x8xf32>) -> tensor<?x1x512x8xf32> {
  // expected-remark @below {{recurrent form chosen (form=auto): the number of streams (B*H) is only known at run time}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<?x1x512x8xf32>, tensor<?x1x512x8xf32>, tensor<?x1x512x8xf32>
      weights(%w : tensor<1x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<?x1x512x8xf32>
  return %o : tensor<?x1x512x8xf32>
}
