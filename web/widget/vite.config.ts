import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The visitor's chat widget: one self-contained script (`dist/widget.js`, an IIFE with its CSS inlined) that any site
 * embeds with `<script src="{api}/widget.js" data-key="pk_…" async>`. `scripts/setup.sh` builds it (never committed)
 * and the API serves it at `/widget.js`. No code splitting and no separate CSS file: a host page loads exactly one
 * file, and the styles go into the widget's shadow root, never into the page.
 */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false })],
  // Library mode leaves `process.env.NODE_ENV` to the consumer; a script tag has no bundler after it.
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    minify: true,
    sourcemap: false,
    cssCodeSplit: false,
    rolldownOptions: {
      // Pure ASCII (the rest escaped): a host page without a charset, or an old one in Latin-1, decodes the script
      // with its own encoding, and "…" would arrive as "â€¦".
      output: { charset: 'ascii' },
    },
    lib: {
      entry: 'src/main.tsx',
      formats: ['iife'],
      name: 'AgentPlatformWidgetBundle',
      fileName: () => 'widget.js',
    },
  },
});
