// CPU build only (`make cpu`, -Icsrc/cpu): stands in for HIP's hip/hip_runtime.h once the kernel
// is migrated, defining the platform macro hipcc defines when it targets AMD GPUs.
#pragma once
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include "../gpu_runtime_cpu.h"
