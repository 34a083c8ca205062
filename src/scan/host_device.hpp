// RLM_HOST_DEVICE marks the per-element arithmetic that a CPU loop and a CUDA kernel share (kf_step.hpp,
// memory/spiking_highway_step.hpp): compiled by nvcc for both sides, by the host compiler as an always-inlined
// function, so that a CPU loop calling it still vectorises and its SIMD clones (simd_clones.hpp) inline it. Sharing
// it means the CPU tests check the kernels' arithmetic too, on machines without a GPU.
#pragma once

#if defined(__CUDACC__)
#define RLM_HOST_DEVICE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define RLM_HOST_DEVICE inline __attribute__((always_inline))
#else
#define RLM_HOST_DEVICE inline
#endif
