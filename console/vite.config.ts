import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const path = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

// The console is built into dist/console and served by the api role at / (docs/console.md).
export default defineConfig({
  root: path('.'),
  base: '/',
  resolve: {
    alias: {
      '@rtc/protocol': path('../protocol/src/index.ts'),
      '@rtc/app-sdk': path('../sdk/app/src/index.ts'),
      '@rtc/react': path('../sdk/react/src/index.ts'),
      // @rtc/react is written against React's API; the console runs it on Preact's compat layer
      // (react/jsx-runtime becomes preact/compat/jsx-runtime)
      'react-dom': 'preact/compat',
      react: 'preact/compat',
    },
  },
  build: { outDir: path('../dist/console'), emptyOutDir: true, target: 'es2022', sourcemap: false },
  logLevel: 'warn',
});
