// Straight-line functions free each allocation after the entry-block op
// that holds its last use (through views, and inside nested regions);
// anything else goes through upstream's ownership-based deallocation.
// RUN: graph-opt %s --deallocate-buffers --split-input-file | FileCheck %s

#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @straight_line
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.fill {{.*}} outs(%[[A]]
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[A]]
// CHECK: scf.if
// CHECK: memref.copy %[[VIEW]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
// CHECK-NOT: bufferization.dealloc
func.func @straight_line(%c: i1, %out: memref<2x2xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  scf.if %c {
    memref.copy %view, %out : memref<2x2xf32> to memref<2x2xf32>
  }
  linalg.fill ins(%one : f32) outs(%b : memref<4xf32>)
  return
}

// -----

// An allocation inside a branch: the ownership-based pipeline takes the
// whole module.
// CHECK-LABEL: func.func @branch
// CHECK: scf.if
// CHECK: memref.alloc
// CHECK: memref.dealloc
func.func @branch(%c: i1, %out: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  scf.if %c {
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
    memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  }
  return
}

// -----

// A buffer yielded by a branch escapes the ops that only access it: the
// ownership-based pipeline (whose canonicalization turns the branch into
// a select) frees it after the last use of either.
// CHECK-LABEL: func.func @yielded
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[R:.*]] = arith.select %{{.*}}, %[[A]], %{{.*}}
// CHECK: memref.copy %[[R]]
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @yielded(%c: i1, %in: memref<4xf32>, %out: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
  %r = scf.if %c -> memref<4xf32> {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %in : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A runtime call that reads or writes a buffer through its address (a
// collective): the buffer lives until the call, also where the address is
// offset first.
// CHECK-LABEL: func.func @address_taken
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: %[[Q:.*]] = arith.addi %[[P]]
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: call @runtime(%[[Q]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: linalg.fill {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func private @runtime(index)
func.func @address_taken() {
  %one = arith.constant 1.0 : f32
  %four = arith.constant 4 : index
  %a = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %q = arith.addi %p, %four : index
  %b = memref.alloc() : memref<4xf32>
  call @runtime(%q) : (index) -> ()
  linalg.fill ins(%one : f32) outs(%b : memref<4xf32>)
  return
}

// -----

// A loop that carries two buffers and replaces one each iteration: after
// the loop the ownership-based deallocation frees either of two buffers,
// through a helper function it generates. The helper's arguments are
// dynamically shaped, which the CPU target's bare-pointer calling
// convention cannot pass, so it is inlined and removed.
// CHECK-LABEL: func.func @loop_carries_two_buffers
// CHECK: scf.for
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.dealloc
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: func.func
func.func @loop_carries_two_buffers(%a: memref<4xf32>, %b: memref<4xf32>, %n: index, %out0: memref<4xf32>, %out1: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (memref<4xf32>, memref<4xf32>) {
    %new = memref.alloc() : memref<4xf32>
    linalg.add ins(%x, %y : memref<4xf32>, memref<4xf32>) outs(%new : memref<4xf32>)
    scf.yield %new, %x : memref<4xf32>, memref<4xf32>
  }
  memref.copy %r#0, %out0 : memref<4xf32> to memref<4xf32>
  memref.copy %r#1, %out1 : memref<4xf32> to memref<4xf32>
  return
}
