"""SASS opcodes and modifiers (Hopper sm_90 and Blackwell sm_100), and the control field.

Opcode meanings follow the instruction-set tables of NVIDIA's CUDA Binary Utilities guide; NVIDIA does not
document the modifiers or the control field, so those notes come from what the names say and from
published reverse-engineering of the encoding (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture
via Microbenchmarking", 2018, and later work), and are marked as such in the text. Written in irscope's
own words. OPS: opcode -> (title, template); fields {d} {a} {b} {c} {e} are operands in order
(destination first), {ops} all of them.
"""

OPS: dict[str, tuple[str, str]] = {
    # float
    "FADD": ("Float add", "{d} = {a} + {b} (fp32)"),
    "FADD2": (
        "Paired float add",
        "two fp32 additions in one instruction: the register pair {d} = {a} + {b}",
    ),
    "FMUL": ("Float multiply", "{d} = {a} × {b} (fp32)"),
    "FMUL2": (
        "Paired float multiply",
        "two fp32 multiplications in one instruction: the pair {d} = {a} × {b}",
    ),
    "FFMA": ("Fused multiply-add", "{d} = {a} × {b} + {c} (fp32, one rounding)"),
    "FFMA2": ("Paired fused multiply-add", "two fp32 FMAs in one instruction on register pairs"),
    "FMNMX": ("Float min/max", "{d} = the {minmax} of {a} and {b} (fp32)"),
    "FMNMX3": ("Three-way float min/max", "{d} = the {minmax} of {a}, {b} and {c} (fp32)"),
    "FSETP": ("Float compare to predicate", "{d} = ({b} {cmp} {c}){combine}"),
    "FSEL": ("Float select", "{d} = {a} if predicate {c} is true, else {b}"),
    "FCHK": (
        "Division range check",
        "{d} = whether a fast division of {a} by {b} needs the slow path",
    ),
    "MUFU": (
        "Special function unit",
        "{d} = a transcendental function of {a}, approximately, on the SFU (the modifier names it)",
    ),
    "HADD2": ("Half add", "{d} = {a} + {b} on pairs of fp16 values"),
    "HFMA2": (
        "Half fused multiply-add",
        "{d} = {a} × {b} + {c} on pairs of fp16 values (with RZ operands and an "
        "immediate: a way to put a constant in a register)",
    ),
    "HMUL2": ("Half multiply", "{d} = {a} × {b} on pairs of fp16 values"),
    "F2F": ("Float to float", "{d} = {a} converted between float formats"),
    "F2FP": (
        "Float pack",
        "{d} = {a} and {b} rounded to a narrower float and packed into one register",
    ),
    "F2I": ("Float to integer", "{d} = {a} converted to an integer"),
    "I2F": ("Integer to float", "{d} = {a} converted to a float"),
    "I2FP": ("Integer to float", "{d} = {a} converted to a float"),
    "FRND": ("Round", "{d} = {a} rounded to an integral float"),
    # integer
    "IADD3": ("Three-input integer add", "{d} = {a} + {b} + {c}"),
    "IADD3.X": (
        "Three-input add with carry",
        "{d} = {a} + {b} + {c} + the carry (the high half of a 64-bit add)",
    ),
    "VIADD": ("Integer add", "{d} = {a} + {b}"),
    "IMAD": (
        "Integer multiply-add",
        "{d} = {a} × {b} + {c} (also used for moves and shifts: .MOV, .SHL, .IADD)",
    ),
    "IMUL": ("Integer multiply", "{d} = {a} × {b}"),
    "IABS": ("Integer absolute value", "{d} = |{a}|"),
    "IMNMX": ("Integer min/max", "{d} = the {minmax} of {a} and {b}"),
    "VIMNMX": ("Integer min/max", "{d} = the {minmax} of {a} and {b}"),
    "ISETP": ("Integer compare to predicate", "{d} = ({b} {cmp} {c}){combine}"),
    "LEA": ("Shift and add (address)", "{d} = ({a} << {shift}) + {b}: an address computation"),
    "LOP3": (
        "Three-input logic",
        "{d} = any bitwise function of {a}, {b} and {c}; the 8-bit immediate {e} is its truth table",
    ),
    "SHF": ("Funnel shift", "{d} = bits of the 64-bit pair ({c}:{a}) shifted by {b}"),
    "SHL": ("Shift left", "{d} = {a} << {b}"),
    "SHR": ("Shift right", "{d} = {a} >> {b}"),
    "SEL": ("Select", "{d} = {a} if predicate {c} is true, else {b}"),
    "SGXT": (
        "Sign extend",
        "{d} = the low {b} bits of {a}, sign-extended (or zero-extended with .U32)",
    ),
    "BFE": ("Bit-field extract", "{d} = a field of bits from {a}"),
    "BFI": ("Bit-field insert", "{d} = {c} with a field replaced by bits of {a}"),
    "FLO": ("Find leading one", "{d} = the position of the highest 1 bit of {a}"),
    "POPC": ("Population count", "{d} = the number of 1 bits in {a}"),
    "PRMT": ("Byte permute", "{d} = bytes picked from {a} and {c} by the selector {b}"),
    "MOV": ("Move", "{d} = {a}"),
    "CS2R": (
        "Read special register pair",
        "{d} and the next register = {a} (with SRZ: set two registers to zero in one go)",
    ),
    "S2R": ("Read special register", "{d} = {a}, read from a special register"),
    "S2UR": (
        "Read special register to uniform",
        "uniform register {d} = {a}, read once for the whole warp",
    ),
    "P2R": ("Predicates to register", "{d} = the predicate registers packed as bits (saves them)"),
    "R2P": ("Register to predicates", "set the predicate registers from the bits of {a}"),
    "PLOP3": (
        "Predicate logic",
        "{d} = any function of three predicates (with constant inputs: set a predicate to true or false)",
    ),
    "R2UR": (
        "Register to uniform",
        "uniform register {d} = {a} (the value is the same on every lane)",
    ),
    "UFLO": ("Uniform find leading one", "{d} = the position of the highest 1 bit of {a}"),
    "VOTE": ("Warp vote", "{d} = a vote over the warp's predicates"),
    "VOTEU": ("Warp vote to uniform", "{d} = whether any (or all) lanes have predicate {a} set"),
    "NOP": (
        "No operation",
        "does nothing; pads the instruction stream (alignment, or after the last instruction)",
    ),
    # memory
    "LDG": ("Load from global memory", ""),
    "STG": ("Store to global memory", ""),
    "LDS": ("Load from shared memory", ""),
    "STS": ("Store to shared memory", ""),
    "LDL": ("Load from local memory", ""),
    "STL": ("Store to local memory", ""),
    "LD": ("Load (generic address)", ""),
    "ST": ("Store (generic address)", ""),
    "LDC": (
        "Load from constant memory",
        "{d} = {a}: c[bank][offset] in constant memory (kernel arguments live in bank 0)",
    ),
    "LDCU": (
        "Load constant to uniform register",
        "uniform register {d} = {a} from constant memory, once for the warp",
    ),
    "ULDC": (
        "Load constant to uniform register",
        "uniform register {d} = {a} from constant memory (kernel arguments and launch constants)",
    ),
    "LDGSTS": (
        "Async copy global → shared",
        "copy {bytes} per thread from global memory at {a} straight to shared memory "
        "at {d}, without registers and without waiting (cp.async); {b} false: fill with zeros instead",
    ),
    "LDGDEPBAR": (
        "Close a group of async copies",
        "mark the LDGSTS copies issued so far as one group (cp.async.commit_group)",
    ),
    "DEPBAR": (
        "Wait on a dependency barrier",
        "wait until at most {a} operations counted on scoreboard {d} are still "
        "pending (cp.async.wait_group)",
    ),
    "LDSM": (
        "Load matrix from shared memory",
        "{d} and following registers = 8×8 matrix tiles read from shared memory at "
        "{a} by the whole warp (ldmatrix)",
    ),
    "STSM": (
        "Store matrix to shared memory",
        "write 8×8 matrix tiles from {a} to shared memory at {d} (stmatrix)",
    ),
    "ATOMS": (
        "Atomic on shared memory",
        "atomically update shared memory at {a} with {b}; the old value goes to {d}",
    ),
    "ATOMG": (
        "Atomic on global memory",
        "atomically update global memory at {a} with {b}; the old value goes to {d}",
    ),
    "ATOM": (
        "Atomic (generic address)",
        "atomically update memory at {a} with {b}; the old value goes to {d}",
    ),
    "RED": (
        "Atomic reduction on global memory",
        "atomically combine {b} into global memory at {a}",
    ),
    "MEMBAR": ("Memory barrier", "order this thread's memory accesses at the named scope"),
    "FENCE": (
        "Fence",
        "order memory accesses between proxies (generic vs async: TMA, tensor cores)",
    ),
    "CCTL": ("Cache control", "invalidate or write back cache lines"),
    "SYNCS": (
        "Barrier-object operation",
        "an operation on an mbarrier in shared memory (arrive, wait, exchange, invalidate)",
    ),
    # warp
    "SHFL": (
        "Warp shuffle",
        "{a} = the value of {b} held by another lane ({c} and {e} pick it); no memory",
    ),
    "SHFL.BFLY": (
        "Warp shuffle, butterfly",
        "{a} = the value of {b} held by lane (this lane XOR {c}): a step of a "
        "tree reduction across the warp, no memory",
    ),
    "SHFL.IDX": ("Warp shuffle, indexed", "{a} = the value of {b} held by lane {c}"),
    "SHFL.UP": ("Warp shuffle, up", "{a} = the value of {b} held by the lane {c} below"),
    "SHFL.DOWN": ("Warp shuffle, down", "{a} = the value of {b} held by the lane {c} above"),
    "IMAD.MOV": (
        "Move (on the multiply-add unit)",
        "{d} = {c} (an IMAD of RZ × RZ + {c}, used as a move)",
    ),
    "IMAD.SHL": (
        "Shift left (on the multiply-add unit)",
        "{d} = {a} × {b}, a left shift done as a multiply",
    ),
    "IMAD.IADD": ("Add (on the multiply-add unit)", "{d} = {a} × {b} + {c}, used as an add"),
    "IMAD.WIDE": (
        "Wide multiply-add",
        "{d} and the next register = {a} × {b} + {c} as a 64-bit value (an address: index × element size + base)",
    ),
    "IMAD.HI": ("Multiply-add, high half", "{d} = the high 32 bits of {a} × {b}, plus {c}"),
    "IMAD.X": (
        "Multiply-add with carry",
        "{d} = {a} × {b} + {c} + the carry (the high half of a 64-bit add)",
    ),
    "MUFU.EX2": ("Fast 2^x", "{d} ≈ 2^{a}, on the special-function unit"),
    "MUFU.RCP": ("Fast reciprocal", "{d} ≈ 1 / {a}, on the special-function unit"),
    "MUFU.SQRT": ("Fast square root", "{d} ≈ √{a}, on the special-function unit"),
    "MUFU.RSQ": ("Fast reciprocal square root", "{d} ≈ 1 / √{a}, on the special-function unit"),
    "MUFU.LG2": ("Fast log2", "{d} ≈ log2({a}), on the special-function unit"),
    "MUFU.SIN": ("Fast sine", "{d} ≈ sin({a}), on the special-function unit"),
    "MUFU.COS": ("Fast cosine", "{d} ≈ cos({a}), on the special-function unit"),
    "MUFU.TANH": ("Fast tanh", "{d} ≈ tanh({a}), on the special-function unit"),
    "HADD2.F32": (
        "Half to float",
        "{d} = the fp16 value {b} widened to fp32 (an add of -0 used as a conversion)",
    ),
    "SYNCS.PHASECHK": (
        "Test an mbarrier phase",
        "{d} = whether the mbarrier at {a} has finished the phase with parity {b} "
        "(waits a while first: mbarrier.try_wait)",
    ),
    "SYNCS.EXCH": (
        "Initialize an mbarrier",
        "write the initial state {b} into the mbarrier at {a} (mbarrier.init)",
    ),
    "SYNCS.CCTL": ("Invalidate an mbarrier", "retire the mbarrier at {d} (mbarrier.inval)"),
    "REDUX": ("Warp reduction to uniform", "{d} = {a} reduced over the warp's lanes"),
    "CREDUX": (
        "Warp reduction to uniform",
        "{d} = {a} reduced over the warp's lanes (the modifier names the operation)",
    ),
    "ELECT": ("Elect a lane", "{d} = true on exactly one active lane of the warp (the leader)"),
    "WARPSYNC": ("Warp sync", "the lanes of the warp reconverge here"),
    "BAR": (
        "Block barrier",
        "wait until every warp of the block gets here (bar.sync / __syncthreads)",
    ),
    "WARPGROUP": ("Warp-group sync", "synchronize the 4 warps of a warp group around wgmma"),
    "NANOSLEEP": ("Sleep", "suspend this warp for about {d} nanoseconds (a polite spin-wait)"),
    # tensor cores
    "HMMA": (
        "Tensor-core MMA (fp16/bf16)",
        "{d} = {a} × {b} + {c} on the tensor cores, per warp (mma.sync)",
    ),
    "HGMMA": (
        "Warp-group tensor-core MMA (Hopper wgmma)",
        "{d} (accumulator registers) += A × B, with A/B read from "
        "shared memory through descriptors ({a})",
    ),
    "UTCHMMA": (
        "Blackwell tensor-core MMA (tcgen05)",
        "tensor memory {c} += A × B: A and B come from shared-memory "
        "descriptors {d} and {a}, the instruction descriptor is {e}; issued by one thread",
    ),
    "UTCBAR": (
        "Blackwell tensor-core commit",
        "make the mbarrier at {d} fire when the tcgen05 work issued so far is done",
    ),
    "UTCATOMSWS": (
        "Tensor-memory allocation bookkeeping",
        "an atomic on the tensor-memory allocator's state (tcgen05.alloc / dealloc)",
    ),
    "LDTM": (
        "Load from tensor memory",
        "{d} and following registers = a slice of the accumulator in tensor memory {a} (tcgen05.ld)",
    ),
    "STTM": ("Store to tensor memory", "write {a} into tensor memory {d} (tcgen05.st)"),
    "UVIRTCOUNT": ("Tensor-memory pool accounting", "give tensor memory back to the SM's pool"),
    # uniform datapath (one value per warp)
    "UMOV": ("Uniform move", "uniform register {d} = {a} (one value for the whole warp)"),
    "UIADD3": ("Uniform three-input add", "{d} = {a} + {b} + {c} on the uniform datapath"),
    "UIMAD": ("Uniform multiply-add", "{d} = {a} × {b} + {c} on the uniform datapath"),
    "ULEA": ("Uniform shift and add", "{d} = ({a} << {shift}) + {b} on the uniform datapath"),
    "ULOP3": (
        "Uniform three-input logic",
        "{d} = a bitwise function of {a}, {b}, {c} on the uniform datapath",
    ),
    "UPLOP3": ("Uniform predicate logic", "{d} = a function of three uniform predicates"),
    "BREAK": (
        "Leave a reconvergence region",
        "lanes that leave a loop or branch early drop out of the named "
        "reconvergence barrier, so the lanes still inside do not wait for them",
    ),
    "QGMMA": (
        "Warp-group tensor-core MMA, fp8 (Hopper wgmma)",
        "{d} (accumulator registers) += A × B with 8-bit float "
        "inputs, A and B read from shared memory or registers, for the whole warp group of 128 threads",
    ),
    "USETMAXREG": (
        "Change the register budget",
        "raise or lower the registers each thread of this warp group may hold "
        "(setmaxnreg), taking them from or giving them to the block's pool",
    ),
    "UTMALDG": (
        "TMA load",
        "the tensor memory accelerator copies a tile of a tensor from global into shared memory, "
        "described by a tensor map; the threads only issue it",
    ),
    "UTMASTG": (
        "TMA store",
        "the tensor memory accelerator copies a tile from shared into global memory",
    ),
    "UTMACCTL": (
        "TMA cache control",
        "act on the TMA unit's cached copy of a tensor map (IV: drop it, so that an "
        "edited map is read again)",
    ),
    "UTMACMDFLUSH": (
        "Flush TMA commands",
        "push the TMA commands this thread issued out to the unit",
    ),
    "VIADDMNMX": (
        "Add, then min/max",
        "{d} = the minimum or maximum (an operand chooses) of {a} + {b} and {c}, in one "
        "instruction",
    ),
    "USHF": ("Uniform funnel shift", "{d} = a shifted 64-bit pair on the uniform datapath"),
    "USGXT": ("Uniform sign extend", "{d} = the low {b} bits of {a}, extended"),
    "USEL": ("Uniform select", "{d} = {a} if predicate {c}, else {b}"),
    "UISETP": ("Uniform integer compare", "uniform predicate {d} = ({b} {cmp} {c}){combine}"),
    # control
    "BRA": ("Branch", "jump to {target}"),
    "BRX": ("Indirect branch", "jump to the address in {d}"),
    "EXIT": ("Exit", "this thread is done"),
    "RET": ("Return", "return to the caller"),
    "CALL": ("Call", "call the subroutine {target}"),
    "BPT": ("Breakpoint / trap", "stop the kernel with an error (a failed device-side check)"),
    "BSSY": ("Push reconvergence point", "remember where diverged lanes meet again"),
    "BSYNC": ("Reconverge", "wait here until the lanes that diverged are back together"),
}

# Modifiers -> meaning. Some depend on the opcode; those are keyed "OPCODE.MOD".
MODIFIERS: dict[str, str] = {
    "E": "64-bit (extended) address",
    "128": "128 bits per thread (a 16-byte vector)",
    "64": "64 bits per thread",
    "U8": "unsigned 8-bit",
    "S8": "signed 8-bit",
    "U16": "unsigned 16-bit",
    "S16": "signed 16-bit",
    "U32": "unsigned 32-bit",
    "S32": "signed 32-bit",
    "U64": "unsigned 64-bit",
    "F32": "fp32",
    "F16": "fp16",
    "F64": "fp64",
    "IVALL": "drop every cached line (invalidate all)",
    "NAN": "true if either value is NaN (the unordered test)",
    "16816": "tile shape M×N×K = 16×8×16",
    "1688": "tile shape M×N×K = 16×8×8",
    "884": "tile shape M×N×K = 8×8×4",
    "TF32": "TensorFloat-32 inputs (fp32's range, a 10-bit mantissa)",
    "MT88": "8×8 tiles, transposed on the way",
    "E5M2": "fp8 with 5 exponent and 2 mantissa bits",
    "E4M3": "fp8 with 4 exponent and 3 mantissa bits",
    "ARRIVE": "count an arrival on the mbarrier",
    "ART0": "a variant ptxas emits for arrivals in TMA pipelines "
    "(NVIDIA does not document this modifier)",
    "CTAPOOL": "the block's shared pool of registers",
    "TRY_ALLOC": "ask for registers and report whether they were granted",
    "S64": "signed 64-bit",
    "2D": "a two-dimensional tile",
    "3D": "a three-dimensional tile",
    "BF16": "bfloat16",
    "BF16_V2": "on pairs of bfloat16 values (two in each 32-bit register), not fp16",
    "AND": "combine with AND",
    "OR": "combine with OR",
    "XOR": "combine with XOR",
    "EQ": "equal",
    "NE": "not equal",
    "LT": "less than",
    "LE": "at most",
    "GT": "greater than",
    "GE": "at least",
    "GEU": "at least, or unordered (NaN)",
    "LTU": "less than, or unordered",
    "GTU": "greater than, or unordered",
    "LEU": "at most, or unordered",
    "NEU": "not equal, or unordered",
    "EQU": "equal, or unordered",
    "EX": "extended: also compares the high halves (64-bit compare in two steps)",
    "X": "with the carry from the previous add (the high half of a 64-bit add)",
    "LUT": "the function is given as a truth table",
    "WIDE": "64-bit result (32 × 32 → 64)",
    "HI": "the high half",
    "MOV": "used as a move",
    "SHL": "used as a shift left",
    "IADD": "used as an add",
    "SX32": "sign-extend the 32-bit index first",
    "L": "toward the high bits (left)",
    "R": "toward the low bits (right)",
    "PACK_AB": "pack two results into one register",
    "EX2": "2^x",
    "RCP": "1/x",
    "SQRT": "√x",
    "RSQ": "1/√x",
    "LG2": "log2",
    "SIN": "sine",
    "COS": "cosine",
    "TANH": "hyperbolic tangent",
    "BFLY": "butterfly: lane XOR mask",
    "IDX": "by lane index",
    "UP": "from a lower lane",
    "DOWN": "from a higher lane",
    "BYPASS": "bypass L1 (cache in L2 only; cp.async.cg)",
    "DEFER_BLOCKING": "the blocking barrier form that bar.sync becomes on Volta and later",
    "SYNC": "wait for all warps",
    "ARV": "arrive without waiting",
    "M88": "8×8 matrices",
    "4": "four matrices",
    "2": "two matrices",
    "1": "one matrix",
    "16": "16-bit elements",
    "MMA": "issued on the tensor-core pipe",
    "ALL": "for all threads",
    "CTA": "scope: the block",
    "GPU": "scope: the GPU",
    "SYS": "scope: the system",
    "VIEW": "orders what the memory proxies see",
    "ASYNC": "toward the async proxy",
    "S": "shared memory",
    "T": "tensor memory",
    "PHASECHK": "check an mbarrier phase",
    "TRANS64": "64-bit barrier object",
    "TRYWAIT": "wait a while, then report",
    "EXCH": "swap in the new value, return the old",
    "CCTL": "cache control",
    "IV": "drop the cached copy (invalidate), so that the next read goes to memory",
    "FIND_AND_SET": "find free columns and mark them",
    "ALIGN": "aligned",
    "REL": "relative address",
    "NODEC": "the return form ptxas emits at a function's end (NVIDIA does not document this modifier)",
    "NOINC": "the call form ptxas emits for a device-function call (NVIDIA does not document this modifier)",
    "TRAP": "stop the kernel with an error",
    "U": "uniform (the whole warp takes it)",
    "FTZ": "flush subnormals to zero",
    "RN": "round to nearest even",
    "RZ": "round toward zero",
    "SAT": "clamp the result to its type's range ([0, 1] for floats)",
    "RP": "round toward +∞",
    "RM": "round toward -∞",
    "TRUNC": "round toward zero (truncate)",
    "NTZ": "a conversion flag ptxas sets with TRUNC for cvt.rzi; NVIDIA does not publish its meaning",
    "ANY": "true if any lane's predicate is true",
    "MAX": "maximum",
    "MIN": "minimum",
    "ADD": "sum",
    "DEALLOC": "release",
    "SMPOOL": "the SM's tensor-memory pool",
    "DEPBAR.LE": "until the count is at most the given number",
    "CONSTANT": "through the constant cache",
    "EF": "evict first",
    "EL": "evict last",
    "LU": "last use",
    "STRONG": "strong (coherent) access",
    "WARPGROUP.ARRIVE": "this warp's registers are ready for the coming wgmma (wgmma.fence)",
    "WARPGROUP.DEPBAR": "wait for earlier wgmma groups (wgmma.wait_group)",
}

# Modifiers with numbers in them: regex -> template ({0}, {1}, ... are the groups).
PATTERNS: list[tuple[str, str]] = [
    (r"(\d+)x(\d+)x(\d+)", "tile shape M×N×K = {0}×{1}×{2}"),
    (r"(\d+)dp(\d+)bit", "{0} data paths × {1} bits per lane"),
    (r"(\d+)dp(\d+)bit_t(\d+)_t(\d+)", "{0} data paths × {1} bits, lanes {2}–{3}"),
    (r"x(\d+)", "repeated {0} times"),
]

# SASS widths: the modifier that sets the bytes each thread moves in one memory instruction.
WIDTH_BYTES: dict[str, int] = {"128": 16, "64": 8, "U16": 2, "S16": 2, "U8": 1, "S8": 1}

SPECIAL_REGISTERS: dict[str, str] = {
    "SR_TID.X": "the thread's x index in the block (threadIdx.x)",
    "SR_TID.Y": "threadIdx.y",
    "SR_CTAID.X": "the block's x index in the grid (blockIdx.x, tl.program_id(0))",
    "SR_CTAID.Y": "the block's y index (tl.program_id(1))",
    "SR_CTAID.Z": "the block's z index (tl.program_id(2))",
    "SR_LANEID": "the lane number in the warp",
    "SR_CLOCKLO": "the cycle counter",
    "SRZ": "zero",
}

# The control field (bits 105..125 of each 128-bit instruction on Volta and later; not documented by
# NVIDIA, layout as published by reverse-engineering work):
CONTROL_NOTES = {
    "stall": "the scheduler waits this many cycles before issuing this warp's next instruction "
    "(fixed-latency results are ready by then)",
    "yield": "a hint that the scheduler may switch to another warp after this instruction",
    "write": "write scoreboard SB{n}: this variable-latency instruction (memory, MUFU...) releases SB{n} once its "
    "result is written; instructions that need the result wait on SB{n}",
    "read": "read scoreboard SB{n}: released once this instruction has read its source registers, so they may then "
    "be overwritten",
    "wait": "before issuing, wait until scoreboard barriers {list} are released",
    "reuse": "operand reuse cache: keep source operand(s) {list} for the next instruction",
}
