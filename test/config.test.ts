// The configuration keys this file's checks cover: the data directory, the public origin, trusted
// proxies, CORS origins and the log settings.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config';

const dir = mkdtempSync(join(tmpdir(), 'perch-config-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, value: unknown): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
  return path;
}

t.test('defaults', async (t) => {
  const c = loadConfig({ env: {} });
  t.equal(c.data, './data');
  t.equal(c.server.public_origin, '', 'derived from the listening address unless set');
  t.same(c.server.trusted_proxies, []);
  t.same(c.server.cors_origins, []);
  t.same(c.log, { level: 'info', format: 'auto', access: false });
});

t.test('data: flag over PERCH_DATA over the file; a file\'s relative path is relative to the file', async (t) => {
  const f = file('etc/perch.json', { data: 'state' });
  t.equal(loadConfig({ env: {}, file: f }).data, join(dir, 'etc', 'state'));
  t.equal(loadConfig({ env: {}, file: file('abs.json', { data: '/var/lib/perch' }) }).data, '/var/lib/perch');
  t.equal(loadConfig({ env: { PERCH_DATA: 'from-env' }, file: f }).data, 'from-env', 'the variable as given (relative to the working directory)');
  t.equal(loadConfig({ env: { PERCH_DATA: 'from-env' }, file: f, overrides: { data: '/from/flag' } }).data, '/from/flag');
  t.throws(() => loadConfig({ env: {}, file: file('empty.json', { data: '' }) }), /invalid configuration key data/);
});

t.test('public_origin: "" or an http(s) origin', async (t) => {
  t.equal(loadConfig({ env: { PERCH_SERVER_PUBLIC_ORIGIN: 'https://short.example' } }).server.public_origin, 'https://short.example');
  for (const bad of ['short.example', 'https://short.example/s/', 'ftp://short.example']) {
    const err = (() => {
      try {
        loadConfig({ env: { PERCH_SERVER_PUBLIC_ORIGIN: bad } });
      } catch (e) {
        return e;
      }
    })();
    t.ok(err instanceof ConfigError, bad);
    t.match((err as Error).message, /^invalid configuration key server\.public_origin: expected an http\(s\) origin/);
  }
});

t.test('media.unposted_ttl_seconds: a day by default, 0 for ever, at most ten years', async (t) => {
  t.equal(loadConfig({ env: {} }).media.unposted_ttl_seconds, 86_400);
  t.equal(loadConfig({ env: { PERCH_MEDIA_UNPOSTED_TTL_SECONDS: '0' } }).media.unposted_ttl_seconds, 0);
  t.equal(loadConfig({ env: { PERCH_MEDIA_UNPOSTED_TTL_SECONDS: '315360000' } }).media.unposted_ttl_seconds, 315_360_000);
  t.throws(() => loadConfig({ env: { PERCH_MEDIA_UNPOSTED_TTL_SECONDS: '315360001' } }), /^invalid configuration key media\.unposted_ttl_seconds/);
  t.throws(() => loadConfig({ env: { PERCH_MEDIA_UNPOSTED_TTL_SECONDS: '-1' } }), /^invalid configuration key media\.unposted_ttl_seconds/);
});

t.test('trusted_proxies and cors_origins are checked entry by entry', async (t) => {
  t.same(loadConfig({ env: { PERCH_SERVER_TRUSTED_PROXIES: '["10.0.0.0/8","::1","192.168.0.10"]' } }).server.trusted_proxies, ['10.0.0.0/8', '::1', '192.168.0.10']);
  t.throws(() => loadConfig({ env: { PERCH_SERVER_TRUSTED_PROXIES: '["10.0.0.0/8","proxy.local"]' } }), /^invalid configuration key server\.trusted_proxies\.1: expected an IP address or a CIDR range/);
  t.throws(() => loadConfig({ env: { PERCH_SERVER_TRUSTED_PROXIES: '["10.0.0.0/99"]' } }), /server\.trusted_proxies\.0/);
  t.same(loadConfig({ env: { PERCH_SERVER_CORS_ORIGINS: '["*"]' } }).server.cors_origins, ['*']);
  t.throws(() => loadConfig({ env: { PERCH_SERVER_CORS_ORIGINS: '["https://app.example/path"]' } }), /^invalid configuration key server\.cors_origins\.0: expected "\*" or an http\(s\) origin/);
});

t.test('log.format and log.access', async (t) => {
  t.equal(loadConfig({ env: { PERCH_LOG_FORMAT: 'human' } }).log.format, 'human');
  t.equal(loadConfig({ env: { PERCH_LOG_ACCESS: 'true' } }).log.access, true);
  t.throws(() => loadConfig({ env: { PERCH_LOG_FORMAT: 'xml' } }), /invalid configuration key log\.format/);
});

t.test('a wrong value in the file or the environment is refused even where a flag overrides it', async (t) => {
  const badPort = file('bad-port.json', { server: { port: 'abc' } });
  t.throws(() => loadConfig({ env: {}, file: badPort }), new ConfigError('invalid configuration key server.port: Invalid input: expected number, received string'));
  t.throws(() => loadConfig({ env: {}, file: badPort, overrides: { server: { port: 0 } } }), /invalid configuration key server\.port/, 'with --port');
  const badThreads = file('bad-threads.json', { server: { threads: 0 } });
  t.throws(() => loadConfig({ env: {}, file: badThreads, overrides: { server: { threads: 1 } } }), /invalid configuration key server\.threads/, 'with --threads');
  t.throws(() => loadConfig({ env: { PERCH_SERVER_PORT: '70000' }, overrides: { server: { port: 0 } } }), /invalid configuration key server\.port/, 'from the environment, with --port');
  t.throws(() => loadConfig({ env: {}, file: file('bad-data.json', { data: 5 }), overrides: { data: '/from/flag' } }), /invalid configuration key data/, 'with --data');
  t.equal(loadConfig({ env: {}, file: file('good.json', { server: { port: 9000 } }), overrides: { server: { port: 0 } } }).server.port, 0, 'the flag wins over a good value');
});

t.test('a config file must hold a JSON object', async (t) => {
  for (const [name, value] of [['array.json', [1, 2]], ['number.json', 5], ['null.json', null], ['string.json', 'x']] as const) {
    const path = file(name, value);
    t.throws(() => loadConfig({ env: {}, file: path }), new ConfigError(`config file ${path} must hold a JSON object, like config/default.json`), name);
  }
});

t.test('links.pool_low_water may not exceed links.pool_target', async (t) => {
  t.same(pick(loadConfig({ env: {}, overrides: { links: { pool_target: 300, pool_low_water: 300 } } })), [300, 300], 'equal is fine');
  t.same(pick(loadConfig({ env: { PERCH_LINKS_POOL_TARGET: '300', PERCH_LINKS_POOL_LOW_WATER: '0' } })), [300, 0]);
  t.throws(
    () => loadConfig({ env: {}, file: file('low-water.json', { links: { pool_target: 300, pool_low_water: 301 } }) }),
    new ConfigError('invalid configuration key links.pool_low_water: must not be greater than links.pool_target (300), but is 301'),
  );
  t.throws(
    () => loadConfig({ env: { PERCH_LINKS_POOL_TARGET: '1000' } }),
    new ConfigError('invalid configuration key links.pool_low_water: must not be greater than links.pool_target (1000), but is 2500'),
    'a target lowered below the default mark',
  );
  t.throws(
    () => loadConfig({ env: {}, file: file('low-water-type.json', { links: { pool_target: 'x', pool_low_water: 301 } }) }),
    /^invalid configuration key links\.pool_target: /,
    'a wrong type is named first',
  );
  function pick(c: ReturnType<typeof loadConfig>): [number, number] {
    return [c.links.pool_target, c.links.pool_low_water];
  }
});

t.test('server.host: an IP address or a host name', async (t) => {
  for (const good of ['127.0.0.1', '0.0.0.0', '::', '::1', 'fe80::1', 'localhost', 'perch.internal', 'a-b.example', 'x'.repeat(63), 'localhost.', 'perch.internal.']) {
    t.equal(loadConfig({ env: { PERCH_SERVER_HOST: good } }).server.host, good, good);
  }
  for (const bad of ['', ' ', 'not a host!!', '[::1]', 'host:8080', '-lead.example', 'trail-.example', 'a..b', 'x'.repeat(64), 'http://localhost', 'bücher.example', '256.1.1.1', '1.2.3', 'a..']) {
    t.throws(
      () => loadConfig({ env: { PERCH_SERVER_HOST: bad } }),
      new ConfigError('invalid configuration key server.host: expected an IP address such as 127.0.0.1 or ::, or a host name such as localhost'),
      JSON.stringify(bad),
    );
  }
});

t.test('links.blocklist: every entry must name a host', async (t) => {
  const good = ['evil.example', '*.evil.example', '.evil.example', 'Evil.Example.', 'https://evil.example/some/path', 'bücher.example', '10.0.0.1', '::1', '[2001:db8::1]'];
  t.same(loadConfig({ env: {}, file: file('blocklist.json', { links: { blocklist: good } }) }).links.blocklist, good, 'kept as written');
  for (const [i, bad] of ['', ' ', '*', '*.', '.', 'https://', 'evil.example/path', 'evil.example:8080', 'evil example', 'user@evil.example', 'x..y'].entries()) {
    t.throws(
      () => loadConfig({ env: { PERCH_LINKS_BLOCKLIST: JSON.stringify(['evil.example', bad]) } }),
      new ConfigError('invalid configuration key links.blocklist.1: names no host: expected a host name such as evil.example (or *.evil.example, or a URL such as https://evil.example/)'),
      `${i}: ${JSON.stringify(bad)}`,
    );
  }
});
