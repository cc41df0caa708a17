//===- ToolInit.h - process setup shared by Cleave's tools ------*- C++ -*-===//

#ifndef CLEAVE_SUPPORT_TOOLINIT_H
#define CLEAVE_SUPPORT_TOOLINIT_H

namespace cleave {

/// Call first in a tool's main. Large graphs allocate gigabytes in small
/// pieces, and on virtual machines the page faults for that memory cost more
/// than the import itself (a 1M-node round trip: 19 s with 4 KiB pages,
/// 9 s with transparent huge pages). glibc backs its heap with huge pages
/// only when the `glibc.malloc.hugetlb` tunable is set at start-up, so the
/// tool re-executes itself once with it set. CLEAVE_NO_HUGEPAGES=1, an
/// existing setting of the tunable, or a failing exec leave the process as
/// it is.
void initTool(int argc, char **argv);

} // namespace cleave

#endif // CLEAVE_SUPPORT_TOOLINIT_H
