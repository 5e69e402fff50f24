//===- CompileCache.cpp - Compiling models for msamp-run ------------------===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"

#include "MSAMP/Support/HostCpuFeatures.h"

#include "MSAMP/Runtime/msamp_session.h"

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace msamp::run {

namespace {

std::string errnoText(int err) { return std::strerror(err); }

bool isExecutable(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string selfDirectory() {
  char buffer[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n <= 0)
    return "";
  buffer[n] = '\0';
  std::string path(buffer);
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// mkdir -p.
bool makeDirectories(const std::string &path, std::string &error) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty())
      continue;
    if (mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) {
      error = "cannot create directory '" + partial + "': " + errnoText(errno);
      return false;
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "'" + path + "' is not a directory";
    return false;
  }
  return true;
}

void removeTree(const std::string &path) {
  nftw(
      path.c_str(),
      [](const char *p, const struct stat *, int, struct FTW *) {
        return ::remove(p);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::string cacheRoot(std::string &error) {
  if (const char *dir = std::getenv("MSAMP_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/msamp";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/msamp";
  error = "no cache directory: set MSAMP_CACHE_DIR (or HOME)";
  return "";
}

bool isCompiledDir(const std::string &dir) {
  struct stat st;
  for (const char *file : {"manifest.json", "train_step.so", "train_step.mlir"})
    if (stat((dir + "/" + file).c_str(), &st) != 0)
      return false;
  return true;
}

/// Finds a sibling tool of msamp-run: $ENV_VAR if set, else next to this
/// executable, else on PATH. Empty when not found.
std::string findTool(const char *name, const char *envVar) {
  if (const char *path = std::getenv(envVar); path && *path)
    return path;
  std::string self = selfDirectory();
  if (!self.empty() && isExecutable(self + "/" + name))
    return self + "/" + name;
  if (const char *pathVar = std::getenv("PATH")) {
    std::string paths = pathVar;
    size_t begin = 0;
    while (begin <= paths.size()) {
      size_t end = paths.find(':', begin);
      if (end == std::string::npos)
        end = paths.size();
      std::string candidate = paths.substr(begin, end - begin) + "/" + name;
      if (end > begin && isExecutable(candidate))
        return candidate;
      begin = end + 1;
    }
  }
  return "";
}

/// Runs `args` with stdout redirected to `stdoutPath` (unless empty);
/// returns the exit status, or -1 with `error` set when it could not run.
int runTool(const std::vector<std::string> &args, const std::string &stdoutPath,
            std::string &error) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdoutPath.empty())
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                     stdoutPath.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0666);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = "cannot run '" + args[0] + "': " + errnoText(rc);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      error = "waiting for '" + args[0] + "': " + errnoText(errno);
      return -1;
    }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  error = "'" + args[0] + "' was killed by signal " +
          std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

} // namespace

bool compileModel(const std::string &model, const std::string &level,
                  const std::string &pipelineOptions,
                  const std::string &cudaChip, CompileResult &result,
                  std::string &error) {
  std::string compiler = findTool("msamp-compile", "MSAMP_COMPILE");
  if (compiler.empty()) {
    error = "cannot find msamp-compile (next to msamp-run, on PATH, or set "
            "MSAMP_COMPILE)";
    return false;
  }
  struct stat compilerStat;
  if (stat(compiler.c_str(), &compilerStat) != 0) {
    error = "cannot run '" + compiler + "': " + errnoText(errno);
    return false;
  }
  char modelHash[65];
  if (msamp_sha256_file(model.c_str(), modelHash) != MSAMP_OK) {
    error = msamp_last_error_message();
    return false;
  }
  std::string material = "msamp-run compile cache v1\n";
  material += "model=" + std::string(modelHash) + "\n";
  material += "level=" + level + "\n";
  material += "options=" + pipelineOptions + "\n";
  if (!cudaChip.empty()) // a CPU compile has no target line
    material += "target=cuda:" + cudaChip + "\n";
  // The host code is generated for this machine's CPU: a cache shared with
  // a machine of other features (a home directory on NFS) must not hand
  // over its steps (the session would refuse them).
  material += "cpu=" + msamp_cpu::hostCpuFeatureList() + "\n";
  material += "version=" + std::string(msamp_version()) + "\n";
  material += "compiler=" + std::to_string(compilerStat.st_size) + ":" +
              std::to_string(compilerStat.st_mtim.tv_sec) + "." +
              std::to_string(compilerStat.st_mtim.tv_nsec) + "\n";
  char key[65];
  msamp_sha256(material.data(), material.size(), key);

  std::string root = cacheRoot(error);
  if (root.empty() || !makeDirectories(root, error))
    return false;
  result.dir = root + "/" + key;
  if (isCompiledDir(result.dir)) {
    result.cached = true;
    return true;
  }

  auto start = std::chrono::steady_clock::now();
  std::string tmp = result.dir + ".tmp." + std::to_string(getpid());
  removeTree(tmp);
  if (mkdir(tmp.c_str(), 0777) != 0) {
    error = "cannot create '" + tmp + "': " + errnoText(errno);
    return false;
  }
  std::vector<std::string> args = {compiler, model, "--opt-level",
                                   level,    "-o",  tmp};
  if (!pipelineOptions.empty()) {
    args.push_back("--pipeline-options");
    args.push_back(pipelineOptions);
  }
  if (!cudaChip.empty())
    args.insert(args.end(), {"--target", "cuda", "--chip", cudaChip});
  int rc = runTool(args, tmp + "/compile.log", error);
  if (rc != 0) {
    removeTree(tmp);
    if (rc > 0)
      error = "compiling '" + model + "' at " + level +
              " failed (msamp-compile exited with status " +
              std::to_string(rc) + ")";
    return false;
  }
  if (rename(tmp.c_str(), result.dir.c_str()) != 0) {
    int err = errno;
    removeTree(tmp);
    // Another run finished the same compilation first: use it.
    if ((err == EEXIST || err == ENOTEMPTY) && isCompiledDir(result.dir))
      return true;
    error = "cannot rename '" + tmp + "' to '" + result.dir +
            "': " + errnoText(err);
    return false;
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return true;
}

} // namespace msamp::run
