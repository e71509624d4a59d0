/**
 * Child process of the crash-durability test in `store-sqlite.test.ts`:
 * inserts runs into the store at argv[2] in batches of argv[3] forever, and
 * after each committed batch prints `committed <batch> <last seq>`.
 * The test SIGKILLs it mid-stream and checks nothing it reported is lost.
 */
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import { insertRuns, newRun } from './store-fixtures.js';

const [path, size = '200'] = process.argv.slice(2);
if (!path) throw new Error('usage: store-crash-writer.ts DB [BATCH_SIZE]');
const store = await openSqliteStore(path);
const batchSize = Number(size);
for (let batch = 0; ; batch++) {
  const runs = Array.from({ length: batchSize }, (_, i) =>
    newRun({ id: `b${batch}-r${i}`, job: `job-${i % 10}` }),
  );
  const rows = await insertRuns(store, runs);
  process.stdout.write(`committed ${batch} ${rows.at(-1)?.seq}\n`);
}
