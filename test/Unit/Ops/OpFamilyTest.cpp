//===- OpFamilyTest.cpp - one family per op in every layer ----------------===//
//
// An op's signature (lib/Ops/<Family>Ops.cpp), reference kernel
// (lib/Kernels/<Family>Kernels.cpp) and CPU lowering
// (lib/Conversion/GraphToLinalg/<Family>Lowerings.cpp) sit in files of
// the same family, so that whoever looks for one piece of an op finds the
// others by name. (Gradient rules are checked where their table is built.)
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/GraphToLinalg.h"
#include "cleave/Kernels/KernelHost.h"
#include "cleave/Ops/GradientRules.h"
#include "cleave/Ops/OpRegistry.h"

#include "gtest/gtest.h"

#include <string>

using namespace cleave;

namespace {

std::string describe(const ops::OpSpec &op, llvm::StringRef layer,
                     ops::OpFamily family) {
  return (op.name + ": signature in " + ops::stringifyOpFamily(op.family) +
          "Ops.cpp, " + layer + " in " + ops::stringifyOpFamily(family))
      .str();
}

TEST(OpFamilyTest, KernelsAndLoweringsSitInTheirOpsFamily) {
  std::vector<std::string> misplaced;
  size_t kernels = 0, lowerings = 0;
  for (const ops::OpSpec *op : ops::getRegisteredOps()) {
    if (std::optional<ops::OpFamily> family =
            interp::lookupKernelFamily(op->name)) {
      ++kernels;
      if (*family != op->family)
        misplaced.push_back(describe(*op, "kernel", *family) + "Kernels.cpp");
    }
    if (std::optional<ops::OpFamily> family =
            conversion::lookupCPULoweringFamily(op->name)) {
      ++lowerings;
      if (*family != op->family)
        misplaced.push_back(describe(*op, "lowering", *family) +
                            "Lowerings.cpp");
    }
  }
  // The lookups must see the tables, or the check above proves nothing.
  EXPECT_GT(kernels, 200u);
  EXPECT_GT(lowerings, 150u);
  std::string list;
  for (const std::string &line : misplaced)
    list += "  " + line + "\n";
  EXPECT_TRUE(misplaced.empty()) << misplaced.size() << " misplaced:\n" << list;
}

TEST(OpFamilyTest, FamilyNamesAreFileStems) {
  EXPECT_EQ(ops::stringifyOpFamily(ops::OpFamily::ControlFlow), "ControlFlow");
  EXPECT_EQ(ops::lookupOp("Relu")->family, ops::OpFamily::NN);
  EXPECT_EQ(ops::lookupOp("MatMul")->family, ops::OpFamily::Math);
  EXPECT_EQ(ops::lookupOp("SaveV2")->family, ops::OpFamily::IO);
}

} // namespace
