import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The dashboard's pages. `scripts/setup.sh` builds them into `dist/` (gitignored) and the API serves that build:
 * every page path answers `index.html`, the assets are under `/app/assets/` (api/pages.ts). For working on the
 * pages, `npx vite --config web/dashboard/vite.config.ts` serves them with live reload at the same paths
 * (`/connect`) and sends `/v1/*` to the API on :8080 (`npm start`).
 */
export default defineConfig(({ command }) => ({
  root: import.meta.dirname,
  base: command === 'build' ? '/app/' : '/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
  server: {
    proxy: { '/v1': 'http://localhost:8080' },
  },
}));
