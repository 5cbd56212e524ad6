"""A PTX abstract machine: a kernel's integer and predicate instructions run for every thread at once."""
