# oclgrind_diagnostics.cmake - the wording of every diagnostic Oclgrind 21.10 prints, as
# regular expressions for FAIL_REGULAR_EXPRESSION. Oclgrind reports problems on stderr and
# never changes the program's exit status, so these are how a diagnostic fails a test.
# Each pattern was provoked once by a deliberately broken kernel (the report of the
# Oclgrind work lists the evidence); the last one catches wordings not listed above,
# since every kernel diagnostic carries a "<tab>Kernel: <name>" line.
set(OCLGRIND_DIAGNOSTICS
  # out of bounds: "Invalid read of size 4 at global memory address 0x...", "Invalid write
  # of size 4 at local memory address 0x..."; access qualifiers: "Invalid write to
  # read-only buffer", "Invalid read from write-only buffer"
  "Invalid (read|write)"
  "Invalid memory (load|store)"          # misaligned pointer
  "Unaligned address"
  "exceeds static array size"            # "Index (64) exceeds static array size (64)"
  # "Read-write data race at local memory address 0x...", "Write-write data race at ..."
  "data race at"
  # "Uninitialized value written to global memory address 0x...", "Uninitialized
  # address used to read from global memory address 0x..."
  "Uninitialized (value|address)"
  # "Controlflow depends on uninitialized value", "Instruction depends on an
  # uninitialized index value"
  "depends on (an )?uninitialized"
  "Work-group divergence detected"       # a barrier not reached by the whole group
  "OpenCL runtime error detected"        # --check-api: "Oclgrind - OpenCL runtime error detected"
  "OCLGRIND FATAL ERROR"                 # the simulator could not execute an instruction
  # "Oclgrind: 1000 errors generated - suppressing further errors", bad option values
  "Oclgrind: "
  "\tKernel: ")
