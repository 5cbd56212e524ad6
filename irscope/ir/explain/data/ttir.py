"""Triton IR (TTIR) ops and the upstream MLIR dialects it uses: tt, arith, math, scf, cf.

Facts from the Triton dialect definitions and the MLIR dialect docs, in irscope's own words.
OPS maps an op name to (title, template). Fields: {results} (what the op defines), {a} {b} {c} {e}
(operands in order), {operands}, {type} (the result type in words), {attrs} (inline attributes).
"""

OPS: dict[str, tuple[str, str]] = {
    # --- tt: Triton's own ops, one per tl.* call more or less
    "tt.func": (
        "Kernel function",
        "the kernel's body; its arguments carry what the JIT learned about them "
        "(tt.divisibility = 16: the pointer or integer is a multiple of 16)",
    ),
    "tt.return": ("Return", "the end of the kernel (or a helper function)"),
    "tt.call": ("Call a helper", "{results} = a call of a @triton.jit helper that was not inlined"),
    "tt.get_program_id": (
        "Program id",
        "{results} = this program's index along the grid axis (tl.program_id); "
        "each program is one thread block",
    ),
    "tt.get_num_programs": (
        "Number of programs",
        "{results} = the grid size along an axis (tl.num_programs)",
    ),
    "tt.make_range": ("Range", "{results} = the tensor {range} (tl.arange)"),
    "tt.splat": ("Splat a scalar", "{results} = a tensor whose every element is {a} ({type})"),
    "tt.broadcast": (
        "Broadcast",
        "{results} = {a} stretched along its size-1 dimensions to {type}",
    ),
    "tt.expand_dims": (
        "Add a dimension",
        "{results} = {a} with a new size-1 dimension at axis {axis} (x[:, None] or x[None, :])",
    ),
    "tt.reshape": ("Reshape", "{results} = {a} viewed with a new shape"),
    "tt.trans": ("Transpose", "{results} = {a} with its dimensions permuted (tl.trans / .T)"),
    "tt.cat": ("Concatenate", "{results} = {a} and {b} joined"),
    "tt.join": ("Join", "{results} = {a} and {b} stacked along a new last dimension of size 2"),
    "tt.split": ("Split", "{results} = the two halves of {a} along its last dimension (of size 2)"),
    "tt.addptr": (
        "Pointer arithmetic",
        "{results} = {a} + {b} elements (each offset is scaled by the element size, "
        "like C pointer arithmetic)",
    ),
    "tt.advance": (
        "Advance a block pointer",
        "{results} = block pointer {a} moved by the offsets {b}",
    ),
    "tt.make_tensor_ptr": (
        "Block pointer",
        "{results} = a pointer to a block of a 2-D tensor, from base, shape, strides, "
        "offsets (tl.make_block_ptr)",
    ),
    "tt.load": ("Load", "{results} = the values at the pointers in {a}{masked}"),
    "tt.store": ("Store", "write {b} to the pointers in {a}{masked}"),
    "tt.atomic_rmw": (
        "Atomic read-modify-write",
        "{results} = the old values at {b}, each atomically updated with {c}",
    ),
    "tt.atomic_cas": (
        "Atomic compare-and-swap",
        "{results} = the old values at {a}; where they equal {b} they become {c}",
    ),
    "tt.dot": (
        "Matrix multiply",
        "{results} = {a} × {b} + {c} (tl.dot), a tile-sized matrix product meant for tensor cores",
    ),
    "tt.dot_scaled": (
        "Scaled matrix multiply",
        "{results} = a matrix product of block-scaled low-precision inputs",
    ),
    "tt.reduce": (
        "Reduction",
        "{results} = {a} combined along axis {axis} with the region below (tl.sum / tl.max / ...)",
    ),
    "tt.reduce.return": (
        "Reduction step",
        "the combine function's result: how two partial values merge",
    ),
    "tt.scan": (
        "Scan",
        "{results} = the running combination of {a} along an axis (tl.cumsum and friends)",
    ),
    "tt.scan.return": ("Scan step", "the combine function's result"),
    "tt.histogram": ("Histogram", "{results} = counts of the values in {a}"),
    "tt.fp_to_fp": (
        "Float conversion",
        "{results} = {a} converted to another float format (fp8 and friends), with rounding",
    ),
    "tt.bitcast": ("Bitcast", "{results} = {a}'s bits read as another type"),
    "tt.int_to_ptr": ("Integer to pointer", "{results} = {a} as a pointer"),
    "tt.ptr_to_int": ("Pointer to integer", "{results} = {a} as an integer"),
    "tt.clampf": ("Clamp", "{results} = {a} limited to [{b}, {c}]"),
    "tt.precise_sqrt": ("Precise square root", "{results} = √{a}, correctly rounded"),
    "tt.precise_divf": ("Precise division", "{results} = {a} / {b}, correctly rounded"),
    "tt.approx_divf": (
        "Fast division",
        "{results} = {a} / {b} by the hardware's approximate fp32 division (a few ulp "
        "off, quicker than the correctly rounded one)",
    ),
    "llvm.intr.assume": (
        "Assumption",
        "tell the compiler a condition always holds (for example that an offset is a "
        "multiple of 16), so it may vectorize; emits no code",
    ),
    "tt.mulhiui": ("High multiply", "{results} = the high 32 bits of {a} × {b}"),
    "tt.extern_elementwise": (
        "Library call",
        "{results} = a libdevice or other external function applied element by element",
    ),
    "tt.elementwise_inline_asm": (
        "Inline assembly",
        "{results} = inline PTX/AMDGCN applied element by element",
    ),
    "tt.print": ("Print", "device-side print (tl.device_print)"),
    "tt.assert": ("Assert", "device-side assertion (tl.device_assert)"),
    "tt.descriptor_load": (
        "Load through a tensor descriptor",
        "{results} = a block read with a TMA descriptor",
    ),
    "tt.descriptor_store": (
        "Store through a tensor descriptor",
        "write a block with a TMA descriptor",
    ),
    "tt.make_tensor_descriptor": ("Tensor descriptor", "{results} = a TMA descriptor for a tensor"),
    "tt.gather": ("Gather", "{results} = elements of {a} picked by the indices {b}"),
    "tt.unsplat": ("Unsplat", "{results} = the single value of a one-element tensor"),
    # --- arith: integer and float arithmetic, element by element on tensors
    "arith.constant": ("Constant", "{results} = the constant {value}"),
    "arith.addi": ("Integer add", "{results} = {a} + {b}"),
    "arith.subi": ("Integer subtract", "{results} = {a} - {b}"),
    "arith.muli": ("Integer multiply", "{results} = {a} × {b}"),
    "arith.divsi": ("Signed integer divide", "{results} = {a} / {b}, rounded toward zero"),
    "arith.divui": ("Unsigned integer divide", "{results} = {a} / {b}"),
    "arith.remsi": ("Signed remainder", "{results} = {a} % {b} (sign of {a})"),
    "arith.remui": ("Unsigned remainder", "{results} = {a} % {b}"),
    "arith.ceildivsi": ("Ceiling divide", "{results} = ⌈{a} / {b}⌉"),
    "arith.floordivsi": ("Floor divide", "{results} = ⌊{a} / {b}⌋"),
    "arith.andi": ("Bitwise AND", "{results} = {a} AND {b} (for i1 masks: both true)"),
    "arith.ori": ("Bitwise OR", "{results} = {a} OR {b} (for i1 masks: either true)"),
    "arith.xori": ("Bitwise XOR", "{results} = {a} XOR {b}"),
    "arith.shli": ("Shift left", "{results} = {a} << {b}"),
    "arith.shrsi": ("Arithmetic shift right", "{results} = {a} >> {b}, copying the sign bit"),
    "arith.shrui": ("Logical shift right", "{results} = {a} >> {b}, filling with zeros"),
    "arith.maxsi": ("Signed maximum", "{results} = max({a}, {b})"),
    "arith.minsi": ("Signed minimum", "{results} = min({a}, {b})"),
    "arith.maxui": ("Unsigned maximum", "{results} = max({a}, {b})"),
    "arith.minui": ("Unsigned minimum", "{results} = min({a}, {b})"),
    "arith.cmpi": (
        "Integer compare",
        "{results} = ({a} {pred} {b}), true or false per element (an i1 mask)",
    ),
    "arith.cmpf": (
        "Float compare",
        "{results} = ({a} {pred} {b}), true or false per element (an i1 mask)",
    ),
    "arith.select": ("Select", "{results} = {b} where {a} is true, else {c} (tl.where)"),
    "arith.addf": ("Float add", "{results} = {a} + {b}"),
    "arith.subf": ("Float subtract", "{results} = {a} - {b}"),
    "arith.mulf": ("Float multiply", "{results} = {a} × {b}"),
    "arith.divf": ("Float divide", "{results} = {a} / {b}"),
    "arith.remf": ("Float remainder", "{results} = the remainder of {a} / {b}"),
    "arith.negf": ("Float negate", "{results} = -{a}"),
    "arith.maxnumf": (
        "Float maximum",
        "{results} = max({a}, {b}), ignoring a NaN if the other is a number",
    ),
    "arith.minnumf": (
        "Float minimum",
        "{results} = min({a}, {b}), ignoring a NaN if the other is a number",
    ),
    "arith.maximumf": ("Float maximum", "{results} = max({a}, {b}), NaN if either is NaN"),
    "arith.minimumf": ("Float minimum", "{results} = min({a}, {b}), NaN if either is NaN"),
    "arith.extf": ("Widen a float", "{results} = {a} converted to a wider float type (exact)"),
    "arith.truncf": ("Narrow a float", "{results} = {a} rounded to a narrower float type"),
    "arith.extsi": ("Sign-extend", "{results} = {a} widened, copying its sign bit"),
    "arith.extui": ("Zero-extend", "{results} = {a} widened, filling with zeros"),
    "arith.trunci": ("Truncate an integer", "{results} = the low bits of {a}"),
    "arith.sitofp": ("Signed int to float", "{results} = {a} as a float"),
    "arith.uitofp": ("Unsigned int to float", "{results} = {a} as a float"),
    "arith.fptosi": ("Float to signed int", "{results} = {a} rounded toward zero to an integer"),
    "arith.fptoui": (
        "Float to unsigned int",
        "{results} = {a} rounded toward zero to an unsigned integer",
    ),
    "arith.bitcast": ("Bitcast", "{results} = {a}'s bits read as another type"),
    "arith.index_cast": ("Index cast", "{results} = {a} converted to or from the index type"),
    "arith.fma": ("Fused multiply-add", "{results} = {a} × {b} + {c} with one rounding"),
    # --- math
    "math.exp": ("Exponential", "{results} = e^{a}"),
    "math.exp2": ("Base-2 exponential", "{results} = 2^{a}"),
    "math.log": ("Natural logarithm", "{results} = ln({a})"),
    "math.log2": ("Base-2 logarithm", "{results} = log2({a})"),
    "math.sqrt": ("Square root", "{results} = √{a}"),
    "math.rsqrt": ("Reciprocal square root", "{results} = 1/√{a}"),
    "math.sin": ("Sine", "{results} = sin({a})"),
    "math.cos": ("Cosine", "{results} = cos({a})"),
    "math.tanh": ("Hyperbolic tangent", "{results} = tanh({a})"),
    "math.erf": ("Error function", "{results} = erf({a})"),
    "math.absf": ("Float absolute value", "{results} = |{a}|"),
    "math.absi": ("Integer absolute value", "{results} = |{a}|"),
    "math.fma": ("Fused multiply-add", "{results} = {a} × {b} + {c} with one rounding"),
    "math.floor": ("Floor", "{results} = ⌊{a}⌋"),
    "math.ceil": ("Ceiling", "{results} = ⌈{a}⌉"),
    # --- scf / cf: structured and plain control flow
    "scf.for": (
        "Loop",
        "a for loop: {loop}; the values in iter_args are carried from one iteration to the next",
    ),
    "scf.yield": (
        "Loop/branch result",
        "hand {operands} to the next iteration (in a loop) or out of the if",
    ),
    "scf.if": ("If", "run the first region when {a} is true, else the second"),
    "scf.while": ("While loop", "a loop that runs while its condition holds"),
    "scf.condition": ("While condition", "continue the while loop if {a} is true"),
    "cf.br": ("Branch", "jump to another block"),
    "cf.cond_br": ("Conditional branch", "jump to one of two blocks depending on {a}"),
    "cf.assert": ("Assert", "stop with a message if {a} is false"),
    "module": ("Module", "the compilation unit: the kernel plus attributes of the whole program"),
    "gpu.barrier": ("Block barrier", "wait for every thread of the block"),
}

# arith.cmpi / arith.cmpf predicates in words.
PREDICATES: dict[str, str] = {
    "eq": "==",
    "ne": "!=",
    "slt": "<",
    "sle": "<=",
    "sgt": ">",
    "sge": ">=",
    "ult": "< (unsigned)",
    "ule": "<= (unsigned)",
    "ugt": "> (unsigned)",
    "uge": ">= (unsigned)",
    "oeq": "==",
    "one": "!=",
    "olt": "<",
    "ole": "<=",
    "ogt": ">",
    "oge": ">=",
    "ueq": "== (or NaN)",
    "une": "!= (or NaN)",
    "ult_f": "< (or NaN)",
    "ord": "both are numbers",
    "uno": "either is NaN",
}
