#!/usr/bin/env node
// The `fleetq` command (package.json "bin"): runs src/cli/main.ts through tsx's loader, so the
// TypeScript sources are the program (no build step).
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
