import t from 'tap';
import { chooseCoding } from '../../src/web/accept-encoding';

t.test('brotli when acceptable, else gzip, else the file as it is', async (t) => {
  t.equal(chooseCoding('gzip, deflate, br, zstd'), 'br', "a browser's header");
  t.equal(chooseCoding('gzip, deflate'), 'gzip');
  t.equal(chooseCoding('br'), 'br');
  t.equal(chooseCoding(''), 'identity', 'no header');
  t.equal(chooseCoding('deflate, zstd'), 'identity', 'neither offered');
  t.equal(chooseCoding('identity'), 'identity');
  t.equal(chooseCoding('x-gzip'), 'gzip', 'the old name of gzip');
  t.equal(chooseCoding(' GZIP , BR '), 'br', 'names are case-insensitive, spaces ignored');
});

t.test('qualities decide, ties go to brotli', async (t) => {
  t.equal(chooseCoding('br;q=0.5, gzip'), 'gzip', 'gzip rated higher');
  t.equal(chooseCoding('br;q=0.8, gzip;q=0.8'), 'br', 'a tie');
  t.equal(chooseCoding('br;q=0, gzip'), 'gzip', 'q=0 refuses brotli');
  t.equal(chooseCoding('br;q=0, gzip;q=0'), 'identity', 'both refused');
  t.equal(chooseCoding('gzip;q=0.5, identity'), 'identity', 'identity rated above gzip');
  t.equal(chooseCoding('gzip;q=0.5, identity;q=0.2'), 'gzip');
  t.equal(chooseCoding('br; Q=0.9 , gzip;q=1.0'), 'gzip', 'the parameter name is case-insensitive');
  t.equal(chooseCoding('br;q=2, gzip;q=0.1'), 'gzip', 'a malformed quality counts as 0');
  t.equal(chooseCoding('br;level=1'), 'br', 'other parameters are ignored');
});

t.test('* stands for every coding not named', async (t) => {
  t.equal(chooseCoding('*'), 'br');
  t.equal(chooseCoding('gzip, *;q=0'), 'gzip', 'brotli refused by *');
  t.equal(chooseCoding('br;q=0, *'), 'gzip', 'gzip through *');
  t.equal(chooseCoding('*;q=0'), 'identity');
});
