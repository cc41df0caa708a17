//===- HostOps.cpp - logging, string and summary op signatures ------------===//
//
// Ops that run on the host: logging_ops.cc (Print, Assert, summaries), the
// string ops of string_ops.cc (formatting, StringJoin), and the summary
// writers of summary_ops.cc (what host_call writes TensorBoard's event files
// with).
//
//===----------------------------------------------------------------------===//

#include "CommonShapeFns.h"
#include "OpTables.h"

using namespace cleave::ops;
using namespace cleave::ops::detail;

OpTable cleave::ops::detail::getHostOps() {
  return {
      // Logging: stateful so that they are neither pruned nor folded.
      {"Print",
       {"input: T", "data: U"},
       {"output: T"},
       {"T: type", "U: list(type) >= 0", "message: string = ''",
        "first_n: int = -1", "summarize: int = 3"},
       /*isStateful=*/true},
      {"PrintV2",
       {"input: string"},
       {},
       {"output_stream: string = 'stderr'", "end: string = '\\n'"},
       /*isStateful=*/true},
      {"Assert",
       {"condition: bool", "data: T"},
       {},
       {"T: list(type)", "summarize: int = 3"},
       /*isStateful=*/true},

      // Strings.
      {"StringLength",
       {"input: string"},
       {"output: int32"},
       {"unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"}},
      {"StringFormat",
       {"inputs: T"},
       {"output: string"},
       {"T: list(type) >= 0", "template: string = '%s'",
        "placeholder: string = '%s'", "summarize: int = 3"}},
      {"StringJoin",
       {"inputs: N * string"},
       {"output: string"},
       {"N: int >= 0", "separator: string = ''"}},
      {"AsString",
       {"input: T"},
       {"output: string"},
       {"T: {realnumbertype, complex64, complex128, bool, variant, string}",
        "precision: int = -1", "scientific: bool = false",
        "shortest: bool = false", "width: int = -1", "fill: string = ''"}},

      // Summaries.
      {"ScalarSummary",
       {"tags: string", "values: T"},
       {"summary: string"},
       {"T: realnumbertype"}},
      {"HistogramSummary",
       {"tag: string", "values: T"},
       {"summary: string"},
       {"T: realnumbertype = DT_FLOAT"}},
      {"MergeSummary",
       {"inputs: N * string"},
       {"summary: string"},
       {"N: int >= 1"}},

      // Summary writers: a resource per writer, an event file in logdir.
      {"SummaryWriter",
       {},
       {"writer: resource"},
       {"shared_name: string = ''", "container: string = ''"},
       /*isStateful=*/true},
      {"CreateSummaryFileWriter",
       {"writer: resource", "logdir: string", "max_queue: int32",
        "flush_millis: int32", "filename_suffix: string"},
       {},
       {},
       /*isStateful=*/true},
      {"WriteScalarSummary",
       {"writer: resource", "step: int64", "tag: string", "value: T"},
       {},
       {"T: realnumbertype"},
       /*isStateful=*/true},
      {"WriteSummary",
       {"writer: resource", "step: int64", "tensor: T", "tag: string",
        "summary_metadata: string"},
       {},
       {"T: type"},
       /*isStateful=*/true},
      {"FlushSummaryWriter", {"writer: resource"}, {}, {}, /*isStateful=*/true},
      {"CloseSummaryWriter", {"writer: resource"}, {}, {}, /*isStateful=*/true},
  };
}

//===----------------------------------------------------------------------===//
// Shape functions
//===----------------------------------------------------------------------===//

/// StringJoin: scalars broadcast; the other inputs share one shape.
static std::string stringJoinShape(InferenceContext &ctx) {
  Shape out = Shape::scalar();
  bool sawNonScalar = false;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    Shape in = ctx.getInputShape(i);
    if (in.hasRank() && in.rank() == 0)
      continue;
    if (!sawNonScalar) {
      out = in;
      sawNonScalar = true;
      continue;
    }
    std::string error;
    std::optional<Shape> merged = mergeShapes(out, in, error);
    if (!merged)
      return error;
    out = *merged;
  }
  ctx.setOutput(0, out);
  return "";
}

ShapeFnTable cleave::ops::detail::getHostShapeFns() {
  return {
      {"Print", shapes::unchanged},
      {"PrintV2", shapes::none},
      {"Assert", shapes::none},
      {"StringFormat", shapes::scalar},
      {"StringJoin", stringJoinShape},
      {"StringLength", shapes::unchanged},
      {"AsString", shapes::unchanged},
      {"ScalarSummary", shapes::scalar},
      {"HistogramSummary", shapes::scalar},
      {"MergeSummary", shapes::scalar},
      {"SummaryWriter", shapes::scalar},
      {"CreateSummaryFileWriter", shapes::none},
      {"WriteScalarSummary", shapes::none},
      {"WriteSummary", shapes::none},
      {"FlushSummaryWriter", shapes::none},
      {"CloseSummaryWriter", shapes::none},
  };
}

//===----------------------------------------------------------------------===//
// Gradients (logging_ops.py)
//===----------------------------------------------------------------------===//

/// Print passes its input through; the data it prints gets no gradient.
static std::string printGrad(GradientContext &ctx) {
  ctx.setInputGrad(0, ctx.getOutputGrad(0));
  return "";
}

detail::GradFnTable cleave::ops::detail::getHostGradFns() {
  return {{"Print", printGrad}};
}
