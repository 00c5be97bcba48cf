// CPU build only (`make cpu`, -Icsrc/cpu): stands in for CUDA's cuda_runtime.h.
#pragma once
#include "gpu_runtime_cpu.h"
