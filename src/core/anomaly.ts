// The anomaly detector's rules, pure: given an account's recent creations, decide whether it is
// creating links abnormally (very many within seconds, or many to one registrable domain within a
// minute). Evaluated off the request path over a sliding window that ends now.

export interface Creation {
  userId: string;
  atMs: number;
  /** Registrable domain of the target. */
  domain: string;
}

export interface AnomalyThresholds {
  maxLinks: number;
  windowSeconds: number;
  maxSameDomain: number;
  domainWindowSeconds: number;
}

export interface AnomalyVerdict {
  userId: string;
  reason: string;
}

/**
 * Accounts whose creations in the window ending at `nowMs` reach a threshold. Creations at or
 * before `sinceMs(userId)` are ignored (they were already judged: a flag was raised or cleared
 * after them), so lifting a flag does not re-raise it from the same burst.
 */
export function detectAnomalies(
  creations: readonly Creation[],
  nowMs: number,
  t: AnomalyThresholds,
  sinceMs: (userId: string) => number = () => -Infinity,
): AnomalyVerdict[] {
  const linkFrom = nowMs - t.windowSeconds * 1000;
  const domainFrom = nowMs - t.domainWindowSeconds * 1000;
  const perUser = new Map<string, { links: number; domains: Map<string, number> }>();
  for (const c of creations) {
    if (c.atMs > nowMs || c.atMs <= sinceMs(c.userId)) continue;
    let u = perUser.get(c.userId);
    if (!u) perUser.set(c.userId, (u = { links: 0, domains: new Map() }));
    if (c.atMs > linkFrom) u.links++;
    if (c.atMs > domainFrom) u.domains.set(c.domain, (u.domains.get(c.domain) ?? 0) + 1);
  }
  const verdicts: AnomalyVerdict[] = [];
  for (const [userId, u] of perUser) {
    if (u.links >= t.maxLinks) {
      verdicts.push({ userId, reason: `${u.links} links within ${t.windowSeconds} s` });
      continue;
    }
    for (const [domain, n] of u.domains) {
      if (n >= t.maxSameDomain) {
        verdicts.push({ userId, reason: `${n} links to ${domain} within ${t.domainWindowSeconds} s` });
        break;
      }
    }
  }
  return verdicts;
}
