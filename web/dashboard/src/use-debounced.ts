import { useEffect, useState } from 'preact/hooks';

/** `value` once it has stayed the same for `ms` (a search box asks the API when typing pauses, not per key). */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
