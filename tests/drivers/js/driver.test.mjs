// Arbor with the official Neo4j JavaScript driver, over a real `arbor serve` process.
//
// The same application code a Neo4j user runs: connectivity and server info, every value type both ways
// (the driver's Integer, temporal and spatial classes), graph entities, auto-commit and explicit
// transactions, managed transactions retried on a write conflict, Neo4j error codes, summaries and
// counters, bookmarks, and streaming a large result. The binary is $ARBOR_BIN (default
// target/release/arbor from the repository root).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import neo4j from 'neo4j-driver';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = process.env.ARBOR_BIN || resolve(here, '../../../target/release/arbor');

let server;
let dataDir;
let driver;

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.unref();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function waitListening(port, proc) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`arbor serve exited with ${proc.exitCode}`);
    const up = await new Promise((ok) => {
      const c = connect(port, '127.0.0.1');
      c.on('connect', () => { c.destroy(); ok(true); });
      c.on('error', () => ok(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error('arbor serve did not start listening');
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'arbor-js-'));
  const port = await freePort();
  server = spawn(BIN, ['serve', '--data', dataDir, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitListening(port, server);
  driver = neo4j.driver(`bolt://127.0.0.1:${port}`, neo4j.auth.basic('neo4j', 'unused'));
});

after(async () => {
  if (driver) await driver.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

async function echo(value) {
  const { records } = await driver.executeQuery('RETURN $x AS x', { x: value });
  return records[0].get('x');
}

test('connectivity and server info', async () => {
  await driver.verifyConnectivity();
  const info = await driver.getServerInfo();
  assert.match(info.agent, /^Neo4j\/5\./);
  assert.ok(info.protocolVersion >= 5.0, `protocol ${info.protocolVersion}`);
});

test('integers come back as neo4j Integers, exactly, up to 64 bits', async () => {
  for (const s of ['0', '-1', '127', '-129', '2147483648', '9223372036854775807', '-9223372036854775808']) {
    const got = await echo(neo4j.int(s));
    assert.ok(neo4j.isInt(got));
    assert.equal(got.toString(), s);
  }
  const { records } = await driver.executeQuery('RETURN 1 + 2 AS n');
  assert.equal(records[0].get('n').toNumber(), 3);
});

test('floats, strings, booleans, null, bytes, lists and maps round trip', async () => {
  assert.equal(await echo(1.5), 1.5);
  assert.ok(Number.isNaN(await echo(NaN)));
  assert.equal(await echo(Infinity), Infinity);
  assert.equal(await echo('ünïcødé 🌳'), 'ünïcødé 🌳');
  assert.equal(await echo(true), true);
  assert.equal(await echo(null), null);
  const bytes = Int8Array.from([0, -1, 16, 127]);
  assert.deepEqual(Array.from(await echo(bytes)), [0, -1, 16, 127]);
  const nested = { a: [1.5, 'two', null, [true, { deep: 'er' }]], b: {} };
  assert.deepEqual(await echo(nested), nested);
  const big = Array.from({ length: 20_000 }, (_, i) => `s${i}`);
  assert.deepEqual(await echo(big), big);
});

test('temporal and spatial values round trip through the driver classes', async () => {
  const date = new neo4j.types.Date(2024, 2, 29);
  assert.equal((await echo(date)).toString(), '2024-02-29');
  const ldt = new neo4j.types.LocalDateTime(2020, 1, 2, 3, 4, 5, 6);
  assert.equal((await echo(ldt)).toString(), ldt.toString());
  const dt = new neo4j.types.DateTime(2021, 6, 7, 8, 9, 10, 0, 3600);
  const gotDt = await echo(dt);
  assert.equal(gotDt.toString(), dt.toString());
  const zoned = new neo4j.types.DateTime(2021, 6, 7, 8, 9, 10, 0, undefined, 'Europe/Stockholm');
  assert.equal((await echo(zoned)).timeZoneId, 'Europe/Stockholm');
  const dur = new neo4j.types.Duration(14, 3, 7200, 5);
  const gotDur = await echo(dur);
  assert.equal(gotDur.months.toNumber(), 14);
  assert.equal(gotDur.days.toNumber(), 3);
  assert.equal(gotDur.seconds.toNumber(), 7200);
  const { records } = await driver.executeQuery(
    "RETURN date('2015-07-21') AS d, duration('P1Y2M3DT4H') AS du, " +
      "point({x: 1.5, y: 2.5}) AS p, point({latitude: 55.6, longitude: 13.0}) AS g",
  );
  const r = records[0];
  assert.ok(neo4j.isDate(r.get('d')));
  assert.equal(r.get('d').toString(), '2015-07-21');
  assert.ok(neo4j.isDuration(r.get('du')));
  assert.ok(neo4j.isPoint(r.get('p')));
  assert.equal(r.get('p').srid.toNumber(), 7203);
  assert.equal(r.get('g').srid.toNumber(), 4326);
  assert.equal(r.get('g').y, 55.6);
});

test('nodes, relationships and paths', async () => {
  const { records } = await driver.executeQuery(
    "CREATE p = (a:JsPerson {name: 'Ada', born: 1815})-[r:KNOWS {since: 1833}]->(b:JsPerson {name: 'Charles'}) " +
      'RETURN a, r, b, p',
  );
  const rec = records[0];
  const a = rec.get('a');
  const r = rec.get('r');
  const b = rec.get('b');
  assert.ok(a instanceof neo4j.types.Node);
  assert.deepEqual(a.labels, ['JsPerson']);
  assert.equal(a.properties.name, 'Ada');
  assert.equal(a.properties.born.toNumber(), 1815);
  assert.equal(typeof a.elementId, 'string');
  assert.ok(r instanceof neo4j.types.Relationship);
  assert.equal(r.type, 'KNOWS');
  assert.equal(r.startNodeElementId, a.elementId);
  assert.equal(r.endNodeElementId, b.elementId);
  const p = rec.get('p');
  assert.ok(p instanceof neo4j.types.Path);
  assert.equal(p.length, 1);
  assert.equal(p.start.properties.name, 'Ada');
  assert.equal(p.end.properties.name, 'Charles');
  // Element ids are usable as parameters, as applications do.
  const again = await driver.executeQuery(
    'MATCH (n) WHERE elementId(n) = $id RETURN n.name AS name',
    { id: a.elementId },
  );
  assert.equal(again.records[0].get('name'), 'Ada');
});

test('summary counters and query type', async () => {
  const { summary } = await driver.executeQuery(
    'UNWIND range(1, 3) AS i CREATE (:JsCount {i: i})-[:NEXT]->(:JsCount)',
  );
  const c = summary.counters.updates();
  assert.equal(c.nodesCreated, 6);
  assert.equal(c.relationshipsCreated, 3);
  assert.equal(c.propertiesSet, 3);
  assert.equal(c.labelsAdded, 6);
  assert.equal(summary.queryType, 'w');
  assert.ok(summary.counters.containsUpdates());
  const read = await driver.executeQuery('MATCH (n:JsCount) RETURN count(n) AS c');
  assert.equal(read.summary.queryType, 'r');
  assert.equal(read.records[0].get('c').toNumber(), 6);
});

test('explicit transactions commit and roll back', async () => {
  const session = driver.session();
  try {
    const tx = session.beginTransaction();
    await tx.run("CREATE (:JsTx {k: 'rolled back'})");
    await tx.rollback();
    const tx2 = session.beginTransaction();
    await tx2.run("CREATE (:JsTx {k: 'kept'})");
    await tx2.commit();
    const res = await session.run('MATCH (n:JsTx) RETURN n.k AS k');
    assert.deepEqual(res.records.map((r) => r.get('k')), ['kept']);
  } finally {
    await session.close();
  }
});

test('errors carry Neo4j status codes and the session recovers', async () => {
  const session = driver.session();
  try {
    await assert.rejects(session.run('MATCH (n RETURN n'), (e) => {
      assert.equal(e.code, 'Neo.ClientError.Statement.SyntaxError');
      return true;
    });
    await assert.rejects(session.run('RETURN 1 / 0'), (e) => {
      assert.equal(e.code, 'Neo.ClientError.Statement.ArithmeticError');
      return true;
    });
    await assert.rejects(session.run('RETURN $missing'), (e) => {
      assert.equal(e.code, 'Neo.ClientError.Statement.ParameterMissing');
      return true;
    });
    const res = await session.run('RETURN 42 AS x');
    assert.equal(res.records[0].get('x').toNumber(), 42);
  } finally {
    await session.close();
  }
});

test('managed write transactions are retried after a conflict, so no update is lost', async () => {
  await driver.executeQuery('CREATE (:JsCounter {v: 0})');
  const workers = 4;
  const perWorker = 10;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      const session = driver.session();
      try {
        for (let i = 0; i < perWorker; i++) {
          await session.executeWrite(async (tx) => {
            const r = await tx.run('MATCH (c:JsCounter) RETURN c.v AS v');
            const v = r.records[0].get('v').toNumber();
            await tx.run('MATCH (c:JsCounter) SET c.v = $v', { v: neo4j.int(v + 1) });
          });
        }
      } finally {
        await session.close();
      }
    }),
  );
  const { records } = await driver.executeQuery('MATCH (c:JsCounter) RETURN c.v AS v');
  assert.equal(records[0].get('v').toNumber(), workers * perWorker);
});

test('bookmarks chain causal reads across sessions', async () => {
  const w = driver.session();
  await w.executeWrite((tx) => tx.run("CREATE (:JsBookmark {k: 'x'})"));
  const bookmarks = w.lastBookmarks();
  await w.close();
  assert.ok(bookmarks.length >= 1);
  const r = driver.session({ bookmarks });
  try {
    const res = await r.executeRead((tx) => tx.run('MATCH (n:JsBookmark) RETURN count(n) AS c'));
    assert.equal(res.records[0].get('c').toNumber(), 1);
  } finally {
    await r.close();
  }
});

test('a large result streams in batches (fetchSize) and arrives complete and in order', async () => {
  const session = driver.session({ fetchSize: 500 });
  try {
    let expected = 0;
    const result = session.run('UNWIND range(0, 49999) AS i RETURN i');
    for await (const record of result) {
      assert.equal(record.get('i').toNumber(), expected);
      expected += 1;
    }
    assert.equal(expected, 50_000);
  } finally {
    await session.close();
  }
});
