"""TritonGPU IR (TTGIR) ops: ttg (layouts, shared memory, async copies), ttng (NVIDIA Hopper/Blackwell:
barriers, wgmma, TMA, tensor memory), amdg (AMD: buffer ops and friends).

Facts from the TritonGPU / TritonNvidiaGPU / TritonAMDGPU dialect definitions, in irscope's own words.
Layout attributes (#ttg.blocked and the rest) are explained by code in explain/layouts.py.
Same template fields as data/ttir.py.
"""

OPS: dict[str, tuple[str, str]] = {
    "ttg.convert_layout": (
        "Change layout",
        "{results} = {a} redistributed to another layout: the same values, owned by "
        "different threads. Usually a round trip through shared memory with a barrier (costly), "
        "sometimes only warp shuffles or register moves",
    ),
    "ttg.local_alloc": ("Allocate shared memory", "{results} = a buffer in shared memory{init}"),
    "ttg.local_dealloc": ("Free shared memory", "release the shared-memory buffer {a}"),
    "ttg.local_load": (
        "Load from shared memory",
        "{results} = the tile in shared memory {a}, read into registers in the result's layout",
    ),
    "ttg.local_store": (
        "Store to shared memory",
        "write the register tile {a} into shared memory {b}",
    ),
    "ttg.memdesc_index": (
        "Pick a buffer",
        "{results} = slot {b} of the multi-buffered shared-memory allocation {a} "
        "(the pipeliner keeps one slot per stage)",
    ),
    "ttg.memdesc_subview": (
        "Pick a buffer / sub-view",
        "{results} = a view of part of the shared-memory buffer {a} "
        "(Triton 3.6's name: one slot of a multi-buffered allocation, or a sub-tile)",
    ),
    "ttg.memdesc_subslice": ("Sub-view", "{results} = a sub-tile of the shared-memory buffer {a}"),
    "ttg.memdesc_trans": (
        "Transposed view",
        "{results} = the shared-memory buffer {a} seen transposed, no data moved",
    ),
    "ttg.memdesc_reshape": (
        "Reshaped view",
        "{results} = the shared-memory buffer {a} seen with another shape",
    ),
    "ttg.async_copy_global_to_local": (
        "Async copy into shared memory",
        "{results} = a token for copying the values at the pointers {a} into shared memory "
        "{b} without waiting (cp.async on NVIDIA); masked-off elements get the other value",
    ),
    "ttg.async_commit_group": (
        "Close a group of async copies",
        "{results} = a token for every async copy issued since "
        "the last commit, so a later async_wait can wait for them as one group",
    ),
    "ttg.async_wait": (
        "Wait for async copies",
        "wait until at most {num} groups of async copies are still in flight; "
        "the data of older groups is in shared memory",
    ),
    "ttg.barrier": ("Block barrier", "wait for every thread of the block"),
    "ttg.warp_specialize": (
        "Warp specialization",
        "run different regions on different groups of warps",
    ),
    "ttg.warp_yield": (
        "End of the default region",
        "the warps that run the default region of a warp_specialize are "
        "done with it; its values become the op's results",
    ),
    "ttg.warp_return": (
        "End of a partition",
        "the warps of this partition of a warp_specialize are done",
    ),
    "ttng.tensormap_fenceproxy_acquire": (
        "Acquire a tensor map",
        "make a tensor map just written to global memory "
        "visible to this program's TMA copies that follow",
    ),
    "llvm.intr.assume": (
        "Assumption",
        "tell the compiler a condition always holds (for example that an offset is a "
        "multiple of 16), so it may vectorize; emits no code",
    ),
    "ttg.global_scratch_alloc": (
        "Scratch memory",
        "{results} = a per-program scratch buffer in global memory",
    ),
    "ttg.upcast_mxfp": (
        "Upcast block-scaled floats",
        "{results} = low-precision values with shared scales widened",
    ),
    "ttg.fp4_to_fp": ("Widen fp4", "{results} = fp4 values widened to a larger float"),
    "ttg.predicate_stage": (
        "Pipeline stage predicate",
        "{results} = whether this pipelined stage should run",
    ),
    "ttg.mask": ("Masked region", "a region that runs only where the predicate holds"),
    # NVIDIA (Hopper and Blackwell)
    "ttng.init_barrier": (
        "Initialize an mbarrier",
        "set up the barrier in shared memory {a} to expect {count} arrivals",
    ),
    "ttng.inval_barrier": ("Invalidate an mbarrier", "retire the barrier {a}"),
    "ttng.wait_barrier": (
        "Wait on an mbarrier",
        "wait until the barrier {a} completes the phase with parity {b}",
    ),
    "ttng.arrive_barrier": ("Arrive at an mbarrier", "count an arrival at the barrier {a}"),
    "ttng.barrier_expect": (
        "Expect bytes",
        "tell the barrier {a} to also wait for a number of TMA bytes",
    ),
    "ttng.fence_async_shared": (
        "Fence for the async proxy",
        "make earlier shared-memory writes visible to async units "
        "(TMA, wgmma, tcgen05) before they read them",
    ),
    "ttng.warp_group_dot": (
        "Hopper tensor-core matrix multiply (wgmma)",
        "{results} = {a} × {b} + {c} with wgmma: a warp group of 4 warps reads A and B from shared memory "
        "and accumulates in registers, asynchronously",
    ),
    "ttng.warp_group_dot_wait": (
        "Wait for wgmma",
        "{results} = the accumulators of earlier wgmma, once at most {pendings} "
        "groups are still running",
    ),
    "ttng.tc_gen5_mma": (
        "Blackwell tensor-core matrix multiply (tcgen05)",
        "D += {a} × {b} with tcgen05.mma: A and B come from shared memory, the accumulator {c} lives in "
        "tensor memory; one thread issues it for the block; it signals a barrier when done",
    ),
    "ttng.tc_gen5_mma_scaled": (
        "Blackwell scaled matrix multiply",
        "a tcgen05 matrix product of block-scaled inputs",
    ),
    "ttng.tc_gen5_commit": (
        "Commit tcgen05 work",
        "make barrier {a} fire when earlier tcgen05 operations finish",
    ),
    "ttng.tmem_alloc": (
        "Allocate tensor memory",
        "{results} = a buffer in Blackwell tensor memory (TMEM), the on-chip store "
        "for tcgen05 accumulators{init}",
    ),
    "ttng.tmem_load": (
        "Load from tensor memory",
        "{results} = the accumulator tile in tensor memory {a}, copied into registers",
    ),
    "ttng.tmem_store": (
        "Store to tensor memory",
        "write the register tile {a} into tensor memory {b}",
    ),
    "ttng.tmem_copy": (
        "Copy into tensor memory",
        "copy a tile from shared memory into tensor memory",
    ),
    "ttng.async_tma_copy_global_to_local": (
        "TMA load",
        "copy a tile from global to shared memory with the tensor memory "
        "accelerator; a barrier signals completion",
    ),
    "ttng.async_tma_copy_local_to_global": (
        "TMA store",
        "copy a tile from shared to global memory with the tensor memory accelerator",
    ),
    "ttng.async_tma_store_wait": (
        "Wait for TMA stores",
        "wait until earlier TMA stores have read their shared memory",
    ),
    "ttng.tensormap_create": ("Create a TMA descriptor", "build a tensor map in global memory"),
    "ttng.reinterpret_tensor_descriptor": (
        "Descriptor view",
        "{results} = a pointer seen as a TMA descriptor",
    ),
    "ttng.cluster_arrive": ("Cluster arrive", "signal arrival at the cluster barrier"),
    "ttng.cluster_wait": ("Cluster wait", "wait at the cluster barrier"),
    # AMD
    "amdg.buffer_load": (
        "Buffer load",
        "{results} = values read with AMD buffer instructions: base pointer {a} plus the "
        "32-bit offsets {b}{masked}; out-of-range offsets read 0 in hardware, so masking is nearly free",
    ),
    "amdg.buffer_store": (
        "Buffer store",
        "write {a} with AMD buffer instructions at base {b} plus the 32-bit offsets {c}"
        "{masked}; out-of-range offsets are dropped by hardware",
    ),
    "amdg.buffer_atomic_rmw": (
        "Buffer atomic",
        "{results} = an atomic update through AMD buffer instructions",
    ),
    "amdg.buffer_load_to_local": (
        "Buffer load into shared memory",
        "copy values straight from global to LDS",
    ),
    "amdg.in_thread_transpose": (
        "Transpose within each thread",
        "{results} = {a} with the elements each thread holds "
        "reordered inside the thread (nothing crosses threads), so they can be written to shared "
        "memory with wide stores in the transposed order",
    ),
    "amdg.extract_slice": ("Extract a slice", "{results} = a sub-tile of {a}"),
    "amdg.instruction_sched_hint": ("Scheduling hint", "a hint for AMD's instruction scheduler"),
    "rocdl.s.setprio": (
        "Set wave priority",
        "raise or lower this wave's issue priority (becomes s_setprio), so one "
        "wave's matrix instructions go ahead of the others'",
    ),
    "rocdl.sched.barrier": (
        "Scheduling barrier",
        "stop the instruction scheduler moving instructions across this "
        "point (the mask says which kinds may cross; 0: none); emits no code",
    ),
    "amdg.cond_barrier": ("Conditional barrier", "a barrier only some warps wait on"),
    "amdg.upcast_mxfp": (
        "Upcast block-scaled floats",
        "{results} = low-precision values with shared scales widened",
    ),
}

# Triton 3.6 spells the AMD dialect `amdgpu.`; later releases `amdg.`.
OPS.update(
    {
        "amdgpu." + name[len("amdg.") :]: entry
        for name, entry in list(OPS.items())
        if name.startswith("amdg.")
    }
)
