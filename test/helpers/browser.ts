// The headless browser of the browser tests: the Chromium build the @sparticuz/chromium package
// ships (unpacked into the temp directory on first use), so `npm install` brings everything the
// tests need. FLEETQ_CHROMIUM names another executable (e.g. a system /usr/bin/chromium).
import chromiumPackage from "@sparticuz/chromium";

/** Flags for a headless run on a machine with no network beyond loopback: nothing phones home. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--no-zygote",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function chromiumExecutable(): Promise<string> {
  return process.env.FLEETQ_CHROMIUM || (await chromiumPackage.executablePath());
}
