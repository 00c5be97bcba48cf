// Written for ChatGPU's migration corpus in the style of NVIDIA cuda-samples' Common/helper_string.h
// (command-line parsing helpers the samples include through helper_cuda.h). Not NVIDIA's file.
#ifndef COMMON_HELPER_STRING_H_
#define COMMON_HELPER_STRING_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>

#ifndef EXIT_WAIVED
#define EXIT_WAIVED 2
#endif

inline int stringRemoveDelimiter(char delimiter, const char *string) {
  int string_start = 0;
  while (string[string_start] == delimiter) {
    string_start++;
  }
  if (string_start >= static_cast<int>(strlen(string) - 1)) {
    return 0;
  }
  return string_start;
}

inline bool checkCmdLineFlag(const int argc, const char **argv, const char *string_ref) {
  bool bFound = false;
  if (argc >= 1) {
    for (int i = 1; i < argc; i++) {
      int string_start = stringRemoveDelimiter('-', argv[i]);
      const char *string_argv = &argv[i][string_start];
      const char *equal_pos = strchr(string_argv, '=');
      int argv_length = static_cast<int>(equal_pos == 0 ? strlen(string_argv) : equal_pos - string_argv);
      int length = static_cast<int>(strlen(string_ref));
      if (length == argv_length && !strncmp(string_argv, string_ref, length)) {
        bFound = true;
        continue;
      }
    }
  }
  return bFound;
}

inline int getCmdLineArgumentInt(const int argc, const char **argv, const char *string_ref) {
  int value = -1;
  for (int i = 1; i < argc; i++) {
    int string_start = stringRemoveDelimiter('-', argv[i]);
    const char *string_argv = &argv[i][string_start];
    int length = static_cast<int>(strlen(string_ref));
    if (!strncmp(string_argv, string_ref, length)) {
      value = atoi(&string_argv[length]);
    }
  }
  return value;
}

// Finds a data or module file next to the executable (the samples ship .fatbin/.ptx files this way).
inline char *sdkFindFilePath(const char *filename, const char *executable_path) {
  static char path[4096];
  if (executable_path == NULL) return NULL;
  std::string dir(executable_path);
  size_t slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  snprintf(path, sizeof(path), "%s/%s", dir.c_str(), filename);
  FILE *fp = fopen(path, "rb");
  if (fp == NULL) return NULL;
  fclose(fp);
  return path;
}

#endif  // COMMON_HELPER_STRING_H_
