//===- OpRegistry.h - TensorFlow op signatures ------------------*- C++ -*-===//
//
// One entry per TensorFlow op type, written like TensorFlow's REGISTER_OP:
// inputs, outputs and attrs as "name: type" strings. The importer uses the
// signatures to type a node's results and to count its outputs; later passes
// use the same entries for shape inference, device support and gradients.
// Op types without an entry stay valid and are kept as opaque nodes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_OPS_OPREGISTRY_H
#define CLEAVE_OPS_OPREGISTRY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cleave::ops {

/// One input or output argument, as in OpDef.ArgDef: "x: T", "x: float",
/// "x: N * T", "x: Tlist" (a list(type) attr) or "x: Ref(T)".
struct ArgSpec {
  std::string name;
  int32_t fixedType = 0;    ///< DataType value when the type is fixed.
  std::string typeAttr;     ///< Attr giving the type ("T").
  std::string numberAttr;   ///< Attr giving the repeat count ("N").
  std::string typeListAttr; ///< list(type) attr giving each type ("Tout").
  bool isRef = false;
};

/// One attribute, as in OpDef.AttrDef: "T: type", "N: int >= 1",
/// "data_format: string = 'NHWC'". The default is kept as written.
struct AttrSpec {
  std::string name;
  std::string type;         ///< "type", "int", "list(type)", "func", ...
  std::string defaultValue; ///< Empty when the attr has no default.
  /// DataType values a "type" or "list(type)" attr may take ("{float,
  /// double}", "numbertype"); empty when any type is allowed.
  std::vector<int32_t> allowedTypes;
  /// Values a "string" or "list(string)" attr may take ("{'SAME',
  /// 'VALID'}"), unquoted; empty when any string is allowed.
  std::vector<std::string> allowedStrings;
  /// Lower bound from ">= N" on an int or list attr (a list's length).
  /// Like TensorFlow, an attr used as a number_attr or type_list_attr gets
  /// a minimum of 1 unless the spec gives one.
  std::optional<int64_t> minimum;
};

/// The family an op belongs to: the TensorFlow registration file it comes
/// from, and the file of each layer that holds its pieces. An op's
/// signature, shape function and gradient rule live in
/// lib/Ops/<Family>Ops.cpp, its reference kernel in
/// lib/Kernels/<Family>Kernels.cpp and its CPU lowering in
/// lib/Conversion/GraphToLinalg/<Family>Lowerings.cpp.
enum class OpFamily {
  Array,       ///< array_ops: shapes, slicing, gather, concat, casts
  Math,        ///< math_ops: elementwise math, reductions, matmul
  NN,          ///< nn_ops: activations, convolution, pooling, losses
  State,       ///< state_ops, resource_variable_ops, training
  ControlFlow, ///< control_flow_ops, no_op, sendrecv_ops
  Functional,  ///< functional_ops, function_ops
  Random,      ///< random_ops, stateless_random_ops
  TPU,         ///< tpu_replication_ops, infeed/outfeed, collectives
  Host,        ///< logging_ops, string_ops, summary_ops
  Data,        ///< data_flow, list, lookup, dataset, parsing
  IO,          ///< io_ops: checkpoints
};

/// "Array", "ControlFlow", ...: the family's file-name stem.
llvm::StringRef stringifyOpFamily(OpFamily family);

/// The signature of one op type.
struct OpSpec {
  std::string name;
  OpFamily family = OpFamily::Array;
  std::vector<ArgSpec> inputs;
  std::vector<ArgSpec> outputs;
  std::vector<AttrSpec> attrs;
  /// OpDef.is_stateful, as TensorFlow computes it: set by the op's
  /// registration, and implied by any argument of fixed type resource.
  /// Ops that only update Ref inputs (Assign, ApplyGradientDescent) are not
  /// stateful in TensorFlow; see mayHaveSideEffects().
  bool isStateful = false;
  /// Whether the device backend can compile the op (TensorFlow: it has an
  /// XLA kernel for TPU). Host-only ops (strings, printing, summaries,
  /// datasets, ref variables, host transfers) are not; inside a replicated
  /// computation they must be outside-compiled.
  bool isDeviceCompilable = false;

  const AttrSpec *findAttr(llvm::StringRef attrName) const;

  /// True when the op is stateful or has a Ref argument: such nodes must
  /// not be pruned, merged or reordered (TensorFlow's optimizers treat Ref
  /// inputs the same way).
  bool mayHaveSideEffects() const;
};

/// The signature of `opType`, or null when this build does not know it.
const OpSpec *lookupOp(llvm::StringRef opType);

/// TensorFlow's message for a node whose op this build does not know:
/// "Op type not registered '<op>' in binary running on <host>. ...".
std::string getOpNotRegisteredMessage(llvm::StringRef opType);

/// Every registered op, sorted by name.
std::vector<const OpSpec *> getRegisteredOps();

/// "DT_FLOAT" -> 1, as type attr defaults are written; empty for any other
/// text.
std::optional<int32_t> parseDataTypeEnum(llvm::StringRef text);

/// The text of a '...' or "..." string default with its C escapes undone;
/// empty when `text` is not one quoted string.
std::optional<std::string> parseQuotedDefault(llvm::StringRef text);

} // namespace cleave::ops

#endif // CLEAVE_OPS_OPREGISTRY_H
