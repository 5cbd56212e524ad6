"""AMDGCN (CDNA3, gfx942) instructions, from AMD's "AMD Instinct MI300 Instruction Set Architecture"
reference, in irscope's own words.

A mnemonic is read as <unit>_<operation>_<type>[_<encoding>]: `v_add_f32_e32` is a vector (per-lane) add
of fp32 values in the 32-bit VOP2 encoding. FULL holds mnemonics explained as a whole (after the encoding
suffix is removed); otherwise UNITS + OPERATIONS + TYPES compose the sentence. Memory mnemonics are read
by code (explain/amdgcn.py) from MEMORY and WIDTHS. Fields: {d} {a} {b} {c} operands in order.
"""

UNITS: dict[str, str] = {
    "v": "per lane (vector ALU: each of the wave's 64 lanes computes its own value)",
    "s": "once for the whole wave (scalar ALU)",
}

OPERATIONS: dict[str, tuple[str, str]] = {
    "add": ("Add", "{d} = {a} + {b}"),
    "sub": ("Subtract", "{d} = {a} - {b}"),
    "subrev": ("Reverse subtract", "{d} = {b} - {a}"),
    "addc": ("Add with carry", "{d} = {a} + {b} + the carry (the high half of a 64-bit add)"),
    "subb": ("Subtract with borrow", "{d} = {a} - {b} - the borrow"),
    "mul": ("Multiply", "{d} = {a} × {b}"),
    "mul_lo": ("Multiply, low half", "{d} = the low 32 bits of {a} × {b}"),
    "mul_hi": ("Multiply, high half", "{d} = the high 32 bits of {a} × {b}"),
    "fma": ("Fused multiply-add", "{d} = {a} × {b} + {c} with one rounding"),
    "fmac": ("Fused multiply-accumulate", "{d} = {a} × {b} + {d}"),
    "mac": ("Multiply-accumulate", "{d} = {a} × {b} + {d}"),
    "mad": ("Multiply-add", "{d} = {a} × {b} + {c}"),
    "add_co": (
        "Add with carry-out",
        "{d} = the sum of the two sources; the carry-out (for the high half of a 64-bit "
        "add) goes to VCC or the SGPR pair named",
    ),
    "sub_co": (
        "Subtract with borrow-out",
        "{d} = the first source minus the second; the borrow goes to VCC or the SGPR pair named",
    ),
    "subbrev_co": (
        "Reverse subtract with borrow",
        "{d} = the second source minus the first minus the borrow in; the "
        "borrow out goes to VCC or the SGPR pair named (the high half of a 64-bit subtract)",
    ),
    "bitcmp0": ("Test a bit", "SCC = whether bit {a} of {d} is 0"),
    "bitset1": ("Set a bit", "bit {a} of {d} becomes 1"),
    "brev": ("Bit reverse", "{d} = {a} with its bits in reverse order"),
    "mulk": ("Multiply by a 16-bit constant", "{d} = {d} × the constant {a}"),
    "bfi": (
        "Bit-field insert",
        "{d} = the bits of {b} where the mask {a} is 1, and of {c} where it is 0",
    ),
    "fmamk": (
        "Fused multiply-add, constant factor",
        "{d} = {a} × {b} + {c}, {b} a 32-bit constant written in the instruction",
    ),
    "fmaak": (
        "Fused multiply-add, constant addend",
        "{d} = {a} × {b} + {c}, {c} a 32-bit constant written in the instruction",
    ),
    "trunc": ("Round toward zero", "{d} = {a} with its fraction dropped (still a float)"),
    "floor": ("Round down", "{d} = the largest whole number not above {a} (still a float)"),
    "ceil": ("Round up", "{d} = the smallest whole number not below {a} (still a float)"),
    "rndne": (
        "Round to nearest even",
        "{d} = {a} rounded to the nearest whole number, ties to even (still a float)",
    ),
    "fract": ("Fraction", "{d} = {a} minus its floor: the part after the point, in [0, 1)"),
    "max": ("Maximum", "{d} = max({a}, {b})"),
    "min": ("Minimum", "{d} = min({a}, {b})"),
    "max3": ("Maximum of three", "{d} = max({a}, {b}, {c})"),
    "min3": ("Minimum of three", "{d} = min({a}, {b}, {c})"),
    "and": ("Bitwise AND", "{d} = {a} AND {b}"),
    "or": ("Bitwise OR", "{d} = {a} OR {b}"),
    "xor": ("Bitwise XOR", "{d} = {a} XOR {b}"),
    "not": ("Bitwise NOT", "{d} = NOT {a}"),
    "or3": ("Three-way OR", "{d} = {a} OR {b} OR {c}"),
    "lshl": ("Shift left", "{d} = {a} << {b}"),
    "lshr": ("Logical shift right", "{d} = {a} >> {b} (zeros in)"),
    "ashr": ("Arithmetic shift right", "{d} = {a} >> {b} (sign bit in)"),
    "lshlrev": ("Shift left (reversed operands)", "{d} = {b} << {a}"),
    "lshrrev": ("Logical shift right (reversed operands)", "{d} = {b} >> {a}"),
    "ashrrev": ("Arithmetic shift right (reversed operands)", "{d} = {b} >> {a}, sign bit in"),
    "lshl_or": ("Shift then OR", "{d} = ({a} << {b}) OR {c}"),
    "and_or": ("AND then OR", "{d} = ({a} AND {b}) OR {c}"),
    "add_lshl": ("Add then shift", "{d} = ({a} + {b}) << {c}"),
    "lshl_add": ("Shift then add", "{d} = ({a} << {b}) + {c}"),
    "add3": ("Three-way add", "{d} = {a} + {b} + {c}"),
    "xad": ("XOR then add", "{d} = ({a} XOR {b}) + {c}"),
    "lshl1_add": ("Shift by 1 then add", "{d} = ({a} << 1) + {b}"),
    "lshl2_add": ("Shift by 2 then add", "{d} = ({a} << 2) + {b}"),
    "mov": ("Move", "{d} = {a}"),
    "movk": ("Move a 16-bit constant", "{d} = the sign-extended constant {a}"),
    "addk": ("Add a 16-bit constant", "{d} = {d} + {a}"),
    "cselect": ("Select on SCC", "{d} = {a} if the scalar condition code (SCC) is set, else {b}"),
    "cndmask": (
        "Select per lane",
        "{d} = {b} where the lane's bit in the mask {c} (VCC if not named) is set, else {a}",
    ),
    "exp": ("2^x", "{d} = 2 to the power {a} (transcendental unit, approximate)"),
    "log": ("log2", "{d} = log2({a}) (approximate)"),
    "rcp": ("Reciprocal", "{d} = 1 / {a} (approximate)"),
    "rsq": ("Reciprocal square root", "{d} = 1 / √{a} (approximate)"),
    "sqrt": ("Square root", "{d} = √{a}"),
    "sin": ("Sine", "{d} = sin({a})"),
    "cos": ("Cosine", "{d} = cos({a})"),
    "ldexp": ("Scale by a power of 2", "{d} = {a} × 2^{b}"),
    "bfrev": (
        "Bit reverse",
        "{d} = {a} with its bits reversed (bfrev of 1 is 0x80000000, the sign bit)",
    ),
    "bfe": ("Bit-field extract", "{d} = a field of bits of {a}, as {b} says"),
    "perm": ("Byte permute", "{d} = four bytes chosen from {a} and {b} by the selector {c}"),
    "pack": ("Pack", "{d} = {a} and {b} packed into one 32-bit register"),
    "readfirstlane": (
        "Read the first active lane",
        "scalar {d} = the value of {a} in the first active lane",
    ),
    "readlane": ("Read one lane", "scalar {d} = the value of {a} in lane {b}"),
    "writelane": ("Write one lane", "lane {b} of {d} = scalar {a}"),
    "div_scale": (
        "Division, scale step",
        "{d} = a pre-scaled operand for an exact float division (step 1 of a/b)",
    ),
    "div_fmas": (
        "Division, fma step",
        "{d} = {a} × {b} + {c}, scaled as div_scale decided (step 2 of a/b)",
    ),
    "div_fixup": (
        "Division, fixup step",
        "{d} = the quotient with special cases (inf, NaN, 0) fixed (last step of a/b)",
    ),
    "mad_u64_u32": ("64-bit multiply-add", "{d} = {a} × {b} + {c} with a 64-bit result"),
    "bitcmp1": ("Test a bit", "SCC = whether bit {a} of {d} is 1"),
    "abs": ("Absolute value", "{d} = |{a}|"),
    "absdiff": ("Absolute difference", "{d} = |{a} - {b}|"),
    "cmp": ("Compare", "SCC = ({d} {cmp} {a})"),
    "cmpk": ("Compare with a constant", "SCC = ({d} {cmp} {a})"),
}

COMPARISONS: dict[str, str] = {
    "eq": "==",
    "lg": "!=",
    "ne": "!=",
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "neq": "!= (or NaN)",
    "nlt": "not <",
    "ngt": "not >",
    "o": "ordered",
    "u": "unordered",
}

TYPES: dict[str, str] = {
    "f32": "fp32",
    "f16": "fp16",
    "bf16": "bfloat16",
    "f64": "fp64",
    "i32": "signed 32-bit",
    "u32": "unsigned 32-bit",
    "i16": "signed 16-bit",
    "u16": "unsigned 16-bit",
    "b32": "32 bits",
    "b64": "64 bits (a register pair)",
    "i64": "signed 64-bit",
    "u64": "unsigned 64-bit",
    "b16": "16 bits",
    "u24": "unsigned 24-bit (the low 24 bits of each input)",
    "i24": "signed 24-bit (the low 24 bits of each input)",
}

ENCODINGS: dict[str, str] = {
    "e32": "32-bit encoding (VOP1/VOP2/VOPC): the compare result goes to VCC",
    "e64": "64-bit encoding (VOP3): any SGPR pair can hold a mask, more operands and input modifiers",
    "dpp": "data-parallel primitive: the first source is read from another lane by a row pattern (shift, broadcast, "
    "mirror) — a step of a wave-wide reduction without LDS",
    "sdwa": "sub-dword addressing: reads or writes one byte or 16-bit half of a register",
}

FULL: dict[str, tuple[str, str]] = {
    "s_waitcnt": (
        "Wait for memory counters",
        "wait until outstanding memory operations drop to the given counts: "
        "vmcnt (vector memory loads/stores), lgkmcnt (LDS, scalar memory, messages), expcnt; {ops}",
    ),
    "s_nop": (
        "No operation",
        "wait {d}+1 cycles: required spacing between some dependent instructions",
    ),
    "s_barrier": (
        "Workgroup barrier",
        "every wave of the workgroup waits here for the others (__syncthreads)",
    ),
    "s_endpgm": ("End of program", "this wave is done"),
    "s_branch": ("Branch", "jump to {d}"),
    "s_cbranch_scc0": ("Branch if SCC clear", "jump to {d} if the scalar condition code is 0"),
    "s_cbranch_scc1": ("Branch if SCC set", "jump to {d} if the scalar condition code is 1"),
    "s_cbranch_vccz": ("Branch if VCC is zero", "jump to {d} if no lane's VCC bit is set"),
    "s_cbranch_vccnz": ("Branch if VCC is non-zero", "jump to {d} if some lane's VCC bit is set"),
    "s_cbranch_execz": (
        "Branch if no lane is active",
        "jump to {d} when the EXEC mask is 0 (skip a block no lane runs)",
    ),
    "s_cbranch_execnz": ("Branch if some lane is active", "jump to {d} when EXEC is not 0"),
    "s_and_saveexec_b64": (
        "Narrow the active lanes",
        "{d} = EXEC, then EXEC = EXEC AND {a}: only lanes where the "
        "condition holds stay active (the start of an if)",
    ),
    "s_or_saveexec_b64": ("Widen the active lanes", "{d} = EXEC, then EXEC = EXEC OR {a}"),
    "s_andn2_b64": (
        "AND with the complement",
        "{d} = {a} AND NOT {b} (64-bit lane masks, e.g. the active lanes "
        "that fail a loop condition)",
    ),
    "v_accvgpr_read_b32": (
        "Read an accumulation register",
        "{d} = {a}: copy from an AccVGPR (where MFMA results live) to an ordinary vector register",
    ),
    "v_accvgpr_write_b32": (
        "Write an accumulation register",
        "{d} = {a}: copy into an AccVGPR, e.g. to set an MFMA accumulator's starting value",
    ),
    "v_rcp_iflag_f32": (
        "Reciprocal (integer-division variant)",
        "{d} = 1 / {a} (approximate), the form used "
        "inside integer division sequences: it raises no floating-point exception flags",
    ),
    "s_setprio": ("Set wave priority", "raise or lower this wave's issue priority"),
    "s_sleep": ("Sleep", "pause the wave for a while"),
    "s_setreg_imm32_b32": (
        "Write a hardware register",
        "set a field of a hardware register to a constant, such as "
        "the float mode (rounding, subnormals) for the code that follows",
    ),
    "s_getpc_b64": ("Read the program counter", "{d} = the address of the next instruction"),
    "v_pack_b32_f16": (
        "Pack two halves",
        "{d} = the fp16 values {a} (low) and {b} (high) in one register",
    ),
    "v_cvt_pkrtz_f16_f32": (
        "Convert and pack",
        "{d} = {a} and {b} rounded toward zero to fp16 and packed",
    ),
    "ds_bpermute_b32": (
        "Lane permute (backward)",
        "{d} = the value of {b} held by the lane that {a} points at "
        "(lane = address / 4): a cross-lane gather through the LDS crossbar; no LDS memory is used",
    ),
    "ds_permute_b32": (
        "Lane permute (forward)",
        "send {b} to the lane that {a} points at (lane = address / 4), "
        "through the LDS crossbar; no LDS memory is used",
    ),
    "ds_swizzle_b32": (
        "Lane swizzle",
        "{d} = {a} from another lane, chosen by a fixed pattern in the offset",
    ),
    "s_mov_b64": ("Move 64 bits", "{d} = {a} (a pair of scalar registers)"),
    "v_mad_u64_u32": (
        "64-bit multiply-add",
        "{d} = {b} × {c} + {e} as unsigned 64-bit; the carry-out goes to {a}",
    ),
}

# The memory mnemonics: prefix -> (space words, load/store); width from WIDTHS.
MEMORY: dict[str, str] = {
    "buffer": "global memory through a buffer descriptor (out-of-range offsets read 0 / are dropped)",
    "global": "global memory",
    "flat": "memory at a flat (generic) address",
    "scratch": "scratch (private, spill) memory",
    "ds": "LDS (shared memory)",
    "s": "constant/scalar memory (one read for the whole wave, e.g. kernel arguments)",
}

WIDTHS: dict[str, int] = {
    "ubyte": 1,
    "sbyte": 1,
    "byte": 1,
    "ushort": 2,
    "sshort": 2,
    "short": 2,
    "u8": 1,
    "i8": 1,
    "u16": 2,
    "i16": 2,
    "b8": 1,
    "b16": 2,
    "b32": 4,
    "b64": 8,
    "b96": 12,
    "b128": 16,
    "dword": 4,
    "dwordx2": 8,
    "dwordx3": 12,
    "dwordx4": 16,
    "dwordx8": 32,
    "dwordx16": 64,
}

MATRIX = (
    "Matrix fused multiply-add (MFMA)",
    "the wave computes a {m}×{n} block += A × B with K = {k}: inputs "
    "{intype}, accumulator {outtype}; {d} holds this lane's share of the accumulator, "
    "{a} and {b} its pieces of A and B",
)

DIRECTIVES = "An assembler directive: kernel metadata (registers used, LDS size, arguments) or debug info; not code."
