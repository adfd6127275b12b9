// PostGraphile 5 serving the bench database, for `make bench-peers`
// (bench/peers.go starts it with the pinned Node.js 22 of node_modules).
//
// Environment: DATABASE_URL (the bench database), PORT (on 127.0.0.1).
//
// It is PostGraphile as its docs set it up in library mode: the Amber
// preset, grafserv on Node's own http server, one process. Changed from the
// defaults, so that both servers do the same work:
// - only the catalog tables Boxoffice's GraphQL reads are exposed (events,
//   event_dates, venues, tickets), read only: no mutations, and accounts,
//   keys, orders and the rest of the public schema stay hidden;
// - 8 PostgreSQL connections, as Boxoffice's pool (node-postgres's default
//   is 10);
// - no GraphiQL, no explain, no watch mode.
import { createServer } from "node:http";
import { postgraphile } from "postgraphile";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";

const catalogTables = new Set(["events", "event_dates", "venues", "tickets"]);

function addBehavior(tags, behavior) {
  const prev = tags.behavior;
  tags.behavior = prev == null || prev === true ? [behavior] : [...[prev].flat(), behavior];
}

// Smart tags, set while PostGraphile reads the database's catalog:
// `@behavior -*` (hidden entirely) on every table and function but the
// catalog tables, and `@behavior +orderBy` on event_dates.start_at, so that
// dates can be ordered by start as Boxoffice orders them (PostGraphile 5
// offers ordering only by indexed columns unless told otherwise).
const CatalogOnlyPlugin = {
  name: "BenchCatalogOnlyPlugin",
  version: "0.0.0",
  gather: {
    namespace: "benchCatalogOnly",
    hooks: {
      pgIntrospection_introspection(_info, { introspection }) {
        for (const c of introspection.classes) {
          if (!(c.getNamespace()?.nspname === "public" && catalogTables.has(c.relname))) {
            addBehavior(c.getTags(), "-*");
          }
        }
        for (const p of introspection.procs) {
          addBehavior(p.getTags(), "-*");
        }
        for (const a of introspection.attributes) {
          if (a.getClass()?.relname === "event_dates" && a.attname === "start_at") {
            addBehavior(a.getTags(), "+orderBy");
          }
        }
      },
    },
  },
};

const port = Number(process.env.PORT);
if (!process.env.DATABASE_URL || !Number.isInteger(port) || port <= 0) {
  console.error("server.mjs: set DATABASE_URL and PORT");
  process.exit(2);
}

const preset = {
  extends: [PostGraphileAmberPreset],
  plugins: [CatalogOnlyPlugin],
  pgServices: [
    makePgService({
      connectionString: process.env.DATABASE_URL,
      schemas: ["public"],
      poolConfig: { max: 8 },
    }),
  ],
  schema: {
    // Read only: no create/update/delete mutations.
    defaultBehavior: "-insert -update -delete",
    dontSwallowErrors: true,
  },
  grafserv: { host: "127.0.0.1", port, graphiql: false, watch: false },
  grafast: { explain: false },
};

const pgl = postgraphile(preset);
const serv = pgl.createServ(grafserv);
const server = createServer();
server.on("error", (e) => {
  console.error("server.mjs:", e);
  process.exit(1);
});
serv.addTo(server).catch((e) => {
  console.error("server.mjs: initializing grafserv failed:", e);
  process.exit(1);
});
server.listen({ host: "127.0.0.1", port }, () => {
  console.log(`PostGraphile on Node ${process.version} listening on http://127.0.0.1:${port}/graphql`);
});

// SIGTERM (how the benchmark stops it): stop accepting, release the pool, exit 0.
process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  Promise.resolve(pgl.release()).then(
    () => process.exit(0),
    (e) => {
      console.error("server.mjs: release:", e);
      process.exit(1);
    },
  );
});
