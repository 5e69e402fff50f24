//===- Vocabulary.cpp - The session's view of msamp_vocabulary.h ----------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "Vocabulary.h"

namespace msamp::session {

namespace {

struct RoleEntry {
  const char *name;
  msamp_role_kind kind;
};

#define MSAMP_ROLE_ENTRY(ID, Name, spelling, kind)                             \
  {spelling, MSAMP_ROLE_KIND_##kind},
const RoleEntry kRoles[MSAMP_NUM_ROLES] = {MSAMP_ROLE_LIST(MSAMP_ROLE_ENTRY)};
#undef MSAMP_ROLE_ENTRY

#define MSAMP_MEMORY_CATEGORY_KEY(ID, Name, key) key,
const char *const kMemoryCategories[MSAMP_MEMORY_NUM_CATEGORIES] = {
    MSAMP_MEMORY_CATEGORY_LIST(MSAMP_MEMORY_CATEGORY_KEY)};
#undef MSAMP_MEMORY_CATEGORY_KEY

} // namespace

const char *roleName(msamp_role role) { return kRoles[role].name; }

msamp_role_kind roleKind(msamp_role role) { return kRoles[role].kind; }

bool isRoleOfKind(const std::string &role, msamp_role_kind kind) {
  for (const RoleEntry &entry : kRoles)
    if (entry.kind == kind && role == entry.name)
      return true;
  return false;
}

std::string listRolesOfKind(msamp_role_kind kind) {
  std::string s;
  for (const RoleEntry &entry : kRoles)
    if (entry.kind == kind)
      s += (s.empty() ? "" : ", ") + std::string(entry.name);
  return s;
}

const char *memoryCategoryName(msamp_memory_category_id category) {
  return kMemoryCategories[category];
}

} // namespace msamp::session
