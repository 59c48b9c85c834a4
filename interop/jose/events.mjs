// Mints external-event tokens with the npm jose library for
// interop/events_test.go.
//
// Input (argv[2], JSON): {issuer, resource, subject, scope, now}.
// Output (stdout, JSON): {jwks, cases: [{name, token, body, status}], race}
// where jwks is the public JWK Set of the signing keys (RS256, ES256,
// EdDSA), each case is posted in order to the event endpoint and must be
// answered with status (body "" means a well-formed event), and race is a
// good token the test posts many times at once.
import * as jose from 'jose';

const { issuer, resource, subject, scope, now } = JSON.parse(process.argv[2]);

const keys = {};
for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  const { publicKey, privateKey } = await jose.generateKeyPair(alg);
  const jwk = await jose.exportJWK(publicKey);
  Object.assign(jwk, { kid: `${alg}-events`, use: 'sig', alg });
  keys[alg] = { privateKey, jwk };
}

function claims(changes = {}) {
  const c = { iss: issuer, sub: subject, aud: resource, scope: `${scope} other`, jti: crypto.randomUUID(), iat: now - 5, exp: now + 300 };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete c[k];
    else c[k] = v;
  }
  return c;
}

async function sign(alg, { header = {}, changes = {}, key } = {}) {
  const h = { alg, typ: 'at+jwt', kid: keys[alg]?.jwk.kid, ...header };
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  return new jose.SignJWT(claims(changes)).setProtectedHeader(h).sign(key ?? keys[alg].privateKey);
}

const cases = [];
const add = (name, token, status, body = '') => cases.push({ name, token, status, body });

for (const alg of ['RS256', 'ES256', 'EdDSA']) add(`${alg} admitted`, await sign(alg), 202);
const once = await sign('ES256');
add('ES256 first use', once, 202);
add('ES256 replayed', once, 401);
add('ES256 without kid', await sign('ES256', { header: { kid: undefined } }), 202);
add('typ application/at+jwt, aud array, scp', await sign('EdDSA', {
  header: { typ: 'application/at+jwt' },
  changes: { aud: ['https://other.example', resource], scope: undefined, scp: [scope] },
}), 202);
add('expired', await sign('RS256', { changes: { exp: now - 3600 } }), 401);
add('not yet valid', await sign('ES256', { changes: { nbf: now + 3600 } }), 401);
add('audience of another grant', await sign('ES256', { changes: { aud: resource.replace(/[^/]+$/, 'other') } }), 401);
add('other issuer', await sign('ES256', { changes: { iss: `${issuer}/other` } }), 401);
add('other subject', await sign('EdDSA', { changes: { sub: 'mallory' } }), 401);
add('client_id is not the subject', await sign('EdDSA', { changes: { sub: undefined, client_id: subject } }), 401);
add('no jti', await sign('ES256', { changes: { jti: undefined } }), 401);
add('typ JWT', await sign('RS256', { header: { typ: 'JWT' } }), 401);
add('alg none', new jose.UnsecuredJWT(claims()).encode(), 401);
add('HS256 keyed with the RSA modulus', await sign('HS256', {
  header: { kid: keys.RS256.jwk.kid },
  key: new TextEncoder().encode(keys.RS256.jwk.n),
}), 401);
add('missing scope', await sign('ES256', { changes: { scope: 'other' } }), 403);
add('malformed event', await sign('ES256'), 400, '{"kind":"message","content":"no conversation"}');
// The body is checked before the token is spent (docs/reference/events.md,
// "Order of checks").
add('the same token with a good body', cases.at(-1).token, 202);

process.stdout.write(JSON.stringify({
  jwks: { keys: Object.values(keys).map((k) => k.jwk) },
  cases,
  race: await sign('ES256'),
}));
