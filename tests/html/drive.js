// drive.js --
//
//	Drives an exported tclprof flame graph in headless chromium
//	(Debian's /usr/bin/chromium through playwright-core) and prints one
//	JSON object with what it observed, for tests/html.test to check:
//	the page rendered, a click on a named frame zoomed into it, the reset
//	button unzoomed, a search for a named frame matched samples, the
//	icicle toggle kept the frame drawn. It saves a screenshot.
//
//	Usage: node drive.js page.html frameName screenshot.png
//
// Copyright (c) 2026 The tclprof authors. See the file LICENSE.

"use strict";
const { chromium } = require("playwright-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

async function main() {
  const [page0, frame, shot] = process.argv.slice(2);
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), "tclprof-chromium-"));
  const out = { errors: [], requests: [] };
  // A fresh profile directory each run (launchPersistentContext is how
  // playwright passes --user-data-dir).
  const browser = await chromium.launchPersistentContext(userDir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1200, height: 800 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
      "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => out.errors.push(String(e)));
    page.on("console", (m) => { if (m.type() === "error") out.errors.push(m.text()); });
    page.on("request", (r) => { if (!r.url().startsWith("file:")) out.requests.push(r.url()); });
    const t0 = Date.now();
    await page.goto("file://" + path.resolve(page0));
    await page.waitForSelector("body[data-ready='1']", { timeout: 20000 });
    out.loadMs = Date.now() - t0;
    out.total = await page.evaluate(() => window.tclprof.total());
    out.drawn = await page.evaluate(() => window.tclprof.drawn());
    out.pruned = await page.evaluate(() => window.tclprof.pruned());
    out.prunedText = await page.textContent("#pruned");
    out.summary = await page.textContent("#summary");
    out.threadBoxVisible = await page.isVisible("#threadbox");
    const box = await page.evaluate((n) => window.tclprof.find(n), frame);
    out.found = box;
    if (box) {
      await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2);
      out.tooltip = await page.textContent("#tooltip");
      await page.mouse.click(box.x + box.w / 2, box.y + box.h / 2);
      out.zoomed = await page.evaluate(() => window.tclprof.zoomed());
      const after = await page.evaluate((n) => window.tclprof.find(n), frame);
      out.zoomedWidth = after ? after.w : 0;
      await page.click("#reset");
      out.afterReset = await page.evaluate(() => window.tclprof.zoomed());
    }
    await page.fill("#search", frame.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    await page.click("#searchbtn");
    out.matchedSamples = await page.evaluate(() => window.tclprof.matchedSamples());
    out.matchedText = await page.textContent("#matched");
    await page.click("#toggle");
    out.afterToggle = await page.evaluate((n) => window.tclprof.find(n), frame);
    await page.click("#toggle");
    if (shot) await page.screenshot({ path: shot, fullPage: true });
  } finally {
    await browser.close();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => { process.stderr.write(String(e.stack || e) + "\n"); process.exit(1); });
