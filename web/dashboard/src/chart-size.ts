import { useEffect, useRef, useState } from 'preact/hooks';

/** What the hand-drawn SVG charts share (billing's usage, the resolution report): their scale and their width. */

/** The axis' top: four equal whole steps (1, 2, 3 or 5 × 10^n each) reaching at least `n`, so every line reads easily. */
export function niceCeil(n: number): number {
  const step = Math.max(1, n / 4);
  const p = 10 ** Math.floor(Math.log10(step));
  for (const m of [1, 2, 3, 5, 10]) if (m * p >= step) return 4 * m * p;
  return 40 * p;
}

/** The width the element has, kept up to date (the chart draws in real pixels, so text is never stretched). */
export function useWidth<T extends HTMLElement>(): [{ current: T | null }, number] {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const observer = new ResizeObserver(() => setWidth(el.clientWidth));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}
