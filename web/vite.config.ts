import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// `npm run dev -w web`: Vite on :5173 proxying the API (CHATGPU_API, default the
// `npm start` port) so the dashboard talks to one origin in dev as in production.
const api = process.env.CHATGPU_API ?? 'http://127.0.0.1:4000';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      '/graphql': { target: api, ws: true, changeOrigin: true },
      '/blobs': { target: api, changeOrigin: true },
      '/healthz': { target: api, changeOrigin: true },
      '^/jobs/[^/]+/outputs\\.tar\\.gz$': { target: api, changeOrigin: true },
    },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
  },
});
