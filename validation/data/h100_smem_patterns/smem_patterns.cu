// Shared-memory wavefronts of one warp-level st.shared / ld.shared per lane-address pattern (wave47).
// Each launch: one block of 32 threads; lane i accesses byte offset offs[i] (-1: lane does not access).
#include <cstdio>
#include <vector>
#include <string>
#define ST(NAME, ASM, ...) __global__ void NAME(const int* offs, int* out) { \
  __shared__ __align__(16) unsigned char smem[16384]; \
  unsigned base = (unsigned)__cvta_generic_to_shared(smem); int lane = threadIdx.x; int o = offs[lane]; \
  if (o >= 0) asm volatile(ASM :: "r"(base + o), __VA_ARGS__ : "memory"); \
  __syncthreads(); out[lane] = ((volatile int*)smem)[lane]; }
ST(st32, "st.shared.b32 [%0], %1;", "r"(lane))
ST(st64, "st.shared.v2.b32 [%0], {%1,%2};", "r"(lane), "r"(1))
ST(st128, "st.shared.v4.b32 [%0], {%1,%2,%3,%4};", "r"(lane), "r"(1), "r"(2), "r"(3))
#define LD(NAME, ASM, ...) __global__ void NAME(const int* offs, int* out) { \
  __shared__ __align__(16) unsigned char smem[16384]; \
  unsigned base = (unsigned)__cvta_generic_to_shared(smem); int lane = threadIdx.x; int o = offs[lane]; \
  int a = 0, b = 0, c = 0, d = 0; \
  if (o >= 0) asm volatile(ASM : __VA_ARGS__ : "r"(base + o) : "memory"); \
  out[lane] = a + b + c + d; }
LD(ld32, "ld.shared.b32 %0, [%4];", "=r"(a), "=r"(b), "=r"(c), "=r"(d))
LD(ld64, "ld.shared.v2.b32 {%0,%1}, [%4];", "=r"(a), "=r"(b), "=r"(c), "=r"(d))
LD(ld128, "ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];", "=r"(a), "=r"(b), "=r"(c), "=r"(d))
typedef void (*K)(const int*, int*);
int main() {
  K ks[6] = {st32, st64, st128, ld32, ld64, ld128}; int ws[6] = {4, 8, 16, 4, 8, 16};
  const char* kn[6] = {"st32", "st64", "st128", "ld32", "ld64", "ld128"};
  int *doffs, *dout; cudaMalloc(&doffs, 128); cudaMalloc(&dout, 128);
  for (int k = 0; k < 6; k++) {
    int W = ws[k];
    for (int p = 0; p < 12; p++) {
      std::vector<int> o(32);
      for (int l = 0; l < 32; l++) {
        switch (p) {
          case 0: o[l] = 0; break;                          // all lanes one address
          case 1: o[l] = l * W; break;                      // distinct, contiguous
          case 2: o[l] = (l / 2) * W; break;                // pairs share
          case 3: o[l] = (l % 16) * W; break;               // lane t and t+16 share
          case 4: o[l] = (l % 8) * W; break;                // 4 lanes share, spread over quarters
          case 5: o[l] = (l / 8) * W; break;                // each quarter one address
          case 6: o[l] = (l / 16) * W; break;               // each half one address
          case 7: o[l] = l < 8 ? l * W : -1; break;         // only lanes 0-7
          case 8: o[l] = (l % 16) < 4 ? (l % 16 + (l / 16) * 4) * W : -1; break;  // lanes 0-3,16-19
          case 9: o[l] = (l % 8) < 4 ? (l % 8 + (l / 8) * 4) * W : -1; break;     // lanes 0-3,8-11,16-19,24-27
          case 10: o[l] = l < 16 ? 0 : -1; break;           // lanes 0-15 one address
          case 11: o[l] = l * 128; break;                   // all in one bank
        }
      }
      cudaMemcpy(doffs, o.data(), 128, cudaMemcpyHostToDevice);
      ks[k]<<<1, 32>>>(doffs, dout);
      cudaDeviceSynchronize();
      printf("launch %s pattern %d\n", kn[k], p);
    }
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
