// Vite build of Arbor's browser page. The output goes straight into the Rust crate that embeds it
// (crates/http/assets/browser/), under fixed file names: `include_bytes!` names each file, and the
// server revalidates with an ETag instead of relying on hashed names.
import { defineConfig } from 'vite';

export default defineConfig({
  base: './',
  build: {
    outDir: '../crates/http/assets/browser',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 4096,
    rollupOptions: {
      output: {
        entryFileNames: 'assets/app.js',
        assetFileNames: 'assets/app[extname]',
        inlineDynamicImports: true,
      },
    },
  },
});
