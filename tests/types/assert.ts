// Type-level assertions shared by the type tests.

/** Compiles only when `T` is `true`. */
export type Expect<T extends true> = T;

/** True when `A` and `B` are the same type (not merely mutually assignable). */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** True when `T` is `any`. */
export type IsAny<T> = 0 extends 1 & T ? true : false;
