// No import cycles anywhere in the project's TypeScript, type-only imports included
// (scripts/import-cycles.js): capabilities depend on shared mechanisms, never the other way round.
import t from 'tap';
import { join } from 'node:path';

const { findCycles } = require(join(__dirname, '..', '..', '..', 'scripts', 'import-cycles.js')) as {
  findCycles(): string[][];
};

t.test('the source tree has no import cycles', async (t) => {
  const loops = findCycles();
  t.same(loops.map((l) => l.join(' -> ')), [], 'every cycle, as a loop of files');
});
