// What a User-Agent says about a click: whether a bot made it (crawlers, link-preview fetchers,
// HTTP libraries, feed readers, monitors), and the browser and OS families of a person's click.
// Bot detection is the `isbot` package's pattern list, chosen over the hand-written list perch
// had before by comparing both on a fixture of real User-Agent strings (docs/links.md, "Bots").
// Families come from `ua-parser-js`; only the family name is ever stored, never the User-Agent.
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';

/** A person's click whose User-Agent names no known browser or OS. */
export const OTHER_FAMILY = 'Other';

/** Whether a User-Agent is a bot's. An empty one counts as a person (see docs/links.md). */
export function isBotUserAgent(userAgent: string): boolean {
  return userAgent !== '' && isbot(userAgent);
}

/**
 * A per-thread memo of isBotUserAgent for the redirect path: User-Agent strings repeat heavily,
 * and a Map lookup is much cheaper than isbot's pattern. Bounded: cleared when it reaches `max`.
 */
export class BotMemo {
  private readonly memo = new Map<string, boolean>();
  constructor(private readonly max = 2048) {}

  isBot(userAgent: string): boolean {
    const known = this.memo.get(userAgent);
    if (known !== undefined) return known;
    const bot = isBotUserAgent(userAgent);
    if (this.memo.size >= this.max) this.memo.clear();
    this.memo.set(userAgent, bot);
    return bot;
  }
}

/** The parser's names folded into one family where they only differ by device or edition. */
const BROWSER_FAMILY: Readonly<Record<string, string>> = {
  'Mobile Safari': 'Safari',
  'Mobile Chrome': 'Chrome',
  'Mobile Firefox': 'Firefox',
  'Chrome Headless': 'Chrome',
  'Chrome WebView': 'Android WebView',
  WebKit: 'WebKit',
};
const OS_FAMILY: Readonly<Record<string, string>> = {
  'Mac OS': 'macOS',
  'Chromium OS': 'ChromeOS',
  Ubuntu: 'Linux',
  Debian: 'Linux',
  Fedora: 'Linux',
  'Linux Mint': 'Linux',
  Arch: 'Linux',
  'Red Hat': 'Linux',
  SUSE: 'Linux',
  CentOS: 'Linux',
  Gentoo: 'Linux',
  Mint: 'Linux',
};

export interface UaFamilies {
  browser: string;
  os: string;
}

/** Browser and OS family of a User-Agent; OTHER_FAMILY where the parser recognises none. */
export function uaFamilies(userAgent: string): UaFamilies {
  if (userAgent === '') return { browser: OTHER_FAMILY, os: OTHER_FAMILY };
  const parser = new UAParser(userAgent);
  const browser = parser.getBrowser().name;
  const os = parser.getOS().name;
  return {
    browser: browser ? BROWSER_FAMILY[browser] ?? browser : OTHER_FAMILY,
    os: os ? OS_FAMILY[os] ?? os : OTHER_FAMILY,
  };
}

/** A bounded memo of uaFamilies, for the click drain (parsing costs far more than a lookup). */
export class FamilyMemo {
  private readonly memo = new Map<string, UaFamilies>();
  constructor(private readonly max = 4096) {}

  of(userAgent: string): UaFamilies {
    let f = this.memo.get(userAgent);
    if (f !== undefined) return f;
    f = uaFamilies(userAgent);
    if (this.memo.size >= this.max) this.memo.clear();
    this.memo.set(userAgent, f);
    return f;
  }
}
