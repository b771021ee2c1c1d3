// Bot detection by User-Agent: crawlers, link-preview fetchers (chat apps and social networks
// unfurling a pasted link) and HTTP libraries. A click from one of these is counted as a bot,
// never as a click. An empty User-Agent counts as a person (see docs/links.md).

/** Lower-case fragments; a User-Agent containing any of them is a bot. */
export const BOT_UA_FRAGMENTS: readonly string[] = [
  'bot', 'crawler', 'spider', 'slurp', 'crawl',
  'facebookexternalhit', 'facebookcatalog', 'meta-externalagent', 'embedly', 'quora link preview',
  'whatsapp', 'telegrambot', 'slackbot', 'slack-imgproxy', 'discordbot', 'twitterbot', 'linkedinbot',
  'skypeuripreview', 'vkshare', 'pinterest', 'redditbot', 'applebot', 'bingpreview', 'google-inspectiontool',
  'googleother', 'mastodon', 'iframely', 'outbrain', 'nuzzel', 'bitlybot', 'tumblr', 'snapchat', 'viber',
  'headlesschrome', 'lighthouse', 'preview', 'curl/', 'wget/', 'python-requests', 'python-urllib',
  'go-http-client', 'okhttp', 'java/', 'libwww-perl', 'httpclient', 'axios/', 'node-fetch', 'undici',
];

export function isBotUserAgent(userAgent: string): boolean {
  if (userAgent === '') return false;
  const ua = userAgent.toLowerCase();
  for (let i = 0; i < BOT_UA_FRAGMENTS.length; i++) if (ua.indexOf(BOT_UA_FRAGMENTS[i]) !== -1) return true;
  return false;
}

/**
 * A per-thread memo of isBotUserAgent: User-Agent strings repeat heavily, and a Map lookup is
 * cheaper than scanning the fragment list. Bounded: cleared when it reaches `max` entries.
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
