// Starts oauth2-mock-server over https on 127.0.0.1 for interop/oauth_test.go.
// Usage: node oauth/mock-server.mjs KEY.pem CERT.pem
// Prints {"issuer": "..."} on the first line once listening, then one JSON
// line per authorization, token and revocation request it sees (parameter
// names and the values that are not secret), and stops when stdin closes.
import { OAuth2Server } from "oauth2-mock-server";

const [key, cert] = process.argv.slice(2);
const server = new OAuth2Server(key, cert);
await server.issuer.keys.generate("RS256");
await server.start(0, "127.0.0.1");
server.issuer.url = `https://127.0.0.1:${server.address().port}`;

const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");
server.service.on("beforeAuthorizeRedirect", (_redirect, req) => {
  const q = req.query ?? {};
  emit({
    event: "authorize",
    client_id: q.client_id,
    code_challenge_method: q.code_challenge_method,
    has_code_challenge: typeof q.code_challenge === "string",
    has_state: typeof q.state === "string",
    resource: q.resource,
    redirect_uri: q.redirect_uri,
  });
});
server.service.on("beforeResponse", (_resp, req) => {
  const b = req.body ?? {};
  emit({
    event: "token",
    grant_type: b.grant_type,
    has_code_verifier: typeof b.code_verifier === "string",
    resource: b.resource,
    client_id: b.client_id,
  });
});
server.service.on("beforeRevoke", () => emit({ event: "revoke" }));

emit({ issuer: server.issuer.url });
process.stdin.resume();
process.stdin.on("end", async () => {
  await server.stop();
  process.exit(0);
});
