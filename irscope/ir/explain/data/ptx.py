"""PTX opcodes and directives (facts from NVIDIA's PTX ISA manual, in irscope's own words).

OPS maps a dotted opcode prefix to (title, template). The longest prefix of an instruction's opcode that
is a key wins; what follows it must be modifiers (TYPES, COMPARISONS, MODIFIERS or a PATTERNS match, in
`ptx_modifiers`). Template fields: {d} {a} {b} {c} {e} are the operands in order (d is usually the destination),
{type} the data type in words, {cmp} the comparison, {ops} every operand.
"""

OPS: dict[str, tuple[str, str]] = {
    # integer and float arithmetic
    "add": ("Add", "{d} = {a} + {b}, computed as {type}"),
    "sub": ("Subtract", "{d} = {a} - {b}, computed as {type}"),
    "mul": ("Multiply", "{d} = {a} × {b}, computed as {type}"),
    "mad": ("Multiply-add", "{d} = {a} × {b} + {c}, computed as {type}"),
    "fma": (
        "Fused multiply-add",
        "{d} = {a} × {b} + {c} with a single rounding at the end, as {type}",
    ),
    "div": ("Divide", "{d} = {a} / {b}, as {type}"),
    "rem": ("Remainder", "{d} = {a} mod {b}, as {type}"),
    "neg": ("Negate", "{d} = -{a}, as {type}"),
    "abs": ("Absolute value", "{d} = |{a}|, as {type}"),
    "min": ("Minimum", "{d} = the smaller of {a} and {b}, as {type}"),
    "max": ("Maximum", "{d} = the larger of {a} and {b}, as {type}"),
    "rcp": ("Reciprocal", "{d} = 1 / {a}, as {type}"),
    "sqrt": ("Square root", "{d} = √{a}, as {type}"),
    "rsqrt": ("Reciprocal square root", "{d} = 1 / √{a}, as {type}"),
    "ex2": (
        "Base-2 exponential",
        "{d} = 2 to the power {a}, as {type} (exp(x) is computed as 2^(x·log2 e))",
    ),
    "lg2": ("Base-2 logarithm", "{d} = log2({a}), as {type}"),
    "sin": ("Sine", "{d} = sin({a}), as {type}"),
    "cos": ("Cosine", "{d} = cos({a}), as {type}"),
    "tanh": ("Hyperbolic tangent", "{d} = tanh({a}), as {type}"),
    "copysign": ("Copy sign", "{d} = the magnitude of {b} with the sign of {a}"),
    # bits and logic
    "and": ("Bitwise AND", "{d} = {a} AND {b}, bit by bit ({type})"),
    "or": ("Bitwise OR", "{d} = {a} OR {b}, bit by bit ({type})"),
    "xor": ("Bitwise XOR", "{d} = {a} XOR {b}, bit by bit ({type})"),
    "not": ("Bitwise NOT", "{d} = NOT {a}, every bit flipped ({type})"),
    "shl": ("Shift left", "{d} = {a} shifted left by {b} bits ({type})"),
    "shr": (
        "Shift right",
        "{d} = {a} shifted right by {b} bits ({type}; signed types copy the sign bit in)",
    ),
    "bfe": (
        "Bit-field extract",
        "{d} = the {c} bits of {a} starting at bit {b}, moved down to bit 0 ({type})",
    ),
    "bfi": (
        "Bit-field insert",
        "{d} = {b} with {e} bits starting at bit {c} replaced by the low bits of {a}",
    ),
    "prmt": ("Byte permute", "{d} = four bytes picked from {a} and {b} as selector {c} says"),
    "popc": ("Population count", "{d} = the number of 1 bits in {a}"),
    "clz": ("Count leading zeros", "{d} = the number of leading 0 bits in {a}"),
    "brev": ("Bit reverse", "{d} = {a} with its bits in reverse order"),
    "lop3": (
        "Three-input logic",
        "{d} = any bitwise function of {a}, {b} and {c}, chosen by the truth table {e}",
    ),
    # comparison and selection
    "setp": (
        "Compare and set a predicate",
        "{d} = ({a} {cmp} {b}), comparing as {type}; {d} is a one-bit predicate register",
    ),
    "set": (
        "Compare",
        "{d} = ({a} {cmp} {b}) as a number (all ones or 1.0 when true), comparing as {type}",
    ),
    "selp": ("Select by predicate", "{d} = {a} if predicate {c} is true, else {b}"),
    "slct": ("Select by sign", "{d} = {a} if {c} ≥ 0, else {b}"),
    # moves and conversions
    "mov": ("Move", "copy {a} into {d} ({type})"),
    "cvt": ("Convert", "{d} = {a} converted from {from_type} to {to_type}"),
    "cvta": (
        "Convert address",
        "{d} = the generic address of {a}, which is in the named state space",
    ),
    # memory
    "ld": ("Load", "load {a} into {d}"),
    "ldu": ("Load uniform", "load the same read-only value for every thread from {a} into {d}"),
    "st": ("Store", "store {b} to {a}"),
    "atom": (
        "Atomic read-modify-write",
        "atomically update the value at {a} with {b} and return the old value in {d}",
    ),
    "red": ("Atomic reduction", "atomically combine {b} into the value at {a}, returning nothing"),
    "cp.async.commit_group": (
        "Close a group of async copies",
        "bundle every cp.async this thread issued since the last commit into one group, so a later "
        "cp.async.wait_group can wait for it (software pipelining of loads into shared memory)",
    ),
    "cp.async.wait_group": (
        "Wait for async copies",
        "wait until at most {d} committed groups of this thread's cp.async copies are still in flight; "
        "older groups have landed in shared memory",
    ),
    "cp.async.wait_all": (
        "Wait for all async copies",
        "wait until every cp.async of this thread has landed in shared memory",
    ),
    "cp.async.bulk.commit_group": (
        "Close a group of bulk copies",
        "bundle the bulk (TMA) copies this thread issued since the last commit into one group",
    ),
    "cp.async.bulk.wait_group": (
        "Wait for bulk copies",
        "wait until at most {d} committed groups of this thread's bulk (TMA) copies are unfinished",
    ),
    "cp.async.bulk.tensor": (
        "Tensor copy through TMA",
        "the tensor memory accelerator copies a tile of a tensor, described by a tensor map, between "
        "global and shared memory without the threads moving the data",
    ),
    "cp.async.bulk": (
        "Bulk async copy (TMA)",
        "copy a block of memory asynchronously with the tensor memory accelerator",
    ),
    "tensormap.replace": (
        "Edit a tensor map",
        "rewrite one field of a TMA tensor map held in shared memory (its base "
        "address, sizes, strides, box, element type or swizzle) before it is used",
    ),
    "tensormap.cp_fenceproxy": (
        "Publish a tensor map",
        "copy a tensor map from shared to global memory and make it "
        "visible to the TMA unit, which reads it through another memory proxy",
    ),
    "createpolicy.fractional": (
        "Make an L2 cache policy",
        "build a 64-bit cache-policy value that applies the named L2 "
        "eviction priority to a fraction of the accesses that carry it",
    ),
    "setmaxnreg": (
        "Change this warp group's register budget",
        "raise (inc) or lower (dec) the registers each thread of "
        "the warp group may hold, so that producer and consumer warps of a warp-specialized kernel split the "
        "register file unevenly",
    ),
    "cp.async": (
        "Asynchronous copy into shared memory",
        "copy {b} bytes from global memory at {a} to shared memory at {d} without passing through registers, "
        "and go on without waiting; only {c} bytes are read from global memory and the rest are filled with "
        "zeros, which is how a masked-off element becomes 0",
    ),
    "ldmatrix": (
        "Load matrix fragments from shared memory",
        "the warp reads 8×8 tiles of 16-bit elements from shared memory (row addresses come from lanes) and "
        "spreads them over its lanes in the layout the tensor-core mma instructions expect; results in {d}",
    ),
    "stmatrix": (
        "Store matrix fragments to shared memory",
        "the warp writes 8×8 tiles of 16-bit elements held in its lanes' registers ({a}) to shared memory at {d}",
    ),
    "prefetch": ("Prefetch", "bring the line holding {a} into the named cache level"),
    "fence.proxy.async": (
        "Fence between memory proxies",
        "make this thread's ordinary shared-memory writes visible to the async proxy (TMA, wgmma, tcgen05) "
        "before later async operations read them",
    ),
    "fence": (
        "Memory fence",
        "order this thread's memory accesses before and after this point at the named scope",
    ),
    "membar": ("Memory barrier", "order this thread's memory accesses at the named scope"),
    "isspacep": ("Test state space", "{d} = whether address {a} lies in the named state space"),
    # control flow
    "bra": ("Branch", "jump to {d}"),
    "call": ("Call", "call a function"),
    "ret": ("Return", "return from the kernel or function"),
    "exit": ("Exit", "this thread stops"),
    "trap": ("Trap", "abort the kernel with an error"),
    # warp and block cooperation
    "bar.sync": (
        "Block barrier",
        "wait until all threads of the block (CTA) reach barrier {d}; shared-memory writes made "
        "before it are visible after it",
    ),
    "bar.arrive": ("Arrive at a block barrier", "signal arrival at barrier {d} without waiting"),
    "barrier.sync": (
        "Block barrier",
        "wait until all threads of the block (CTA) reach barrier {d}",
    ),
    "barrier.cta.sync": (
        "Block barrier",
        "wait until all threads of the block (CTA) reach barrier {d}",
    ),
    "bar.warp.sync": ("Warp barrier", "wait until the lanes in mask {d} reach this point"),
    "shfl.sync.bfly": (
        "Warp shuffle, butterfly",
        "{d} = the value of {a} held by lane (this lane XOR {b}): lanes swap values in pairs without touching "
        "memory (a step of a tree reduction); lanes in mask {e} take part",
    ),
    "shfl.sync.idx": (
        "Warp shuffle, indexed",
        "{d} = the value of {a} held by lane {b} (a broadcast when {b} is a constant); "
        "lanes in mask {e} take part",
    ),
    "shfl.sync.up": (
        "Warp shuffle, up",
        "{d} = the value of {a} held by the lane {b} below this one; lanes in mask {e} take part",
    ),
    "shfl.sync.down": (
        "Warp shuffle, down",
        "{d} = the value of {a} held by the lane {b} above this one; lanes in mask {e} take part",
    ),
    "vote.sync": ("Warp vote", "combine predicate {a} over the lanes in mask {b}"),
    "redux.sync": (
        "Warp reduction",
        "{d} = {a} reduced over all lanes in mask {b} in one instruction",
    ),
    "elect.sync": (
        "Elect one lane",
        "pick a single active lane of mask {a}: it gets true in the predicate after '|' in {d}, "
        "and every lane gets the chosen lane's number; used to let one thread issue async work",
    ),
    "activemask": ("Active lanes", "{d} = the mask of lanes executing this instruction"),
    "match.sync": ("Match across lanes", "find the lanes whose {a} equals this lane's"),
    # mbarriers (arrive/wait barriers in shared memory)
    "mbarrier.init": (
        "Initialize an mbarrier",
        "set up the barrier object in shared memory at {d} to expect {a} arrivals per phase",
    ),
    "mbarrier.inval": (
        "Invalidate an mbarrier",
        "retire the barrier object at {d} so its shared memory can be reused",
    ),
    "mbarrier.arrive": (
        "Arrive at an mbarrier",
        "count this thread's arrival at the barrier at {a}",
    ),
    "mbarrier.expect_tx": (
        "Expect bytes at an mbarrier",
        "tell the barrier at {d} to also wait for {a} bytes of async copies",
    ),
    "mbarrier.try_wait": (
        "Test an mbarrier",
        "{d} = whether the barrier at {a} has completed the phase with parity {b} "
        "(the thread may be suspended a while first); the code loops until it is true",
    ),
    "mbarrier.test_wait": (
        "Test an mbarrier",
        "{d} = whether the barrier at {a} has completed the phase, without waiting",
    ),
    # tensor cores
    "mma.sync": (
        "Tensor-core matrix multiply-accumulate (warp)",
        "the whole warp computes {d} = {a} × {b} + {c} on a small matrix tile, each lane holding a fragment",
    ),
    "wgmma.mma_async": (
        "Tensor-core matrix multiply-accumulate (warp group, async)",
        "four warps (a warp group) start D = A × B + D on the tensor cores; A and B are read from shared "
        "memory through descriptors (or A from registers), the accumulator {d} stays in registers; it runs "
        "asynchronously until wgmma.wait_group",
    ),
    "wgmma.fence": (
        "Fence before wgmma",
        "order this warp group's earlier register and shared-memory writes before the "
        "wgmma.mma_async that reads them",
    ),
    "wgmma.commit_group": (
        "Close a group of wgmma",
        "bundle the wgmma.mma_async issued so far into one group",
    ),
    "wgmma.wait_group": (
        "Wait for wgmma",
        "wait until at most {d} groups of wgmma are still running; their accumulators are "
        "then safe to read",
    ),
    "tcgen05.mma": (
        "Tensor-core matrix multiply-accumulate (5th generation)",
        "one thread issues D = A × B (+ D) on the tensor cores; the accumulator D lives in tensor memory at {d}, "
        "A and B come from shared-memory descriptors {a} and {b} (or A from tensor memory); it runs asynchronously",
    ),
    "tcgen05.commit": (
        "Signal when tensor-core work is done",
        "make the mbarrier at {d} count an arrival once this thread's "
        "earlier tcgen05 operations have finished",
    ),
    "tcgen05.alloc": (
        "Allocate tensor memory",
        "reserve {a} columns of tensor memory (TMEM) and write their address to shared memory at {d}",
    ),
    "tcgen05.dealloc": (
        "Free tensor memory",
        "release {a} columns of tensor memory starting at {d}",
    ),
    "tcgen05.relinquish_alloc_permit": (
        "Give up tensor-memory allocation",
        "promise this block will allocate no more tensor memory, so other blocks on the SM may",
    ),
    "tcgen05.ld": (
        "Load from tensor memory",
        "copy accumulator values from tensor memory at {a} into this warp's registers {d}",
    ),
    "tcgen05.st": (
        "Store to tensor memory",
        "copy this warp's registers {last} into tensor memory at {d}",
    ),
    "tcgen05.wait::ld": (
        "Wait for tensor-memory loads",
        "wait until this thread's earlier tcgen05.ld have delivered their registers",
    ),
    "tcgen05.wait::st": (
        "Wait for tensor-memory stores",
        "wait until this thread's earlier tcgen05.st have written tensor memory",
    ),
    "tcgen05.wait": (
        "Wait for tensor-memory copies",
        "wait until this thread's earlier tcgen05.ld or tcgen05.st have completed",
    ),
    "tcgen05.fence": (
        "Tensor-core fence",
        "order tcgen05 operations around a thread synchronization",
    ),
    "tcgen05.cp": ("Copy into tensor memory", "copy a tile from shared memory into tensor memory"),
    "griddepcontrol": (
        "Grid dependency control",
        "let a dependent kernel launch early or wait for the kernel it depends on",
    ),
    "nanosleep": ("Sleep", "suspend this thread for about {d} nanoseconds"),
}

DIRECTIVES: dict[str, tuple[str, str]] = {
    ".version": ("PTX version", "the PTX ISA version this text is written in"),
    ".target": (
        "Target",
        "the GPU architecture the PTX is written for (sm_90a: Hopper with its arch-specific features)",
    ),
    ".address_size": ("Address size", "pointers are this many bits"),
    ".visible": (
        "Visible entry",
        "the kernel is visible outside this module, so the driver can launch it",
    ),
    ".entry": ("Kernel entry point", "a kernel the host can launch"),
    ".func": ("Device function", "a function callable from kernels"),
    ".extern": (
        "External declaration",
        "something defined elsewhere (here: the dynamic shared memory buffer)",
    ),
    ".global": ("Global variable", "a variable in global memory"),
    ".shared": (
        "Shared variable",
        "a variable in shared memory (Triton declares one dynamic buffer, global_smem)",
    ),
    ".param": ("Kernel parameter", "one launch argument, read with ld.param"),
    ".reg": (
        "Register declaration",
        "declares virtual registers; ptxas later maps them onto real ones",
    ),
    ".reqntid": (
        "Required block size",
        "the kernel must be launched with exactly this many threads per block",
    ),
    ".maxntid": (
        "Maximum block size",
        "the kernel is launched with at most this many threads per block",
    ),
    ".maxnreg": ("Register cap", "ptxas may use at most this many registers per thread"),
    ".loc": (
        "Source location",
        "the following instructions come from this file, line and column (debug info)",
    ),
    ".file": ("Source file", "numbers a source file for .loc"),
    ".section": ("Debug section", "DWARF debug information"),
    ".align": ("Alignment", "the next variable is aligned to this many bytes"),
    ".pragma": ("Pragma", "a hint to ptxas"),
    ".b8": ("Data bytes", "raw bytes (debug information)"),
    ".b16": ("Data", "16-bit data (debug information)"),
    ".b32": ("Data", "32-bit data (debug information)"),
    ".b64": ("Data", "64-bit data (debug information)"),
}
