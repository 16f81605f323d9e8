/**
 * A service as its callers use it (`services.bots.get(id)`) from operations written as plain functions of the
 * resource's deps and their own arguments (docs/architecture.md, Who owns what): `bindTo(deps)(op)` is `op` with its
 * deps given, its other parameters and result unchanged.
 */
export function bindTo<D>(deps: D) {
  return <A extends unknown[], R>(op: (deps: D, ...args: A) => R) =>
    (...args: A): R =>
      op(deps, ...args);
}
