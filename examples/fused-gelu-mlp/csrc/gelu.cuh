// The element math of the fused bias + GELU kernel (tanh approximation, as in GPT-2 and BERT).
// Shared by the GPU kernels in fused_bias_gelu.cu and, through csrc/cpu/, by the CPU build.
#pragma once
#include <math.h>

__host__ __device__ inline float gelu_tanh(float v) {
  const float k0 = 0.7978845608028654f;  // sqrt(2 / pi)
  const float k1 = 0.044715f;
  return 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));
}

// d gelu_tanh / d v
__host__ __device__ inline float gelu_tanh_grad(float v) {
  const float k0 = 0.7978845608028654f;
  const float k1 = 0.044715f;
  const float u = k0 * (v + k1 * v * v * v);
  const float t = tanhf(u);
  const float du = k0 * (1.0f + 3.0f * k1 * v * v);
  return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
}
