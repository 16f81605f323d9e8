import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A transcript that keeps its newest message in view as messages come (and as `changes` change), unless the operator
 * scrolled up to read; then `unseen` counts what came, for a button that jumps back down. `read` is set again when
 * what is drawn inside changes as a whole (a new state), to follow images as they load.
 */
export function useNewestInView(changes: unknown[], read: unknown) {
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [unseen, setUnseen] = useState(0);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, changes);

  // An image that finishes loading can push the newest message out of view: keep it in view, as above. (`load` does not
  // bubble; a listener in the capture phase hears every image of the transcript.)
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const keepNewestInView = () => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    };
    el.addEventListener('load', keepNewestInView, true);
    return () => el.removeEventListener('load', keepNewestInView, true);
  }, [read]);

  return {
    scroller,
    unseen,
    onScroll() {
      const el = scroller.current;
      if (!el) return;
      stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
      if (stick.current) setUnseen(0);
    },
    jumpToNewest() {
      const el = scroller.current;
      if (el) el.scrollTop = el.scrollHeight;
      stick.current = true;
      setUnseen(0);
    },
    /** Messages came from the visitor or the agent: unseen while the operator reads further up. */
    incoming(count: number) {
      if (!stick.current) setUnseen((n) => n + count);
    },
    /** This page sent something: the view goes to it. */
    follow() {
      stick.current = true;
    },
  };
}
