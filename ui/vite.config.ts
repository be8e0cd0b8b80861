import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { defineConfig, type Plugin } from "vite";
import react from "@vitejs/plugin-react";

// What the build is made from; tests/unit/test_ui_build.py hashes the same files the same
// way, so a page source changed without `make ui-build` fails the tests.
const SOURCES = ["index.html", "package-lock.json", "tsconfig.json", "vite.config.ts", "src"];

function files(path: string): string[] {
  return statSync(path).isDirectory()
    ? readdirSync(path).flatMap((name) => files(join(path, name)))
    : [path];
}

function sourceHash(): Plugin {
  return {
    name: "source-hash",
    generateBundle() {
      const hash = createHash("sha256");
      for (const file of SOURCES.flatMap((s) => files(s)).map((f) => relative(".", f)).sort()) {
        hash.update(file.split("\\").join("/") + "\0");
        hash.update(readFileSync(file));
        hash.update("\0");
      }
      this.emitFile({ type: "asset", fileName: "source.sha256", source: hash.digest("hex") + "\n" });
    },
  };
}

// Built into the Python package, which serves it at /ui beside the LangGraph API.
export default defineConfig({
  base: "/ui/",
  plugins: [react(), sourceHash()],
  build: {
    outDir: "../src/rat_agent/ui/dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1000,
  },
});
