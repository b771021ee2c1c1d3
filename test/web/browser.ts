// Headless Chromium for the web client's tests and screenshots: the browser binary shipped in the
// @sparticuz/chromium npm package (nothing is downloaded), driven by puppeteer-core.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import type { Test } from 'tap';
import { endWithTestProcess, freePort, startServer, type TestServer } from '../helpers/server';

// The package is ESM-typed with a CommonJS build beside it, which this CommonJS code loads.
interface ChromiumPackage {
  readonly args: string[];
  executablePath(input?: string): Promise<string>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const chromium = require('@sparticuz/chromium') as ChromiumPackage;

/** Every wait in a browser test is bounded by this, so a broken screen fails instead of hanging. */
export const STEP_TIMEOUT_MS = 15_000;

const packageRoot = join(dirname(require.resolve('@sparticuz/chromium')), '..', '..');
const chromiumVersion = (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The browser binary, unpacked once into a directory of its own. The package unpacks into the
 * temporary directory's top level and takes any `chromium` file there as already unpacked, which
 * breaks when two test files start at once (one would run a half-written binary) or another
 * version unpacked there before. So: a directory per version, a lock directory while unpacking,
 * and a marker once it is complete.
 */
async function chromiumPath(): Promise<string> {
  const dir = join(tmpdir(), `perch-chromium-${chromiumVersion}`);
  const ready = join(dir, '.complete');
  const lock = `${dir}.lock`;
  const deadline = Date.now() + 120_000;
  while (!existsSync(ready)) {
    try {
      mkdirSync(lock);
    } catch {
      // Unpacking takes seconds; a lock this old was left by a process that died meanwhile.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 120_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Gone meanwhile.
      }
      if (Date.now() > deadline) throw new Error(`gave up waiting for ${lock}`);
      await sleep(200);
      continue;
    }
    try {
      if (!existsSync(ready)) {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        // The package unpacks into os.tmpdir(), which reads TMPDIR at each call; every path it
        // unpacks to is taken before its first await.
        const before = process.env.TMPDIR;
        process.env.TMPDIR = dir;
        let unpacked: Promise<string>;
        try {
          unpacked = chromium.executablePath();
        } finally {
          if (before === undefined) delete process.env.TMPDIR;
          else process.env.TMPDIR = before;
        }
        const path = await unpacked;
        if (path !== join(dir, 'chromium')) throw new Error(`chromium unpacked to ${path}, not into ${dir}`);
        writeFileSync(ready, '');
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return join(dir, 'chromium');
}

// The package's flags, less the two that switch off web security (tests must see the same-origin
// rules and the Content-Security-Policy as a person's browser applies them), --single-process
// (made for AWS Lambda; with it, a tab in a second browser context closes the browser, and tests
// need one context per person) and the ones that draw through SwiftShader, OpenGL emulated on the
// CPU (no test draws with WebGL; Chromium's software compositor paints the same pages for much
// less CPU, which the suite, run on every core at once, is short of), plus what keeps Chromium
// from reaching out to the network, which this machine does not have.
const DROPPED = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--single-process',
  '--use-gl=angle',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--in-process-gpu',
  '--ignore-gpu-blocklist',
]);
// A locale of its own too: under LANG=C this Chromium's default locale is "en-US@posix", which its
// Intl refuses (new Intl.DateTimeFormat() throws), as no person's browser would.
const EXTRA = ['--disable-gpu', '--lang=en-US', '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-default-apps'];

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromiumPath();
  const args = [...chromium.args.filter((a) => !DROPPED.has(a)), ...EXTRA];
  const browser = await puppeteer.launch({
    executablePath,
    args: [...new Set(args)],
    headless: 'shell',
    protocolTimeout: 60_000,
    env: { ...process.env, LANG: 'en_US.UTF-8', TZ: process.env.TZ ?? 'UTC' },
  });
  // puppeteer closes the browser when the test process exits or gets SIGTERM, SIGINT or SIGHUP,
  // but not on the SIGALRM that tap sends a test file past its timeout: the servers' helper does.
  const child = browser.process();
  if (child) endWithTestProcess(child);
  return browser;
}

export interface AppPage {
  page: Page;
  /** Uncaught errors and Content-Security-Policy violations seen by the page. */
  problems: string[];
  /** The page's last requests, answers, navigations and console lines, for a failed test's output. */
  recent: string[];
}

const RECENT_EVENTS = 60;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 360, height: 740, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** A new tab with the given viewport, recording script errors and CSP violations. */
export async function newAppPage(browser: Browser, viewport: { width: number; height: number; isMobile?: boolean; hasTouch?: boolean; deviceScaleFactor?: number } = DESKTOP): Promise<AppPage> {
  const page = await browser.newPage();
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  page.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  await page.setViewport(viewport);
  const problems: string[] = [];
  const recent: string[] = [];
  const opened = Date.now();
  const record = (event: string) => {
    // One line each, so that no line of a console message can read as TAP when printed.
    recent.push(`+${Date.now() - opened} ms ${event.replace(/\s*\n\s*/g, ' ')}`);
    if (recent.length > RECENT_EVENTS) recent.shift();
  };
  const where = (url: string) => (url.startsWith('data:') ? 'data:…' : url.replace(/^https?:\/\/[^/]+/, ''));
  page.on('pageerror', (err) => {
    problems.push(`page error: ${(err as Error).message ?? String(err)}`);
    record(`page error: ${(err as Error).message ?? String(err)}`);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' && msg.text().startsWith('csp:')) problems.push(msg.text());
    record(`console.${msg.type()}: ${msg.text()}`);
  });
  page.on('request', (r) => record(`${r.method()} ${where(r.url())}`));
  page.on('response', (r) => record(`${r.status()} ← ${r.request().method()} ${where(r.url())}`));
  page.on('requestfailed', (r) => record(`failed: ${r.method()} ${where(r.url())} (${r.failure()?.errorText ?? 'no reason'})`));
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) record(`at ${where(f.url())}`);
  });
  // Runs before the page's own scripts (and, injected by the browser, is not itself subject to
  // the page's policy): every violation the policy reports becomes a console error.
  // (Functions run in the page are typed loosely: the project compiles without the DOM library.)
  await page.evaluateOnNewDocument(() => {
    (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) => {
      console.error(`csp: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  return { page, problems, recent };
}

/**
 * Prints what the page shows and what it last did when `t` has failed. A browser step that times
 * out says only what it waited for; this says what was there instead (an error on the screen, a
 * request that was never answered), which is what a failure on a loaded CI machine needs.
 */
export async function reportIfFailed(t: Test, app: AppPage): Promise<void> {
  if (t.passing() || app.page.isClosed()) return;
  let shown: string;
  try {
    shown = String(await app.page.evaluate('document.body.innerText')).replace(/\s*\n\s*/g, ' | ').slice(0, 1000);
  } catch (err) {
    shown = `(not readable: ${(err as Error).message})`;
  }
  // On stdout, where the reporter shows what is not TAP (it does not show a test's stderr); every
  // line starts with "page" so that none can be read as TAP.
  const lines = [`page of the failed test "${t.name}": ${app.page.url()}`, `page shows: ${shown}`, ...app.recent.map((e) => `page event ${e}`)];
  process.stdout.write(lines.join('\n') + '\n');
}

/** reportIfFailed when `t` ends; call it after the teardown that closes the page's context. */
export function reportOnFailure(t: Test, app: AppPage): void {
  t.teardown(() => reportIfFailed(t, app));
}

let axeSource: string | null = null;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which the page's policy
 * does not govern) and answers the violations of impact "serious" or "critical".
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  const all = (await page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const result = await axe.run((globalThis as any).document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
  })) as AxeViolation[];
  return all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Types the key into the sign-in form and waits for the signed-in shell (or the error). */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.waitForSelector('#api-key');
  await page.type('#api-key', key);
  await page.click('form button[type="submit"]');
}

/** The trimmed text of the first element matching `selector`, once one exists. */
export async function textOf(page: Page, selector: string): Promise<string> {
  const el = await page.waitForSelector(selector);
  return ((await el!.evaluate((e) => e.textContent)) ?? '').trim().replace(/\s+/g, ' ');
}

/**
 * The accessible names of the elements matching `selector`, in document order, as the browser
 * computes them for assistive technology (aria-labelledby, aria-label, then the content).
 */
export async function accessibleNames(page: Page, selector: string): Promise<string[]> {
  const names: string[] = [];
  for (const el of await page.$$(selector)) {
    const node = await page.accessibility.snapshot({ root: el, interestingOnly: false });
    names.push(node?.name ?? '');
  }
  return names;
}

/** Waits until `fn` (run in the page) is truthy, bounded by the step timeout. */
export async function waitInPage(page: Page, fn: string, timeout = STEP_TIMEOUT_MS): Promise<void> {
  await page.waitForFunction(fn, { timeout });
}

/**
 * Sets a form field's value as typing or deleting would: with an input event. The app's fields are
 * controlled (their value lives in the screen's state), so a value set without one is put back
 * at the screen's next render, which a socket message can cause at any moment.
 */
export async function setValue(page: Page, selector: string, value: string): Promise<void> {
  await page.waitForSelector(selector);
  await page.$eval(
    selector,
    (el: any, v: string) => {
      el.value = v;
      el.dispatchEvent(new (globalThis as any).Event('input', { bubbles: true }));
    },
    value,
  );
}

/** Clicks the first button or link whose text is `text` exactly (after trimming). */
export async function clickText(page: Page, selector: string, text: string): Promise<void> {
  const handle = await page.waitForFunction(
    (sel: string, t: string) => [...(globalThis as any).document.querySelectorAll(sel)].find((e: any) => (e.textContent ?? '').trim().replace(/\s+/g, ' ') === t) ?? null,
    { timeout: STEP_TIMEOUT_MS },
    selector,
    text,
  );
  await (handle as any).click();
}

/** A real PNG (decodable, so a page can show it), each pixel's colour from `pixel`. */
export function png(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const { crc32, deflateSync } = require('node:zlib') as typeof import('node:zlib');
  const row = 1 + width * 3;
  const pixels = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) pixels.set(pixel(x, y), y * row + 1 + x * 3);
  }
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG of one colour, for upload tests. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  return png(width, height, () => rgb);
}

/** Whether the page scrolls sideways (something wider than the viewport). */
export async function overflowsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const d = (globalThis as any).document.documentElement;
    return d.scrollWidth > d.clientWidth;
  });
}

/** Whether the focused element matches `selector`. */
export function focused(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel: string) => (globalThis as any).document.activeElement?.matches(sel) ?? false, selector);
}

/** The `aria-disabled` attribute of the element `selector` finds (null without one). */
export function ariaDisabled(page: Page, selector: string): Promise<string | null> {
  return page.$eval(selector, (el: any) => el.getAttribute('aria-disabled'));
}

/**
 * Presses Tab until the focused element matches `selector` (at most `limit` times), as a keyboard
 * user would; answers how many presses it took, or throws.
 */
export async function tabTo(page: Page, selector: string, limit = 40): Promise<number> {
  for (let i = 1; i <= limit; i++) {
    await page.keyboard.press('Tab');
    if (await focused(page, selector)) return i;
  }
  throw new Error(`${selector} was not reached in ${limit} presses of Tab`);
}

/** The focused element's outline style and width, to check that focus is visible. */
export async function focusOutline(page: Page): Promise<{ style: string; width: number }> {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    const cs = (globalThis as any).getComputedStyle(el);
    return { style: cs.outlineStyle, width: parseFloat(cs.outlineWidth) };
  });
}

/**
 * A server whose public origin is its own address, so that the short URLs the app shows lead to
 * it and a browser can follow them.
 */
export async function startServerAtOwnOrigin(config: Record<string, any> = {}): Promise<TestServer> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      return await startServer({ port, config: { ...config, server: { ...(config.server ?? {}), public_origin: `http://127.0.0.1:${port}` } } });
    } catch (err) {
      // Taken meanwhile by somebody else: another port.
      lastError = err;
    }
  }
  throw lastError;
}

/** The User-Agent of a person's Chromium (headless Chromium's own names it as a bot, rightly). */
export const PERSON_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36';

/**
 * Answers requests to `https://example.*` targets in this tab with a small page of its own: this
 * machine has no network, and a followed short link must land somewhere. Everything else passes.
 */
export async function answerExampleTargets(page: Page): Promise<void> {
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.isInterceptResolutionHandled()) return;
    if (/^https:\/\/example\.(com|org|net)\//.test(req.url())) {
      void req.respond({ status: 200, contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>target</title><h1>The target</h1>' });
    } else {
      void req.continue();
    }
  });
}

/** Waits until `done()` holds, looking every 20 ms; past the step timeout, fails saying `late()`. */
async function pollUntil(done: () => boolean, late: () => string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(late());
    await sleep(20);
  }
}

export interface HeldRequests {
  /** Resolves once `n` matching requests are being held (bounded by the step timeout). */
  waitForHeld(n?: number): Promise<void>;
  /** How many matching requests the tab has sent since holding began, held or let through. */
  seen(): number;
  /** Lets the held requests go on, and every one after them; the tab stops intercepting. */
  release(): Promise<void>;
}

/** Whether `req` is of `method` with a path `path` matches. */
function requestMatches(req: HTTPRequest, method: string, path: RegExp): boolean {
  return req.method() === method && path.test(new URL(req.url()).pathname);
}

/**
 * Intercepts this tab's requests: the first of `method` whose path matches `path` goes to `onFirst`,
 * with `stop`, which ends the interception; every other request goes on to the server.
 */
async function interceptFirst(
  page: Page,
  method: string,
  path: RegExp,
  onFirst: (req: HTTPRequest, stop: () => Promise<void>) => void,
): Promise<{ stop(): Promise<void> }> {
  let taken = false;
  const onRequest = (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    if (!taken && requestMatches(req, method, path)) {
      taken = true;
      onFirst(req, stop);
    } else {
      req.continue().catch(() => undefined);
    }
  };
  const stop = async () => {
    await page.setRequestInterception(false);
    page.off('request', onRequest);
  };
  await page.setRequestInterception(true);
  page.on('request', onRequest);
  return { stop };
}

/**
 * Holds this tab's requests of `method` whose path matches `path` until `release`, so a test can
 * look at the page while a request is on its way (a busy button, its focus) without depending on
 * how fast the server answers. Everything else passes. Not for a tab that intercepts otherwise
 * (answerExampleTargets): the two would both resolve the same request.
 */
export async function holdRequests(page: Page, method: string, path: RegExp): Promise<HeldRequests> {
  const held: HTTPRequest[] = [];
  let seen = 0;
  let holding = true;
  const matches = (req: HTTPRequest) => requestMatches(req, method, path);
  const onRequest = (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    if (matches(req)) seen++;
    if (holding && matches(req)) held.push(req);
    // Once interception is off (after release) a request has nothing to continue: it goes on anyway.
    else req.continue().catch(() => undefined);
  };
  await page.setRequestInterception(true);
  page.on('request', onRequest);
  return {
    async waitForHeld(n = 1) {
      await pollUntil(() => held.length >= n, () => `${n} ${method} request(s) to ${path} were not sent within ${STEP_TIMEOUT_MS} ms (held ${held.length})`);
    },
    seen: () => seen,
    async release() {
      holding = false;
      for (const req of held.splice(0)) await req.continue();
      await page.setRequestInterception(false);
      page.off('request', onRequest);
    },
  };
}

/**
 * Holds this tab's requests of `method` to `path` (holdRequests), then presses Enter on the
 * control `selector` from the keyboard, and resolves once its request is being held: the moment a
 * test looks at a busy control, its focus, and what a second press does.
 */
export async function pressHolding(page: Page, selector: string, method: string, path: RegExp): Promise<HeldRequests> {
  const held = await holdRequests(page, method, path);
  await page.focus(selector);
  await page.keyboard.press('Enter');
  await held.waitForHeld();
  return held;
}

/**
 * Answers this tab's next request of `method` whose path matches `path` with `answer` instead of
 * the server (a failure the server cannot be made to give on demand, a 500); every other request,
 * and every one after, goes to the server. Resolves once that request was answered. Not for a tab
 * that intercepts otherwise (see holdRequests).
 */
export async function answerOnce(
  page: Page,
  method: string,
  path: RegExp,
  answer: { status: number; headers?: Record<string, string>; json: unknown },
): Promise<{ answered: Promise<void> }> {
  let answered!: () => void;
  const promise = new Promise<void>((resolve) => (answered = resolve));
  await interceptFirst(page, method, path, (req, stop) => {
    req
      .respond({ status: answer.status, headers: answer.headers, contentType: 'application/json', body: JSON.stringify(answer.json) })
      .then(async () => {
        await stop();
        answered();
      }, answered);
  });
  return { answered: promise };
}

export interface LateAnswer {
  /** Resolves once the server has answered the request (its answer is then kept from the tab). */
  fetched: Promise<void>;
  /** Gives the tab the answer the server gave when the request was sent, and stops intercepting. */
  release(): Promise<void>;
}

/**
 * Sends this tab's next request of `method` whose path matches `path` to the server at once, and
 * keeps the server's answer from the tab until `release`: an answer the server made before what
 * the test does next, arriving after it, as a slow network delivers it. Every other request goes
 * on. Not for a tab that intercepts otherwise (see holdRequests).
 */
export async function answerLate(page: Page, method: string, path: RegExp): Promise<LateAnswer> {
  let taken: HTTPRequest | null = null;
  let answer: { status: number; contentType: string; body: Buffer } | null = null;
  let fetched!: () => void;
  let failed!: (err: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    fetched = resolve;
    failed = reject;
  });
  const interception = await interceptFirst(page, method, path, (req) => {
    taken = req;
    fetch(req.url(), { method, headers: req.headers(), body: req.postData() }).then(async (r) => {
      answer = { status: r.status, contentType: r.headers.get('content-type') ?? 'application/json', body: Buffer.from(await r.arrayBuffer()) };
      fetched();
    }, failed);
  });
  return {
    fetched: promise,
    async release() {
      await promise;
      await taken!.respond({ status: answer!.status, contentType: answer!.contentType, body: answer!.body });
      await interception.stop();
    },
  };
}

export interface AnsweredRequests {
  /** Resolves once `n` matching requests were answered (bounded by the step timeout). */
  waitForAnswered(n: number): Promise<void>;
}

/**
 * Answers every request of `method` whose path matches `path` in this tab with `answer`, for the
 * tab's life: for a failure that must stay a failure whichever part of the app sends the request,
 * and however many times. Everything else goes to the server. Not for a tab that intercepts
 * otherwise (see holdRequests).
 */
export async function answerEvery(
  page: Page,
  method: string,
  path: RegExp,
  answer: { status: number; json: unknown },
): Promise<AnsweredRequests> {
  let answered = 0;
  let failure: unknown = null;
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.isInterceptResolutionHandled()) return;
    if (requestMatches(req, method, path)) {
      req.respond({ status: answer.status, contentType: 'application/json', body: JSON.stringify(answer.json) }).then(
        () => void answered++,
        (err: unknown) => void (failure ??= err),
      );
    } else {
      req.continue().catch(() => undefined);
    }
  });
  return {
    async waitForAnswered(n) {
      await pollUntil(
        () => {
          if (failure) throw new Error(`answering a ${method} request to ${path} failed: ${(failure as Error).message ?? String(failure)}`);
          return answered >= n;
        },
        () => `${n} ${method} request(s) to ${path} were not answered within ${STEP_TIMEOUT_MS} ms (answered ${answered})`,
      );
    },
  };
}

/** Lets a browser context save downloads into `dir` (headless Chromium refuses them otherwise). */
export async function allowDownloads(browser: Browser, context: { id?: string }, dir: string): Promise<void> {
  const cdp = await browser.target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, browserContextId: context.id, eventsEnabled: true } as any);
}

/** Waits (bounded) until a file of `dir` whose name matches `name` is complete; answers its path. */
export async function downloaded(dir: string, name: RegExp, timeout = STEP_TIMEOUT_MS): Promise<string> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { readdirSync } = require('node:fs') as typeof import('node:fs');
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const done = readdirSync(dir).find((f) => name.test(f) && !f.endsWith('.crdownload'));
    if (done) return join(dir, done);
    await sleep(100);
  }
  throw new Error(`no download matching ${name} in ${dir} after ${timeout} ms`);
}

/** The WebSocket traffic a tab sees, from the DevTools protocol: the sockets it opened and what they received. */
export async function watchWebSockets(page: Page): Promise<{ urls: string[]; received: string[] }> {
  const seen = { urls: [] as string[], received: [] as string[] };
  const cdp = await page.createCDPSession();
  await cdp.send('Network.enable');
  cdp.on('Network.webSocketCreated', (e: any) => seen.urls.push(e.url));
  cdp.on('Network.webSocketFrameReceived', (e: any) => seen.received.push(e.response.payloadData));
  return seen;
}
