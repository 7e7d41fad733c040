/**
 * The variable `twinlock exec --sandbox` (and `plan --sandbox`) sets, to
 * `bubblewrap`, in the environment of the command it confines, so a program
 * there can tell it is confined. A hint for the program, not a guard: the
 * program may unset it, and nothing the gate decides reads it.
 */
export const SANDBOX_ENV = "TWINLOCK_SANDBOX";
