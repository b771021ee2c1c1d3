// Where the server's memory goes, as /metrics and `perch status` show it: the resident set of the
// process, the V8 heap of each thread, and the LMDB environment's map, pages and file.
import t from 'tap';
import { runCli, startServer, testThreads } from '../helpers/server';
import { create } from './links-helpers';

const MIB = 1024 * 1024;

/** Every series of a metric: its labels as text ('' when none) → value. */
function series(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(name.length, at), Number(line.slice(at + 1)));
  }
  return out;
}

function one(text: string, name: string): number {
  const s = series(text, name);
  if (s.size !== 1) throw new Error(`${name}: ${s.size} series`);
  return [...s.values()][0];
}

const kindOf = (labels: string) => /kind="([^"]*)"/.exec(labels)?.[1];

t.test('/metrics: the heap of every thread by kind, the resident set, and the LMDB figures', async (t) => {
  const threads = testThreads();
  const server = await startServer();
  t.teardown(() => server.close());
  const alice = await server.keygen('alice');
  const code = await create(server, alice, 'https://example.com/memory');
  for (let i = 0; i < 20; i++) t.equal((await server.get('/' + code)).status, 302);

  const text = (await server.get('/metrics')).text;
  const used = series(text, 'perch_thread_heap_used_bytes');
  const total = series(text, 'perch_thread_heap_total_bytes');
  const kinds = [...used.keys()].map(kindOf).sort();
  const count = (k: string) => kinds.filter((x) => x === k).length;
  // With one HTTP thread, the HTTP server and the writer run on the main thread with the supervisor.
  t.equal(count('main'), threads === 1 ? 1 : 0, 'the main thread serves HTTP only when it is the only HTTP thread');
  t.equal(count('supervisor'), threads === 1 ? 0 : 1, 'the supervisor');
  t.equal(count('http'), threads === 1 ? 0 : threads, 'each HTTP thread of its own');
  t.equal(count('writer'), threads > 1 ? 1 : 0, 'the writer has a thread of its own only beside several HTTP threads');
  t.ok(count('pool') <= 3, `at most three pool threads, two prompt and one background (${count('pool')})`);
  t.equal(kinds.length, 1 + (threads > 1 ? threads + 1 : 0) + count('pool'), 'no other series');
  for (const [labels, v] of used) {
    t.ok(v > 1 * MIB && v < 2048 * MIB, `heap used ${labels}: ${v}`);
    t.ok(total.get(labels)! >= v, `heap reserved >= used for ${labels}`);
    t.match(labels, /thread="\d+"/);
  }
  t.equal(series(text, 'perch_thread_external_bytes').size, used.size, 'external memory for the same threads');

  const rss = one(text, 'perch_process_resident_bytes');
  const anon = one(text, 'perch_process_resident_anonymous_bytes');
  const file = one(text, 'perch_process_resident_file_bytes');
  const peak = one(text, 'perch_process_resident_peak_bytes');
  const heaps = [...used.values()].reduce((a, b) => a + b, 0);
  t.ok(rss > heaps, `the resident set (${rss}) holds more than the heaps in use (${heaps})`);
  t.ok(rss < 4096 * MIB, 'and is not absurd');
  t.ok(anon > 0 && file > 0, 'anonymous and file-backed parts');
  // Read one after the other, so allow for a little movement in between.
  t.ok(anon + file <= rss * 1.1, `anonymous ${anon} + file ${file} within the total ${rss}`);
  t.ok(peak >= rss, 'the peak is at least the resident set read before it');

  const pageSize = one(text, 'perch_lmdb_page_size_bytes');
  const usedPages = one(text, 'perch_lmdb_used_pages');
  const mapSize = one(text, 'perch_lmdb_map_size_bytes');
  const fileBytes = one(text, 'perch_lmdb_file_bytes');
  t.ok(pageSize >= 4096 && (pageSize & (pageSize - 1)) === 0, `page size ${pageSize}`);
  t.ok(usedPages >= 4, `pages in use ${usedPages}: the meta pages and the databases`);
  t.ok(mapSize >= usedPages * pageSize, 'the map covers the pages in use');
  t.ok(fileBytes >= usedPages * pageSize, 'the file holds the pages in use');
  t.ok(one(text, 'perch_lmdb_readers') >= 1, 'readers');
});

t.test('perch status: the running server\'s memory and heaps, and the hot store', async (t) => {
  const server = await startServer();
  t.teardown(() => server.close());
  const json = await server.cli(['status', '--json']);
  t.equal(json.code, 0, json.stderr);
  const s = JSON.parse(json.stdout);
  const m = s.servers[0].memory;
  t.ok(m.resident_bytes > 10 * MIB && m.resident_bytes < 4096 * MIB, `resident ${m.resident_bytes}`);
  t.ok(m.resident_anonymous_bytes > 0 && m.resident_file_bytes > 0);
  t.ok(m.resident_peak_bytes >= m.resident_bytes);
  if (testThreads() === 1) {
    t.equal(m.heap_used_bytes.main.threads, 1);
  } else {
    t.equal(m.heap_used_bytes.supervisor.threads, 1);
    t.equal(m.heap_used_bytes.http.threads, testThreads());
  }
  for (const k of Object.keys(m.heap_used_bytes)) t.ok(m.heap_used_bytes[k].bytes > 1 * MIB, `${k} heap`);
  t.ok(s.hot_store.used_pages >= 4 && s.hot_store.page_size_bytes >= 4096);
  t.ok(s.hot_store.file_bytes >= s.hot_store.used_pages * s.hot_store.page_size_bytes);
  t.ok(s.hot_store.map_size_bytes >= s.hot_store.file_bytes || s.hot_store.map_size_bytes >= s.hot_store.used_pages * s.hot_store.page_size_bytes);

  const human = await server.cli(['status']);
  t.match(human.stdout, /^server memory\s+\d+(\.\d)? MiB resident \(\d+(\.\d)? MiB anonymous, \d+(\.\d)? MiB file-backed\), peak \d+(\.\d)? MiB$/m);
  t.match(human.stdout, testThreads() === 1 ? /^server heaps\s+(.*, )?main \d+(\.\d)? MiB/m : /^server heaps\s+supervisor \d+(\.\d)? MiB, http \d+(\.\d)? MiB/m);
  t.match(human.stdout, /^hot store\s+\d+(\.\d)? (KiB|MiB) file, \d+ pages of 4\.0 KiB in use, map \d+(\.\d)? (KiB|MiB|GiB)$/m);

  await server.stop();
  const after = JSON.parse((await runCli(['status', '--json', '--data', server.dataDir])).stdout);
  t.same(after.servers, []);
  t.ok(after.hot_store.used_pages >= 4, 'the hot store is read without a server');
});
