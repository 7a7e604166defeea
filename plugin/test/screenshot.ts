/**
 * Screenshots of what the tests rendered: the element's DOM, as the plugin built it, in headless
 * Chromium (Debian's /usr/bin/chromium driven by playwright-core, as web-tests/ does) with the
 * plugin's styles.css over a small Obsidian-like base stylesheet. PNGs go to SCREENSHOTS.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM, PLUGIN_DIR, SCREENSHOTS } from "./paths";

let browser: Browser | null = null;

export async function closeBrowser(): Promise<void> {
  await browser?.close();
  browser = null;
}

/** Saves `SCREENSHOTS/<name>.png` of `el` (serialized with its subtree). */
export async function screenshot(name: string, el: Element): Promise<string> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM} for the screenshots: install Debian's chromium package, or set CHROMIUM`);
  }
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 900, height: 700 }, deviceScaleFactor: 1 });
  try {
    const css = readFileSync(join(PLUGIN_DIR, "test/obsidian-base.css"), "utf8") + readFileSync(join(PLUGIN_DIR, "styles.css"), "utf8");
    // Form values are properties, not attributes: copy them so that the picture shows them (a
    // checkbox's as `checked`, a select's as its chosen option's `selected`).
    const copy = el.cloneNode(true) as Element;
    const originals = [...el.querySelectorAll("input, textarea")] as (HTMLInputElement | HTMLTextAreaElement)[];
    [...copy.querySelectorAll("input, textarea")].forEach((field, i) => {
      const original = originals[i];
      const value = original?.value ?? "";
      if (field instanceof HTMLTextAreaElement) field.textContent = value;
      else field.setAttribute("value", value);
      if (original instanceof HTMLInputElement) field.toggleAttribute("checked", original.checked);
    });
    const selects = [...el.querySelectorAll("select")];
    [...copy.querySelectorAll("select")].forEach((select, i) => {
      const value = selects[i]?.value;
      for (const option of select.querySelectorAll("option")) option.toggleAttribute("selected", option.value === value);
    });
    const html = new XMLSerializer().serializeToString(copy);
    await page.setContent(`<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body class="theme-light"><div class="shot">${html}</div></body></html>`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = join(SCREENSHOTS, `${name}.png`);
    await page.locator(".shot").screenshot({ path });
    return path;
  } finally {
    await page.close();
  }
}
