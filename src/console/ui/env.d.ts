// The style sheet is bundled by esbuild into console.css; importing it only orders it.
declare module '*.css';
