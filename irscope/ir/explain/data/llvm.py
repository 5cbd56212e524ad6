"""LLVM IR instructions and the intrinsics Triton's LLVM IR calls (llvm.nvvm.*, llvm.amdgcn.*, generic ones).

Facts from the LLVM Language Reference and the NVPTX / AMDGPU backend docs, in irscope's own words.
INSTRUCTIONS: opcode -> (title, template); fields {d} (the result), {type} (the value type in words),
{ops} (the operands as written). INTRINSICS: a name prefix after `llvm.` -> (title, text); the longest
matching prefix wins, so `nvvm.shfl.sync.bfly` covers `@llvm.nvvm.shfl.sync.bfly.i32`.
"""

INSTRUCTIONS: dict[str, tuple[str, str]] = {
    "add": ("Integer add", "{d} = {a} + {b} ({type})"),
    "sub": ("Integer subtract", "{d} = {a} - {b} ({type})"),
    "mul": ("Integer multiply", "{d} = {a} × {b} ({type}; only the low bits are kept)"),
    "sdiv": ("Signed divide", "{d} = {a} / {b}, rounded toward zero ({type})"),
    "udiv": ("Unsigned divide", "{d} = {a} / {b}, unsigned ({type})"),
    "srem": ("Signed remainder", "{d} = {a} mod {b}, with the sign of {a} ({type})"),
    "urem": ("Unsigned remainder", "{d} = {a} mod {b}, unsigned ({type})"),
    "shl": ("Shift left", "{d} = {a} << {b} ({type})"),
    "lshr": ("Logical shift right", "{d} = {a} >> {b}, zeros shifted in ({type})"),
    "ashr": (
        "Arithmetic shift right",
        "{d} = {a} >> {b}, copies of the sign bit shifted in ({type})",
    ),
    "and": ("Bitwise AND", "{d} = {a} AND {b} ({type}; on i1 values: both true)"),
    "or": ("Bitwise OR", "{d} = {a} OR {b} ({type}; on i1 values: either true)"),
    "xor": ("Bitwise XOR", "{d} = {a} XOR {b} ({type}; XOR with all ones is NOT)"),
    "fadd": ("Float add", "{d} = {a} + {b} ({type})"),
    "fsub": ("Float subtract", "{d} = {a} - {b} ({type})"),
    "fmul": ("Float multiply", "{d} = {a} × {b} ({type})"),
    "fdiv": ("Float divide", "{d} = {a} / {b} ({type})"),
    "frem": ("Float remainder", "{d} = the remainder ({type})"),
    "fneg": ("Float negate", "{d} = the operand with its sign flipped ({type})"),
    "icmp": ("Integer compare", "{d} = whether {cmp} holds (an i1, or a vector of them)"),
    "fcmp": ("Float compare", "{d} = whether {cmp} holds (an i1, or a vector of them)"),
    "select": ("Select", "{d} = {b} if {a} is true, else {c}"),
    "phi": (
        "Phi",
        "{d} = a value that depends on which block control came from: each [value, block] pair says "
        "which value arrives along which edge (how loop-carried values look in SSA form)",
    ),
    "load": ("Load", "{d} = {type} read from {space} at the pointer operand"),
    "store": ("Store", "write {type} to {space} at the pointer operand"),
    "getelementptr": (
        "Address computation",
        "{d} = a pointer offset from a base by an index, scaled "
        "by the element type's size; it does no memory access",
    ),
    "alloca": ("Stack allocation", "{d} = space on the thread's stack (local memory on a GPU)"),
    "atomicrmw": (
        "Atomic read-modify-write",
        "{d} = the old value in memory, which is atomically updated",
    ),
    "cmpxchg": (
        "Atomic compare-and-exchange",
        "{d} = the old value and whether the exchange happened",
    ),
    "fence": ("Memory fence", "order memory accesses before and after this point ({ops})"),
    "bitcast": ("Bitcast", "{d} = {a}'s bits seen as another type ({type})"),
    "ptrtoint": ("Pointer to integer", "{d} = {a} as an integer"),
    "inttoptr": ("Integer to pointer", "{d} = {a} used as an address"),
    "addrspacecast": ("Address-space cast", "{d} = {a} converted to another address space"),
    "trunc": ("Truncate", "{d} = the low bits of {a} ({type})"),
    "zext": ("Zero-extend", "{d} = {a} widened with zero bits ({type})"),
    "sext": ("Sign-extend", "{d} = {a} widened with copies of its sign bit ({type})"),
    "fptrunc": ("Narrow a float", "{d} = {a} rounded to a narrower type ({type})"),
    "fpext": ("Widen a float", "{d} = {a} converted exactly to a wider type ({type})"),
    "sitofp": ("Signed integer to float", "{d} = {a} as a float ({type})"),
    "uitofp": ("Unsigned integer to float", "{d} = {a} as a float ({type})"),
    "fptosi": (
        "Float to signed integer",
        "{d} = {a} rounded toward zero to a signed integer ({type})",
    ),
    "fptoui": (
        "Float to unsigned integer",
        "{d} = {a} rounded toward zero to an unsigned integer ({type})",
    ),
    "extractelement": ("Extract a vector element", "{d} = one element of a vector register"),
    "insertelement": (
        "Insert a vector element",
        "{d} = a copy of the vector with one element replaced",
    ),
    "shufflevector": (
        "Shuffle vectors",
        "{d} = a new vector whose elements are picked from two vectors by a constant "
        "mask (splits a wide load into pieces or joins pieces; usually free after register allocation)",
    ),
    "extractvalue": (
        "Extract a struct field",
        "{d} = one field of a struct value (Triton passes a thread's share of a "
        "tensor around as a struct of scalars)",
    ),
    "insertvalue": ("Insert a struct field", "{d} = a copy of the struct with one field replaced"),
    "br": ("Branch", "jump to a block (conditionally on an i1 when it names two)"),
    "switch": ("Switch", "jump to the block matching the value"),
    "ret": ("Return", "return from the kernel"),
    "unreachable": ("Unreachable", "control never gets here"),
    "call": ("Call", "{d} = a call of {callee}"),
    "freeze": (
        "Freeze",
        "{d} = the operand, with any undefined value pinned to one arbitrary value",
    ),
}

# icmp/fcmp condition codes.
CONDITIONS: dict[str, str] = {
    "eq": "a == b",
    "ne": "a != b",
    "slt": "a < b (signed)",
    "sle": "a <= b (signed)",
    "sgt": "a > b (signed)",
    "sge": "a >= b (signed)",
    "ult": "a < b (unsigned)",
    "ule": "a <= b (unsigned)",
    "ugt": "a > b (unsigned)",
    "uge": "a >= b (unsigned)",
    "oeq": "a == b (neither NaN)",
    "one": "a != b (neither NaN)",
    "olt": "a < b (neither NaN)",
    "ole": "a <= b (neither NaN)",
    "ogt": "a > b (neither NaN)",
    "oge": "a >= b (neither NaN)",
    "ueq": "a == b or either is NaN",
    "une": "a != b or either is NaN",
    "ult_": "a < b or NaN",
    "ord": "neither is NaN",
    "uno": "either is NaN",
    "ugt_": "a > b or NaN",
}

# LLVM address spaces on NVPTX and AMDGPU.
ADDRESS_SPACES: dict[str, dict[str, str]] = {
    "nvptx": {
        "0": "generic memory",
        "1": "global memory",
        "3": "shared memory",
        "4": "constant memory",
        "5": "local memory",
        "6": "tensor memory",
    },
    "amdgpu": {
        "0": "flat (generic) memory",
        "1": "global memory",
        "3": "LDS (shared memory)",
        "4": "constant memory",
        "5": "private (scratch) memory",
        "7": "buffer memory",
        "8": "buffer resource memory",
    },
}

INTRINSICS: dict[str, tuple[str, str]] = {
    # NVIDIA special registers and sync
    "nvvm.read.ptx.sreg.tid": ("Thread index", "this thread's index within the block (threadIdx)"),
    "nvvm.read.ptx.sreg.ctaid": (
        "Block index",
        "this block's index in the grid (blockIdx), i.e. tl.program_id",
    ),
    "nvvm.read.ptx.sreg.nctaid": (
        "Grid size",
        "the number of blocks in the grid (gridDim), i.e. tl.num_programs",
    ),
    "nvvm.read.ptx.sreg.ntid": ("Block size", "the number of threads in the block (blockDim)"),
    "nvvm.read.ptx.sreg.laneid": ("Lane index", "this thread's lane within its warp"),
    "nvvm.read.ptx.sreg.clock": ("Clock", "the SM's cycle counter"),
    "nvvm.barrier": (
        "Block barrier",
        "every thread of the block waits here for the others (bar.sync / __syncthreads)",
    ),
    "nvvm.bar.warp.sync": ("Warp barrier", "the lanes of the mask wait for each other"),
    "nvvm.shfl.sync.bfly": (
        "Warp shuffle, butterfly",
        "read a register of the lane whose number differs by the XOR "
        "mask (a reduction step across lanes, no memory)",
    ),
    "nvvm.shfl.sync.idx": ("Warp shuffle, indexed", "read a register of the given lane"),
    "nvvm.shfl.sync.up": ("Warp shuffle, up", "read a register of a lower lane"),
    "nvvm.shfl.sync.down": ("Warp shuffle, down", "read a register of a higher lane"),
    "nvvm.redux.sync": (
        "Warp reduction",
        "reduce a value over the warp's lanes in one instruction (redux.sync)",
    ),
    "nvvm.vote": ("Warp vote", "combine a predicate over the warp"),
    "nvvm.elect.sync": ("Elect one lane", "pick one active lane of the warp (elect.sync)"),
    "nvvm.fence.proxy.async": (
        "Async-proxy fence",
        "make ordinary shared-memory writes visible to async units (TMA, wgmma, tcgen05)",
    ),
    "nvvm.membar": ("Memory barrier", "order memory accesses at a scope"),
    "nvvm.cp.async.commit.group": (
        "Commit async copies",
        "close the current group of cp.async copies",
    ),
    "nvvm.cp.async.wait.group": (
        "Wait for async copies",
        "wait until at most N groups of cp.async copies are in flight",
    ),
    "nvvm.cp.async": ("Async copy", "copy global memory into shared memory without registers"),
    "nvvm.ldmatrix": (
        "Load matrix fragments",
        "the warp loads 8×8 tiles from shared memory into the tensor-core "
        "register layout (ldmatrix)",
    ),
    "nvvm.stmatrix": (
        "Store matrix fragments",
        "the warp stores 8×8 tiles from registers to shared memory (stmatrix)",
    ),
    "nvvm.wgmma.fence": (
        "wgmma fence",
        "order earlier register/shared-memory writes before wgmma reads them",
    ),
    "nvvm.wgmma.commit_group": ("wgmma commit", "close the current group of wgmma operations"),
    "nvvm.wgmma.wait_group": ("wgmma wait", "wait until at most N groups of wgmma are running"),
    "nvvm.tcgen05.wait.ld": (
        "Wait for tensor-memory loads",
        "wait until earlier tcgen05.ld are done",
    ),
    "nvvm.tcgen05.wait.st": (
        "Wait for tensor-memory stores",
        "wait until earlier tcgen05.st are done",
    ),
    "nvvm.tcgen05": (
        "Blackwell tensor-core op",
        "a tcgen05 operation (tensor memory or tensor-core MMA)",
    ),
    "nvvm.div.full": (
        "Float divide (fast)",
        "a/b with the full-range approximate division (about 2 ulp), what "
        "Triton uses for '/' on fp32 by default",
    ),
    "nvvm.div": ("Float divide", "a/b with the named rounding"),
    "nvvm.ex2.approx": ("Fast 2^x", "2 to the power x on the special-function unit (approximate)"),
    "nvvm.lg2.approx": ("Fast log2", "log2(x) on the special-function unit (approximate)"),
    "nvvm.sqrt.approx": ("Fast square root", "√x, approximate (ftz: subnormals flushed to zero)"),
    "nvvm.sqrt.rn": ("Square root", "√x correctly rounded to nearest"),
    "nvvm.rsqrt.approx": ("Fast reciprocal square root", "1/√x, approximate"),
    "nvvm.rcp": ("Reciprocal", "1/x with the named rounding"),
    "nvvm.fma.rn.ftz": (
        "Fused multiply-add",
        "a × b + c with one rounding to nearest even, subnormal inputs and "
        "results flushed to zero (fma.rn.ftz)",
    ),
    "nvvm.fma.rn": ("Fused multiply-add", "a × b + c with one rounding to nearest even (fma.rn)"),
    "nvvm.fmax": ("Float maximum", "the larger of two floats"),
    "nvvm.fmin": ("Float minimum", "the smaller of two floats"),
    "nvvm.mbarrier": ("mbarrier operation", "an operation on a shared-memory arrive/wait barrier"),
    # AMD
    "amdgcn.workitem.id": ("Thread index", "this lane's index within the workgroup (threadIdx)"),
    "amdgcn.workgroup.id": (
        "Workgroup index",
        "this workgroup's index in the grid (blockIdx), i.e. tl.program_id",
    ),
    "amdgcn.s.barrier": (
        "Workgroup barrier",
        "every wave of the workgroup waits here for the others",
    ),
    "amdgcn.s.setprio": (
        "Set wave priority",
        "raise or lower this wave's issue priority (s_setprio)",
    ),
    "amdgcn.sched.barrier": (
        "Scheduling barrier",
        "tell the instruction scheduler which kinds of instructions may "
        "move across this point (a mask of 0 lets none); emits no code",
    ),
    "amdgcn.s.waitcnt": ("Wait for counters", "wait for outstanding memory operations"),
    "amdgcn.readfirstlane": (
        "Read first lane",
        "the value of the first active lane, as a scalar for the whole wave",
    ),
    "amdgcn.readlane": (
        "Read a lane",
        "the value of the given lane, as a scalar for the whole wave",
    ),
    "amdgcn.update.dpp": (
        "Data-parallel primitive",
        "read a neighbouring lane's value through a DPP lane pattern "
        "(rows shifts, swaps, broadcasts), used in wave reductions",
    ),
    "amdgcn.ds.bpermute": (
        "Lane permute",
        "read another lane's value by index through the LDS crossbar",
    ),
    "amdgcn.ds.swizzle": ("Lane swizzle", "exchange values between lanes in a fixed pattern"),
    "amdgcn.mfma": (
        "Matrix fused multiply-add (MFMA)",
        "the wave computes D = A × B + C on the matrix cores; the "
        "name gives output type, M×N×K and input type",
    ),
    "amdgcn.make.buffer.rsrc": (
        "Buffer resource",
        "build the 128-bit buffer descriptor (base, size, flags) that "
        "buffer loads and stores use; out-of-range accesses are clamped by hardware",
    ),
    "amdgcn.raw.ptr.buffer.load": (
        "Buffer load",
        "load through a buffer descriptor at a byte offset; offsets outside the buffer read 0",
    ),
    "amdgcn.raw.ptr.buffer.store": (
        "Buffer store",
        "store through a buffer descriptor at a byte offset; offsets outside "
        "the buffer are dropped",
    ),
    "amdgcn.raw.ptr.buffer.atomic": ("Buffer atomic", "atomic update through a buffer descriptor"),
    "amdgcn.sqrt": ("Square root", "√x on the transcendental unit"),
    "amdgcn.rcp": ("Reciprocal", "1/x, approximate"),
    "amdgcn.rsq": ("Reciprocal square root", "1/√x on the transcendental unit, approximate"),
    "amdgcn.implicitarg.ptr": (
        "Implicit arguments",
        "a pointer to the arguments the runtime passes after the "
        "kernel's own (grid and workgroup sizes, among others)",
    ),
    "amdgcn.exp2": ("2^x", "2 to the power x on the transcendental unit"),
    "amdgcn.fdiv.fast": ("Fast divide", "a/b, approximate"),
    # generic
    "assume": ("Assumption", "tell the optimizer a condition always holds; emits no code"),
    "bitreverse": ("Bit reverse", "x with its bits in reverse order"),
    "canonicalize": (
        "Canonical float",
        "x in its canonical form: a NaN made quiet, a subnormal flushed to zero if the "
        "float mode says so",
    ),
    "copysign": ("Copy sign", "the magnitude of the first value with the sign of the second"),
    "usub.sat": ("Saturating unsigned subtract", "a − b, or 0 where b is larger (no wrap-around)"),
    "nvvm.fabs.ftz": ("Absolute value", "|x| of a float, a subnormal input flushed to zero"),
    "nvvm.fabs": ("Absolute value", "|x| of a float"),
    "nvvm.setmaxnreg.inc": (
        "Raise the register budget",
        "each thread of this warp group may now hold more registers "
        "(setmaxnreg.inc): a warp-specialized kernel's consumer warps take what the producers gave up",
    ),
    "nvvm.setmaxnreg.dec": (
        "Lower the register budget",
        "each thread of this warp group gives registers back "
        "(setmaxnreg.dec), for the other warp groups of the block to take",
    ),
    "amdgcn.wave.barrier": (
        "Wave barrier",
        "a fence for the compiler's scheduler within one wave; no instruction is emitted",
    ),
    "exp2": ("2^x", "2 to the power x"),
    "exp": ("e^x", "e to the power x"),
    "log2": ("log2", "base-2 logarithm"),
    "log": ("ln", "natural logarithm"),
    "sqrt": ("Square root", "√x correctly rounded"),
    "fabs": ("Absolute value", "|x|"),
    "fma": ("Fused multiply-add", "a × b + c with one rounding"),
    "fmuladd": ("Multiply-add", "a × b + c, fused if the target likes"),
    "maxnum": ("Float maximum", "the larger of two floats, ignoring a NaN"),
    "minnum": ("Float minimum", "the smaller of two floats, ignoring a NaN"),
    "maximum": ("Float maximum", "the larger of two floats, NaN if either is NaN"),
    "minimum": ("Float minimum", "the smaller of two floats, NaN if either is NaN"),
    "smax": ("Signed maximum", "the larger of two signed integers"),
    "smin": ("Signed minimum", "the smaller of two signed integers"),
    "umax": ("Unsigned maximum", "the larger of two unsigned integers"),
    "umin": ("Unsigned minimum", "the smaller of two unsigned integers"),
    "abs": ("Integer absolute value", "|x|"),
    "vector.reduce.or": ("OR across a vector", "OR of every element of a vector"),
    "vector.reduce.and": ("AND across a vector", "AND of every element of a vector"),
    "vector.reduce.add": ("Sum across a vector", "sum of every element of a vector"),
    "vector.reduce.fmax": ("Max across a vector", "the largest element of a vector"),
    "vector.reduce.fmin": ("Min across a vector", "the smallest element of a vector"),
    "vector.reduce.fadd": (
        "Float sum across a vector",
        "the start value plus every element of a vector",
    ),
    "vector.reduce.fmul": (
        "Float product across a vector",
        "the start value times every element of a vector",
    ),
    "vector.reduce.mul": ("Product across a vector", "the product of every element of a vector"),
    "vector.reduce.xor": ("XOR across a vector", "XOR of every element of a vector"),
    "vector.reduce.smax": ("Signed max across a vector", "the largest element of a vector"),
    "vector.reduce.smin": ("Signed min across a vector", "the smallest element of a vector"),
    "vector.reduce.umax": ("Unsigned max across a vector", "the largest element of a vector"),
    "vector.reduce.umin": ("Unsigned min across a vector", "the smallest element of a vector"),
    "fshl": ("Funnel shift left", "shift two values as one double-width value"),
    "fshr": ("Funnel shift right", "shift two values as one double-width value"),
    "ctpop": ("Population count", "the number of 1 bits"),
    "ctlz": ("Count leading zeros", "the number of leading 0 bits"),
    "memcpy": ("Memory copy", "copy a block of bytes"),
    "lifetime": ("Lifetime marker", "where a stack object is live; no code"),
    "dbg": ("Debug info", "debug information; no code"),
}

# Top-level lines of a module.
TOPLEVEL: dict[str, tuple[str, str]] = {
    "define": (
        "Function definition",
        "the kernel's body starts here; its parameters are the launch arguments",
    ),
    "declare": ("Declaration", "a function defined elsewhere (an intrinsic or a library function)"),
    "attributes": (
        "Attribute group",
        "properties shared by functions (e.g. nvvm.reqntid: the block size the kernel needs)",
    ),
    "target": (
        "Target description",
        "the data layout (pointer sizes per address space) or the target triple",
    ),
    "source_filename": ("Source name", "the name of the module"),
    "global": (
        "Global variable",
        "a module-level variable; Triton's global_smem is the block's shared memory",
    ),
    "label": (
        "Basic block",
        "a block of straight-line code; control enters at the top from the blocks listed as preds",
    ),
    "metadata": ("Metadata", "debug information (source lines, files) or optimizer hints; no code"),
}
