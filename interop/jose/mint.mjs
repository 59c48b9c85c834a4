// Mints access tokens with the npm jose library for interop/jose_test.go.
//
// Input (argv[2], JSON): {issuer, audience, subject, scope, now}.
// Output (stdout, JSON): {jwks, cases: [{name, token, want}]}, where jwks is
// the public JWK Set of the three signing keys (RS256, ES256, EdDSA) and want
// is "" for a token the Go verifier must accept, else the reason it must give.
import * as jose from 'jose';

const { issuer, audience, subject, scope, now } = JSON.parse(process.argv[2]);

const keys = {};
for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  const { publicKey, privateKey } = await jose.generateKeyPair(alg);
  const jwk = await jose.exportJWK(publicKey);
  Object.assign(jwk, { kid: `${alg}-key`, use: 'sig', alg });
  keys[alg] = { privateKey, jwk };
}

function claims(changes = {}) {
  const c = {
    iss: issuer,
    sub: subject,
    aud: audience,
    client_id: 'interop-client',
    scope: `${scope} other`,
    jti: crypto.randomUUID(),
    iat: now - 5,
    exp: now + 300,
  };
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete c[k];
    else c[k] = v;
  }
  return c;
}

// sign signs claims with alg's key (or key) under a header of alg, typ at+jwt
// and alg's kid, changed by header.
async function sign(alg, { header = {}, changes = {}, key, options } = {}) {
  const h = { alg, typ: 'at+jwt', kid: keys[alg]?.jwk.kid, ...header };
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  return new jose.SignJWT(claims(changes)).setProtectedHeader(h).sign(key ?? keys[alg].privateKey, options);
}

const cases = [];
const add = (name, token, want = '') => cases.push({ name, token, want });

for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  add(`${alg} good`, await sign(alg));
  add(`${alg} without kid`, await sign(alg, { header: { kid: undefined } }));
}
add('typ application/at+jwt', await sign('ES256', { header: { typ: 'application/at+jwt' } }));
add('aud array and scp', await sign('EdDSA', { changes: { aud: ['https://other.example', audience], scope: undefined, scp: [scope] } }));
add('expired', await sign('RS256', { changes: { exp: now - 3600 } }), 'expired');
add('nbf in the future', await sign('ES256', { changes: { nbf: now + 3600 } }), 'not yet valid');
add('wrong audience', await sign('EdDSA', { changes: { aud: `${audience}/other` } }), 'wrong audience');
add('wrong issuer', await sign('ES256', { changes: { iss: `${issuer}/other` } }), 'wrong issuer');
add('typ JWT', await sign('RS256', { header: { typ: 'JWT' } }), 'wrong type');
add('scope missing', await sign('ES256', { changes: { scope: 'other' } }), 'missing scope');
add('subject not allowed', await sign('EdDSA', { changes: { sub: 'mallory' } }), 'principal not allowed');
add('exp missing', await sign('ES256', { changes: { exp: undefined } }), 'malformed');
add('jti missing', await sign('ES256', { changes: { jti: undefined } }), 'malformed');
add('alg none', new jose.UnsecuredJWT(claims()).encode(), 'unsupported algorithm');
add('HS256 keyed with the RSA modulus', await sign('HS256', {
  header: { kid: keys.RS256.jwk.kid },
  key: new TextEncoder().encode(keys.RS256.jwk.n),
}), 'unsupported algorithm');
add('alg Ed25519 (fully specified)', await sign('Ed25519', {
  header: { kid: keys.EdDSA.jwk.kid },
  key: keys.EdDSA.privateKey,
}), 'unsupported algorithm');
{
  const ps = await jose.generateKeyPair('PS256');
  add('PS256', await sign('PS256', { header: { kid: keys.RS256.jwk.kid }, key: ps.privateKey }), 'unsupported algorithm');
}
add('ES256 under the RSA kid', await sign('ES256', { header: { kid: keys.RS256.jwk.kid } }), 'unknown key');
{
  const other = await jose.generateKeyPair('ES256');
  add('unpublished key', await sign('ES256', { header: { kid: 'unpublished' }, key: other.privateKey }), 'unknown key');
  add('other key under a published kid', await sign('ES256', { key: other.privateKey }), 'bad signature');
  const embedded = await jose.exportJWK(other.publicKey);
  add('embedded jwk', await sign('ES256', { header: { jwk: embedded }, key: other.privateKey }), 'malformed');
}
add('crit', await sign('EdDSA', { header: { crit: ['urn:example:x'], 'urn:example:x': 1 }, options: { crit: { 'urn:example:x': true } } }), 'malformed');
{
  const good = await sign('RS256');
  const [h, , s] = good.split('.');
  const forged = jose.base64url.encode(JSON.stringify(claims({ sub: subject, scope: `${scope} admin` })));
  add('payload replaced', `${h}.${forged}.${s}`, 'bad signature');
}

process.stdout.write(JSON.stringify({
  jwks: { keys: Object.values(keys).map((k) => k.jwk) },
  cases,
}));
