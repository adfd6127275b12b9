// Runs graphql-http's server audit against a Boxoffice /graphql endpoint
// and prints the results as JSON: node audit.mjs URL API_KEY.
// TestGraphQLHTTPAudit reads them; it fails on any MUST or SHOULD.
import { auditServer } from 'graphql-http';

const [url, key] = process.argv.slice(2);
if (!url || !key) {
  console.error('usage: node audit.mjs URL API_KEY');
  process.exit(2);
}

// Every audit request carries the test key, as a partner's server would.
const fetchFn = (input, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('x-api-key', key);
  return fetch(input, { ...init, headers });
};

const results = await auditServer({ url, fetchFn });
const out = [];
for (const r of results) {
  let reason = r.status === 'ok' ? '' : r.reason;
  if (r.status !== 'ok' && r.response) {
    reason += ` (HTTP ${r.response.status}: ${(await r.response.text()).slice(0, 300)})`;
  }
  out.push({ id: r.id, name: r.name, status: r.status, reason });
}
process.stdout.write(JSON.stringify(out));
