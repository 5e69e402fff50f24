//===- Vocabulary.h - The session's view of msamp_vocabulary.h --*- C++ -*-===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The role and memory-category names of msamp_vocabulary.h as tables the
// session indexes by its enums: the manifest parser, the memory report and
// the C API (msamp_role_name, ...) all read these, never a string of their
// own.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_LIB_RUNTIME_SESSION_VOCABULARY_H
#define MSAMP_LIB_RUNTIME_SESSION_VOCABULARY_H

#include "MSAMP/Runtime/msamp_vocabulary.h"

#include <string>

namespace msamp::session {

/// The manifest spelling of `role` ("param", ...).
const char *roleName(msamp_role role);
/// Whether `role` is the name of a role and of kind `kind`.
bool isRoleOfKind(const std::string &role, msamp_role_kind kind);
/// The roles of kind `kind`, comma separated, in list order (for messages).
std::string listRolesOfKind(msamp_role_kind kind);
/// The kind of `role`.
msamp_role_kind roleKind(msamp_role role);

/// The memory_report.json key of `category` ("weights", ...).
const char *memoryCategoryName(msamp_memory_category_id category);

} // namespace msamp::session

#endif // MSAMP_LIB_RUNTIME_SESSION_VOCABULARY_H
