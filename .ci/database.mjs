// CI helper: create/drop the run's database on the server, and print the closing summary line.
import fs from 'node:fs';
import pg from 'pg';

const [command, ...args] = process.argv.slice(2);

async function admin(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('select version()');
    console.log(rows[0].version);
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const quote = (name) => `"${name.replace(/"/g, '""')}"`;

if (command === 'create') {
  await admin(args[0], `create database ${quote(args[1])}`);
} else if (command === 'drop') {
  await admin(args[0], `drop database if exists ${quote(args[1])} with (force)`);
} else if (command === 'summary') {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of args) {
    const r = JSON.parse(fs.readFileSync(file, 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (failed > 0 || passed === 0) process.exit(1);
} else {
  console.error('usage: database.mjs create|drop URL NAME | summary FILE...');
  process.exit(2);
}
