// @neo4j/graphql 7.6 (JS): eight basic operations through the library's own schema and Cypher,
// run against each server given, each operation's data compared with the first server's (Neo4j).
//   node basic.mjs bolt://127.0.0.1:27687 bolt://127.0.0.1:<arbor port> [--user neo4j --password pw] [--verbose]
// Setup (not in CI: needs the npm registry): see README.md, "@neo4j/graphql".
// Creates and deletes only nodes labelled GqlMovie / GqlActor.
import { Neo4jGraphQL } from "@neo4j/graphql";
import { graphql } from "graphql";
import neo4j from "neo4j-driver";

const typeDefs = `#graphql
  type GqlMovie @node {
    title: String!
    released: Int
    actors: [GqlActor!]! @relationship(type: "GQL_ACTED_IN", direction: IN)
  }
  type GqlActor @node {
    name: String!
    movies: [GqlMovie!]! @relationship(type: "GQL_ACTED_IN", direction: OUT)
  }
`;

// name, GraphQL document; each runs after the ones before it on the same (emptied) labels.
const OPERATIONS = [
  ["create", `mutation { createGqlMovies(input: [{ title: "Alpha", released: 1999 },
      { title: "Beta", released: 2003 }]) { gqlMovies { title released } } }`],
  ["read with filter and sort", `{ gqlMovies(where: { released: { gt: 1990 } },
      sort: [{ title: DESC }]) { title released } }`],
  ["nested create", `mutation { createGqlMovies(input: [{ title: "Gamma", released: 2010,
      actors: { create: [{ node: { name: "Ann" } }, { node: { name: "Bob" } }] } }]) {
      gqlMovies { title actors(sort: [{ name: ASC }]) { name } } } }`],
  ["update", `mutation { updateGqlMovies(where: { title: { eq: "Alpha" } },
      update: { released: { set: 2000 } }) { gqlMovies { title released } } }`],
  ["connect", `mutation { updateGqlMovies(where: { title: { eq: "Beta" } },
      update: { actors: [{ connect: [{ where: { node: { name: { eq: "Ann" } } } }] }] }) {
      gqlMovies { title actors { name } } } }`],
  ["traverse with relationship filter", `{ gqlActors(where: { movies: { some: {
      released: { gte: 2003 } } } }, sort: [{ name: ASC }]) {
      name movies(sort: [{ title: ASC }]) { title } } }`],
  ["connection, count and page", `{ gqlMoviesConnection(first: 2, sort: [{ title: ASC }]) {
      totalCount edges { node { title } } pageInfo { hasNextPage } } }`],
  ["delete nested", `mutation { deleteGqlMovies(where: { title: { eq: "Gamma" } },
      delete: { actors: [{ where: { node: { name: { eq: "Bob" } } } }] }) {
      nodesDeleted relationshipsDeleted } }`],
];

async function runAll(url, auth) {
  const driver = neo4j.driver(url, auth);
  const clean = "MATCH (n) WHERE n:GqlMovie OR n:GqlActor DETACH DELETE n";
  const out = [];
  try {
    await driver.executeQuery(clean);
    const schema = await new Neo4jGraphQL({ typeDefs, driver }).getSchema();
    for (const [name, source] of OPERATIONS) {
      const res = await graphql({ schema, source, contextValue: {} });
      out.push({ name, data: res.data ?? null, errors: (res.errors ?? []).map((e) => e.message) });
    }
    await driver.executeQuery(clean);
  } finally {
    await driver.close();
  }
  return out;
}

const args = process.argv.slice(2);
const opt = (flag, dflt) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : dflt);
const auth = neo4j.auth.basic(opt("--user", "neo4j"), opt("--password", "password"));
const urls = args.filter((a, i) => a.startsWith("bolt") && !["--user", "--password"].includes(args[i - 1]));
let failed = 0;
let passed = 0;
let reference = null;
for (const url of urls) {
  const results = await runAll(url, auth);
  for (const [i, r] of results.entries()) {
    const same = reference === null || JSON.stringify(r.data) === JSON.stringify(reference[i].data);
    const ok = r.errors.length === 0 && same;
    ok ? passed++ : failed++;
    const why = r.errors.length ? r.errors[0].slice(0, 200) : same ? "" : "data differs from " + urls[0];
    console.log(`${ok ? "ok  " : "FAIL"} ${url} ${r.name}${why ? ": " + why : ""}`);
    if (args.includes("--verbose")) console.log(`     ${JSON.stringify(r.data)}`);
    if (!same) console.log(`     got ${JSON.stringify(r.data)}\n     expected ${JSON.stringify(reference[i].data)}`);
  }
  reference ??= results;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
