"""CuPy: elementwise kernels, a reduction, a matmul (cuBLAS) and a RawKernel (cuModuleLoadData +
cuLaunchKernel), bracketed with cupy.cuda.profiler.start()/stop()."""
import cupy as cp

saxpy = cp.RawKernel(r'''
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}''', "saxpy")


def work(x, y, m):
    z = cp.sin(x) * 2.0 + y
    n = z.size
    saxpy((n // 256 + 1,), (256,), (cp.float32(0.5), x, z, cp.int32(n)))
    s = float(z.sum())  # host sync
    return s, m @ m


x = cp.random.rand(1 << 20, dtype=cp.float32)
y = cp.random.rand(1 << 20, dtype=cp.float32)
m = cp.random.rand(512, 512, dtype=cp.float32)
for _ in range(3):
    work(x, y, m)
cp.cuda.Device().synchronize()
cp.cuda.profiler.start()
s, p = work(x, y, m)
cp.cuda.Device().synchronize()
cp.cuda.profiler.stop()
print("cupy_prog: sum", s, "matmul", float(p[0, 0]))
