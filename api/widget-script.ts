import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from './context';
import { type Loaded, load, send } from './pages';

/**
 * The widget's script (`web/widget`, built by `scripts/setup.sh` into one file, never committed), served at
 * `/widget.js` for any site's `<script src>`. Its address carries no content hash (it is pasted into integrators'
 * pages once), so browsers keep it a few minutes and then revalidate it by ETag: a new build reaches visitors soon.
 */
const WIDGET_BUNDLE = path.join(__dirname, '..', 'web', 'widget', 'dist', 'widget.js');

const CACHE_CONTROL = 'public, max-age=300, stale-while-revalidate=86400';

const NOT_BUILT =
  '/* The widget is not built: run `bash scripts/setup.sh` (npm start and npm test run it); it builds web/widget. */\n';

export function createWidgetScript(file: string = WIDGET_BUNDLE) {
  /** Read again when a rebuild changes the file while the API runs. */
  let current: { mtimeMs: number; loaded: Loaded } | undefined;
  return {
    async serve(ctx: AppContext): Promise<void> {
      const info = await stat(file).catch(() => undefined);
      // Any site may load it; it runs in their page and talks to us under their origin's CORS rules.
      ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
      ctx.set('X-Content-Type-Options', 'nosniff');
      if (!info) {
        ctx.status = 503;
        ctx.type = 'text/javascript; charset=utf-8';
        ctx.set('Cache-Control', 'no-store');
        ctx.body = NOT_BUILT;
        return;
      }
      if (!current || current.mtimeMs !== info.mtimeMs) current = { mtimeMs: info.mtimeMs, loaded: await load(file) };
      send(ctx, current.loaded, 'text/javascript; charset=utf-8', CACHE_CONTROL);
    },
  };
}

export type WidgetScript = ReturnType<typeof createWidgetScript>;
